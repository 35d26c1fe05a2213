//! The kubelet's view of the pods, through the API as client-go's reflector keeps it: list every pod,
//! then watch from the list's resourceVersion; a watch that ends (server timeout, dropped connection)
//! is resumed from the last resourceVersion seen (bookmarks included); a 410 Gone or any other ERROR
//! event leads to a relist, whose differences from what was known are handed on as changes (a pod
//! missing from the list as gone, a pod whose uid changed as gone and then seen). Requests the server
//! refuses are retried after a seeded back-off. How late each change arrives is the watch's own lag,
//! set on the API server for actor `kubelet`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::Api;
use kube::api::{ListParams, WatchEvent, WatchParams};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::watched::WatchedPod;

/// A change of one pod, as the kubelet learns of it. The version is shared with the informer's own
/// map of what it knows (most versions are only looked at, not kept).
#[derive(Debug, Clone)]
pub enum PodChange {
    /// A version of the pod (added or modified: the kubelet acts on the latest version alike).
    Seen(Arc<WatchedPod>),
    /// The pod is gone from the API (its last known version).
    Gone(Arc<WatchedPod>),
}

impl PodChange {
    /// The pod's uid.
    pub fn uid(&self) -> &str {
        let (PodChange::Seen(pod) | PodChange::Gone(pod)) = self;
        pod.metadata.uid.as_deref().unwrap_or_default()
    }

    /// Whether it tells of a deletion: the pod is being deleted, or gone.
    pub fn is_deletion(&self) -> bool {
        match self {
            PodChange::Seen(pod) => pod.metadata.deletion_timestamp.is_some(),
            PodChange::Gone(_) => true,
        }
    }
}

/// How a watch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WatchEnd {
    /// The stream ended or failed: watch again from the last resourceVersion.
    Resume,
    /// The server said the resourceVersion is too old (or sent another ERROR): list again.
    Relist,
}

/// The list-and-watch loop over every pod.
pub struct PodInformer {
    api: Api<WatchedPod>,
    known: BTreeMap<String, Arc<WatchedPod>>,
    resource_version: String,
    rng: ChaCha8Rng,
}

/// `namespace/name` of a pod.
pub fn key_of(pod: &WatchedPod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or(""),
        pod.metadata.name.as_deref().unwrap_or("")
    )
}

fn uid_of(pod: &WatchedPod) -> &str {
    pod.metadata.uid.as_deref().unwrap_or("")
}

fn version_of(pod: &WatchedPod) -> &str {
    pod.metadata.resource_version.as_deref().unwrap_or("")
}

impl PodInformer {
    /// An informer over every pod `client` can see; `rng` draws back-offs and watch timeouts.
    pub fn new(client: kube::Client, rng: ChaCha8Rng) -> Self {
        PodInformer { api: Api::all(client), known: BTreeMap::new(), resource_version: String::new(), rng }
    }

    /// Lists and watches forever, handing every change to `deliver` in the order the server sent it.
    pub async fn run(mut self, mut deliver: impl FnMut(PodChange)) {
        loop {
            self.relist(&mut deliver).await;
            while self.watch(&mut deliver).await == WatchEnd::Resume {}
        }
    }

    /// Lists until the server answers, then hands on what changed since the last known state.
    async fn relist(&mut self, deliver: &mut impl FnMut(PodChange)) {
        let list = loop {
            match self.api.list(&ListParams::default()).await {
                Ok(list) => break list,
                Err(_) => self.back_off().await,
            }
        };
        self.resource_version = list.metadata.resource_version.clone().unwrap_or_default();
        let listed: BTreeMap<String, Arc<WatchedPod>> =
            list.items.into_iter().map(|p| (key_of(&p), Arc::new(p))).collect();
        let known = std::mem::take(&mut self.known);
        for (key, old) in &known {
            if listed.get(key).is_none_or(|new| uid_of(new) != uid_of(old)) {
                deliver(PodChange::Gone(old.clone()));
            }
        }
        for (key, new) in &listed {
            let unchanged = known
                .get(key)
                .is_some_and(|old| uid_of(old) == uid_of(new) && version_of(old) == version_of(new));
            if !unchanged {
                deliver(PodChange::Seen(new.clone()));
            }
        }
        self.known = listed;
    }

    /// One watch from the current resourceVersion, until it ends.
    async fn watch(&mut self, deliver: &mut impl FnMut(PodChange)) -> WatchEnd {
        // client-go picks a random timeout so that watches do not all end together.
        let params = WatchParams::default().timeout(self.rng.random_range(240..=290));
        let api = self.api.clone();
        let stream = match api.watch(&params, &self.resource_version).await {
            Ok(stream) => stream,
            Err(kube::Error::Api(status)) if status.code == 410 => return WatchEnd::Relist,
            Err(_) => {
                self.back_off().await;
                return WatchEnd::Resume;
            }
        };
        futures::pin_mut!(stream);
        while let Some(item) = stream.next().await {
            match item {
                Ok(WatchEvent::Added(pod) | WatchEvent::Modified(pod)) => {
                    self.resource_version = version_of(&pod).to_string();
                    let pod = Arc::new(pod);
                    self.known.insert(key_of(&pod), pod.clone());
                    deliver(PodChange::Seen(pod));
                }
                Ok(WatchEvent::Deleted(pod)) => {
                    self.resource_version = version_of(&pod).to_string();
                    self.known.remove(&key_of(&pod));
                    deliver(PodChange::Gone(Arc::new(pod)));
                }
                Ok(WatchEvent::Bookmark(bookmark)) => {
                    self.resource_version = bookmark.metadata.resource_version;
                }
                Ok(WatchEvent::Error(_)) => return WatchEnd::Relist,
                Err(_) => {
                    self.back_off().await;
                    return WatchEnd::Resume;
                }
            }
        }
        WatchEnd::Resume
    }

    /// Waits a seeded 0.5–1.5 s before trying again.
    async fn back_off(&mut self) {
        tokio::time::sleep(Duration::from_millis(self.rng.random_range(500..=1500))).await;
    }
}
