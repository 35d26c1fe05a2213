//! The kubelet's writes through the API, all guarded by the pod's uid (so a write can never land on a
//! new pod that reuses the name): status patches (`pods/status`), the scheduler's binding of
//! `spec.nodeName`, and the grace-0 delete that ends a pod's termination. Each is retried while the
//! server refuses for the moment (5xx, 429), once a second, as a kubelet's status manager keeps
//! syncing until it succeeds; other answers end it. Only an answer's status code is read, not the
//! pod it carries: the kubelet learns the pod's new state from its watch, as the real one does. In debug
//! builds every status it writes is checked against the ones before it. A pod on a node that can be
//! lost ([`super::node_loss`]) has a status manager of its own: while the node is cut off its writes
//! wait in order (a status only the latest), and once it is back they go, or, when none waited, the
//! latest status again (the kubelet's status manager syncs what the API no longer matches).

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube::api::{DeleteParams, Patch, PatchParams, Preconditions};
use kube::core::Request;
use serde_json::{Value, json};

use super::node_link::NodeLink;
use crate::compact_json;

/// The pod's writer: where its writes go, what it has written, and, on a node that can be lost,
/// the writes waiting for the node to come back.
pub struct PodWrites {
    target: Target,
    written: Mutex<Written>,
    held: Option<Held>,
}

/// Where a pod's writes go: its client, the pods' path, the pod's name and uid, and the request line
/// and headers of its status writes (made once by kube's builder).
#[derive(Clone)]
struct Target {
    client: kube::Client,
    pods: Request,
    name: String,
    uid: String,
    status_head: StatusHead,
}

/// The request line and headers of a pod's status writes, made once by kube's builder: each write
/// differs only in its body.
#[derive(Clone)]
struct StatusHead {
    uri: http::Uri,
    headers: http::HeaderMap,
}

impl StatusHead {
    fn of(pods: &Request, name: &str) -> Self {
        let request = pods.patch_subresource("status", name, &PatchParams::default(), &Patch::Merge(()));
        let head = request.expect("a merge patch request builds").into_parts().0;
        StatusHead { uri: head.uri, headers: head.headers }
    }

    /// The status write carrying `body`.
    fn request(&self, body: Vec<u8>) -> http::Request<Vec<u8>> {
        let mut request = http::Request::new(body);
        *request.method_mut() = http::Method::PATCH;
        *request.uri_mut() = self.uri.clone();
        *request.headers_mut() = self.headers.clone();
        request
    }
}

/// A write waiting for the node to come back.
#[derive(Debug, Clone, PartialEq)]
enum Waiting {
    Status(Value),
    Remove,
}

/// The writes of a pod on the node that can be lost.
struct Held {
    link: Arc<NodeLink>,
    outbox: Arc<Mutex<Outbox>>,
}

/// Writes waiting, whether the status manager is sending them, and the latest status written.
#[derive(Default)]
struct Outbox {
    queue: VecDeque<Waiting>,
    flushing: bool,
    latest: Option<Value>,
}

impl Outbox {
    /// Queues `write`; a status replaces a status queued just before it (only the latest is sent).
    fn push(&mut self, write: Waiting) {
        if matches!((&write, self.queue.back()), (Waiting::Status(_), Some(Waiting::Status(_)))) {
            self.queue.pop_back();
        }
        self.queue.push_back(write);
        self.flushing = true;
    }

    /// The next write to send once the node is back; `None` (and no longer flushing) when done.
    fn next(&mut self) -> Option<Waiting> {
        let next = self.queue.pop_front();
        self.flushing = next.is_some();
        next
    }
}

impl Held {
    /// Queues `write` when the node is cut off or earlier writes still wait; true when queued.
    fn hold(&self, write: &Waiting) -> bool {
        let mut outbox = self.outbox.lock().expect("outbox");
        if let Waiting::Status(status) = write {
            outbox.latest = Some(status.clone());
        }
        if !self.link.is_lost() && !outbox.flushing {
            return false;
        }
        outbox.push(write.clone());
        true
    }
}

/// The pod's status manager: each time the node comes back, it sends what waited, or the latest
/// status again when nothing did.
async fn resync(link: Arc<NodeLink>, target: Target, outbox: Arc<Mutex<Outbox>>) {
    loop {
        link.cut().await;
        link.up().await;
        {
            let mut outbox = outbox.lock().expect("outbox");
            if outbox.queue.is_empty()
                && let Some(latest) = outbox.latest.clone()
            {
                outbox.push(Waiting::Status(latest));
            }
        }
        while !link.is_lost() {
            let Some(write) = outbox.lock().expect("outbox").next() else { break };
            match write {
                Waiting::Status(status) => target.status(&status).await,
                Waiting::Remove => target.remove().await,
            };
        }
    }
}

/// A status write's body, `{"metadata":{"uid":…},"status":…}`: the pod's uid, which the write must
/// match, and the status, written as compact JSON straight from what it borrows.
fn status_patch(uid: &str, status: &Value) -> Vec<u8> {
    let mut body = Vec::with_capacity(1024);
    body.extend_from_slice(br#"{"metadata":{"uid":"#);
    compact_json::write_str(&mut body, uid);
    body.extend_from_slice(br#"},"status":"#);
    compact_json::write_value(&mut body, status);
    body.push(b'}');
    body
}

impl Target {
    fn new(client: kube::Client, namespace: &str, name: &str, uid: &str) -> Self {
        let pods = Request::new(format!("/api/v1/namespaces/{namespace}/pods"));
        let status_head = StatusHead::of(&pods, name);
        Target { client, pods, name: name.to_string(), uid: uid.to_string(), status_head }
    }

    /// A merge patch of `pods/status`: kube's request line and headers, with the body as written (kube
    /// would copy it through serde_json, after a parse to check it, for the same bytes).
    async fn status(&self, status: &Value) -> bool {
        self.send(Ok(self.status_head.request(status_patch(&self.uid, status)))).await
    }

    async fn remove(&self) -> bool {
        let pre = Preconditions { uid: Some(self.uid.clone()), resource_version: None };
        let params = DeleteParams::default().grace_period(0).preconditions(pre);
        self.send(self.pods.delete(&self.name, &params)).await
    }

    /// Sends `request` until it is answered for good, retried as [`retrying`] retries; true when the
    /// server accepted it. Only the answer's status code is read.
    async fn send(&self, request: Result<http::Request<Vec<u8>>, kube::core::request::Error>) -> bool {
        let Ok(request) = request else { return false };
        // A refusal's status code; `None`: no answer at all.
        let attempt = || async {
            let answer = self.client.send(request.clone().map(kube::client::Body::from)).await;
            match answer.map(|answer| answer.status()) {
                // As kube's client tells an API error: a 4xx or 5xx.
                Ok(code) if !(code.is_client_error() || code.is_server_error()) => Ok(()),
                Ok(code) => Err(Some(code.as_u16())),
                Err(_) => Err(None),
            }
        };
        retry_while(attempt, |refusal: &Option<u16>| refusal.is_none_or(transient_code)).await.is_ok()
    }
}

/// What a pod's status writes have said so far: a kubelet never takes a pod back from a terminal
/// phase, and never lowers a container's restart count. Checked on every status write in debug
/// builds (a self-check of the fake, as the store checks its resourceVersions).
#[derive(Debug, Default)]
struct Written {
    phase: Option<String>,
    restarts: BTreeMap<String, i64>,
}

impl Written {
    /// Takes in `status` for pod `pod`, panicking if it breaks what was written before.
    fn check(&mut self, pod: &str, status: &Value) {
        if let Some(phase) = status.get("phase").and_then(Value::as_str) {
            let terminal = matches!(self.phase.as_deref(), Some("Succeeded" | "Failed"));
            assert!(
                !terminal || self.phase.as_deref() == Some(phase),
                "kubelet self-check: pod {pod} written {phase} after {:?}",
                self.phase
            );
            self.phase = Some(phase.to_string());
        }
        let containers = status.get("containerStatuses").and_then(Value::as_array).into_iter().flatten();
        for container in containers {
            let (Some(name), Some(count)) = (
                container.get("name").and_then(Value::as_str),
                container.get("restartCount").and_then(Value::as_i64),
            ) else {
                continue;
            };
            let before = self.restarts.insert(name.to_string(), count).unwrap_or(0);
            assert!(
                count >= before,
                "kubelet self-check: pod {pod} container {name} restarts {before} -> {count}"
            );
        }
    }
}

impl PodWrites {
    /// Writes for pod `namespace/name` with uid `uid`, through `client`.
    pub fn new(client: kube::Client, namespace: &str, name: &str, uid: &str) -> Self {
        PodWrites { target: Target::new(client, namespace, name, uid), written: Mutex::default(), held: None }
    }

    /// The same writes for a pod on the node of `link`, which can be lost: they wait while it is cut
    /// off, and its status manager starts (it runs on the run's runtime until the run ends).
    pub(crate) fn on_node(mut self, link: Arc<NodeLink>) -> Self {
        let outbox = Arc::new(Mutex::new(Outbox::default()));
        tokio::spawn(resync(link.clone(), self.target.clone(), outbox.clone()));
        self.held = Some(Held { link, outbox });
        self
    }

    /// Patches `pods/status` with `status`; true when it was written (or waits to be, on a node cut
    /// off).
    pub async fn status(&self, status: Value) -> bool {
        if cfg!(debug_assertions) {
            self.written
                .lock()
                .expect("the written record is never poisoned")
                .check(&self.target.name, &status);
        }
        if let Some(held) = &self.held
            && held.hold(&Waiting::Status(status.clone()))
        {
            return true;
        }
        self.target.status(&status).await
    }

    /// Binds the pod to `node`; true when it was bound.
    pub async fn bind(&self, node: &str) -> bool {
        let patch = json!({"metadata": {"uid": self.target.uid}, "spec": {"nodeName": node}});
        let (params, merge) = (PatchParams::default(), Patch::Merge(&patch));
        self.target.send(self.target.pods.patch(&self.target.name, &params, &merge)).await
    }

    /// The kubelet's grace-0 delete once the pod's containers have stopped; true when it was deleted
    /// (or waits to be, on a node cut off).
    pub async fn remove(&self) -> bool {
        if self.held.as_ref().is_some_and(|held| held.hold(&Waiting::Remove)) {
            return true;
        }
        self.target.remove().await
    }
}

pub(crate) async fn retrying<T, F, Fut>(call: F) -> kube::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = kube::Result<T>>,
{
    retry_while(call, transient).await
}

/// Calls `call` until it succeeds or fails for good (not `transient`), once a second, at most 600
/// retries.
async fn retry_while<T, E, F, Fut>(mut call: F, transient: impl Fn(&E) -> bool) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    let mut attempts = 0;
    loop {
        match call().await {
            Err(e) if transient(&e) && attempts < 600 => {
                attempts += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            result => return result,
        }
    }
}

/// A refusal for the moment (5xx, 429) or no answer at all (anything but an API status: a dropped
/// connection, whose write may have committed).
pub(crate) fn transient(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(status) => transient_code(status.code),
        _ => true,
    }
}

/// Whether an answer's status code is a refusal for the moment (5xx, 429).
fn transient_code(code: u16) -> bool {
    code >= 500 || code == 429
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_patch_is_the_uid_and_the_status() {
        let status = json!({"phase": "Running", "conditions": [{"type": "Ready", "message": "a \"b\"\n"}]});
        let expected = json!({"metadata": {"uid": "u"}, "status": status});
        assert_eq!(String::from_utf8(status_patch("u", &status)).unwrap(), expected.to_string());
        let raw = serde_json::value::RawValue::from_string(expected.to_string()).unwrap();
        let pods = Request::new("/api/v1/namespaces/n/pods");
        let kube =
            pods.patch_subresource("status", "p", &PatchParams::default(), &Patch::Merge(&*raw)).unwrap();
        let ours = StatusHead::of(&pods, "p").request(status_patch("u", &status));
        assert_eq!(
            (ours.method(), ours.uri(), ours.version(), ours.headers(), ours.body()),
            (kube.method(), kube.uri(), kube.version(), kube.headers(), kube.body()),
            "the request kube would send"
        );
    }

    #[test]
    fn statuses_that_keep_their_order_pass() {
        let mut written = Written::default();
        written.check("p", &json!({"phase": "Pending"}));
        written.check(
            "p",
            &json!({"phase": "Running", "containerStatuses": [{"name": "runner", "restartCount": 0}]}),
        );
        written.check("p", &json!({"containerStatuses": [{"name": "runner", "restartCount": 1}]}));
        written.check("p", &json!({"phase": "Succeeded"}));
        written.check("p", &json!({"phase": "Succeeded"}));
    }

    #[test]
    #[should_panic(expected = "written Running after Some(\"Failed\")")]
    fn a_pod_taken_back_from_a_terminal_phase_fails_the_self_check() {
        let mut written = Written::default();
        written.check("p", &json!({"phase": "Failed"}));
        written.check("p", &json!({"phase": "Running"}));
    }

    #[test]
    #[should_panic(expected = "restarts 2 -> 1")]
    fn a_restart_count_that_goes_down_fails_the_self_check() {
        let mut written = Written::default();
        written.check("p", &json!({"containerStatuses": [{"name": "runner", "restartCount": 2}]}));
        written.check("p", &json!({"containerStatuses": [{"name": "runner", "restartCount": 1}]}));
    }
}
