//! The controller: two watches feeding one work queue, and a reconcile that keeps one ConfigMap per
//! Mirror.
//!
//! The watches (`kube::runtime::watcher`, each cached in a reflector store) push the key of the Mirror
//! an event concerns: a Mirror's own events, and a ConfigMap's owner. One worker takes keys in order
//! (a key queued twice runs once) and reconciles: it reads the Mirror and its ConfigMaps from the
//! caches, creates the ConfigMap if the cache shows none or brings its data up to date, and writes the
//! Mirror's status. A failed reconcile is retried after [`Config::retry_after`].
//!
//! Written without `kube::runtime::Controller` on purpose: its scheduler picks the next of several
//! waiting objects by iterating a `std` `HashSet`, whose order changes from process to process, so a
//! controller built on it does not replay byte for byte (arcsim's determinism check says so at once).
//! Everything here iterates in key order.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher::{self, Event};
use kube::{Client, Resource, ResourceExt};
use serde_json::json;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use crate::crd::Mirror;

/// The label on every ConfigMap the controller owns (its watch selects on it).
pub const MANAGED_BY: &str = "app.kubernetes.io/managed-by";
/// The label's value.
pub const CONTROLLER: &str = "mirror-controller";

/// How the controller names the ConfigMap it creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildNames {
    /// `<mirror>-mirror`: a second create of the same ConfigMap answers 409 AlreadyExists (the fix).
    Stable,
    /// `generateName: <mirror>-`: every create makes a new ConfigMap, so a pass that trusts a lagging
    /// cache makes a duplicate (the first version's bug).
    Generated,
}

/// How the controller behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// How it names the ConfigMap it creates.
    pub child_names: ChildNames,
    /// How long it waits before retrying a failed reconcile.
    pub retry_after: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config { child_names: ChildNames::Stable, retry_after: Duration::from_secs(2) }
    }
}

/// Why a reconcile failed (it is retried).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A call to the API server failed.
    #[error("kubernetes API: {0}")]
    Api(#[from] kube::Error),
}

/// A Mirror, by namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    namespace: String,
    name: String,
}

/// What the reconcile reads and writes with.
struct Ctx {
    client: Client,
    config: Config,
    mirrors: Store<Mirror>,
    children: Store<ConfigMap>,
}

/// Runs the controller on `client` until its task is dropped.
pub async fn run(client: Client, config: Config) {
    let (mirrors, mirror_writer) = reflector::store::<Mirror>();
    let (children, child_writer) = reflector::store::<ConfigMap>();
    let (queue, keys) = unbounded_channel();
    let mirror_events = reflector::reflector(
        mirror_writer,
        watcher::watcher(Api::<Mirror>::all(client.clone()), watcher::Config::default()),
    );
    let selector = watcher::Config::default().labels(&format!("{MANAGED_BY}={CONTROLLER}"));
    let child_events =
        reflector::reflector(child_writer, watcher::watcher(Api::<ConfigMap>::all(client.clone()), selector));
    tokio::spawn(feed(mirror_events, queue.clone(), |m: &Mirror| Some(key_of(m))));
    tokio::spawn(feed(child_events, queue.clone(), owner_key));
    let ctx = Ctx { client, config, mirrors, children };
    work(&ctx, keys, queue).await;
}

/// Pushes the key `key` finds for each object a watch reports; a watch error waits a second (the
/// watcher then lists again).
async fn feed<K, S>(events: S, queue: UnboundedSender<Key>, key: fn(&K) -> Option<Key>)
where
    S: Stream<Item = Result<Event<K>, watcher::Error>>,
{
    let mut events = std::pin::pin!(events);
    while let Some(event) = events.next().await {
        match event {
            Ok(Event::Apply(object) | Event::InitApply(object) | Event::Delete(object)) => {
                if let Some(key) = key(&object) {
                    let _ = queue.send(key);
                }
            }
            Ok(Event::Init | Event::InitDone) => {}
            Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
        }
    }
}

/// The worker: takes the first waiting key, reconciles it, and queues it again later if that failed.
async fn work(ctx: &Ctx, mut keys: UnboundedReceiver<Key>, queue: UnboundedSender<Key>) {
    let mut waiting = BTreeSet::new();
    loop {
        if waiting.is_empty() {
            let Some(key) = keys.recv().await else { return };
            waiting.insert(key);
        }
        while let Ok(key) = keys.try_recv() {
            waiting.insert(key);
        }
        let Some(key) = waiting.pop_first() else { continue };
        if reconcile(ctx, &key).await.is_err() {
            let (queue, retry_after) = (queue.clone(), ctx.config.retry_after);
            tokio::spawn(async move {
                tokio::time::sleep(retry_after).await;
                let _ = queue.send(key);
            });
        }
    }
}

/// Brings the Mirror `key` and its ConfigMap in line, as far as the caches show them.
async fn reconcile(ctx: &Ctx, key: &Key) -> Result<(), Error> {
    let Some(mirror) = ctx.mirrors.get(&ObjectRef::new(&key.name).within(&key.namespace)) else {
        return Ok(()); // deleted: garbage collection takes its ConfigMap
    };
    if mirror.meta().deletion_timestamp.is_some() {
        return Ok(());
    }
    let uid = mirror.uid().unwrap_or_default();
    let mut children: Vec<Arc<ConfigMap>> =
        ctx.children.state().into_iter().filter(|cm| owner_uid(cm) == Some(uid.as_str())).collect();
    children.sort_by_key(|child| child.name_any());
    let name = match children.first() {
        None => create_child(ctx, &mirror).await?,
        Some(child) => {
            if child.data.clone().unwrap_or_default() != mirror.spec.data {
                update_child(ctx, key, &child.name_any(), &mirror.spec.data).await?;
            }
            child.name_any()
        }
    };
    record_status(ctx, key, &mirror, &name).await
}

/// Creates the Mirror's ConfigMap; returns its name.
async fn create_child(ctx: &Ctx, mirror: &Mirror) -> Result<String, Error> {
    let namespace = mirror.namespace().unwrap_or_default();
    let api = Api::<ConfigMap>::namespaced(ctx.client.clone(), &namespace);
    let (name, generate_name) = match ctx.config.child_names {
        ChildNames::Stable => (Some(stable_name(mirror)), None),
        ChildNames::Generated => (None, Some(format!("{}-", mirror.name_any()))),
    };
    let child = ConfigMap {
        metadata: ObjectMeta {
            name: name.clone(),
            generate_name,
            namespace: Some(namespace),
            labels: Some(BTreeMap::from([(MANAGED_BY.to_string(), CONTROLLER.to_string())])),
            owner_references: Some(vec![owner_reference(mirror)]),
            ..ObjectMeta::default()
        },
        data: Some(mirror.spec.data.clone()),
        ..ConfigMap::default()
    };
    match api.create(&PostParams::default(), &child).await {
        Ok(created) => Ok(created.name_any()),
        Err(kube::Error::Api(status)) if status.is_already_exists() => {
            let name = name.unwrap_or_default(); // only a named create can meet AlreadyExists
            let key = Key { namespace: mirror.namespace().unwrap_or_default(), name: mirror.name_any() };
            update_child(ctx, &key, &name, &mirror.spec.data).await?;
            Ok(name)
        }
        Err(error) => Err(error.into()),
    }
}

/// Sets the data of ConfigMap `name` in the Mirror's namespace.
async fn update_child(
    ctx: &Ctx,
    key: &Key,
    name: &str,
    data: &BTreeMap<String, String>,
) -> Result<(), Error> {
    let api = Api::<ConfigMap>::namespaced(ctx.client.clone(), &key.namespace);
    let patch = Patch::Merge(json!({ "data": data }));
    api.patch(name, &PatchParams::default(), &patch).await?;
    Ok(())
}

/// Records in the Mirror's status the generation it mirrored and its ConfigMap, if that changed.
async fn record_status(ctx: &Ctx, key: &Key, mirror: &Mirror, child: &str) -> Result<(), Error> {
    let status = mirror.status.clone().unwrap_or_default();
    let generation = mirror.meta().generation;
    if status.observed_generation == generation && status.config_map.as_deref() == Some(child) {
        return Ok(());
    }
    let api = Api::<Mirror>::namespaced(ctx.client.clone(), &key.namespace);
    let patch = Patch::Merge(json!({ "status": { "observedGeneration": generation, "configMap": child } }));
    api.patch_status(&key.name, &PatchParams::default(), &patch).await?;
    Ok(())
}

/// The name of a Mirror's ConfigMap under [`ChildNames::Stable`].
pub fn stable_name(mirror: &Mirror) -> String {
    format!("{}-mirror", mirror.name_any())
}

fn owner_reference(mirror: &Mirror) -> OwnerReference {
    OwnerReference {
        api_version: Mirror::api_version(&()).into_owned(),
        kind: Mirror::kind(&()).into_owned(),
        name: mirror.name_any(),
        uid: mirror.uid().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

fn key_of(mirror: &Mirror) -> Key {
    Key { namespace: mirror.namespace().unwrap_or_default(), name: mirror.name_any() }
}

/// The uid of the Mirror that controls `child`.
fn owner_uid(child: &ConfigMap) -> Option<&str> {
    controlling_mirror(child).map(|o| o.uid.as_str())
}

/// The key of the Mirror that controls `child`.
fn owner_key(child: &ConfigMap) -> Option<Key> {
    let owner = controlling_mirror(child)?;
    Some(Key { namespace: child.namespace().unwrap_or_default(), name: owner.name.clone() })
}

/// The ownerReference that makes a Mirror `child`'s controller.
fn controlling_mirror(child: &ConfigMap) -> Option<&OwnerReference> {
    let owners = child.metadata.owner_references.as_deref()?;
    owners.iter().find(|o| o.controller == Some(true) && o.kind == "Mirror")
}
