//! A pod as the kubelet's informer decodes it from a list or a watch event: its identity, version,
//! deletion, node and phase, which every change is looked at for, decoded at once; the rest kept as
//! the JSON the server sent and decoded into a `Pod` only for a pod the kubelet starts or schedules.
//! Most changes the kubelet sees (its own status writes coming back, the controller's label patches)
//! need no more, and a whole typed pod per event was a third of the kubelet's cost. It is still the
//! server's answer, read through the kube client's list and watch (`kube::Api<WatchedPod>`), as a `Pod`
//! would be.

use std::borrow::Cow;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

/// One version of a pod: metadata and node decoded, the whole object kept as JSON.
#[derive(Debug, Clone)]
pub struct WatchedPod {
    /// The pod's identity, version and deletion (name, namespace, uid, resourceVersion,
    /// deletionTimestamp, deletionGracePeriodSeconds); the rest of its metadata is in [`pod`](Self::pod).
    pub metadata: ObjectMeta,
    /// `spec.nodeName`: the node it is bound to, if any.
    pub node_name: Option<String>,
    /// `status.phase`, if set.
    pub phase: Option<String>,
    /// The whole pod as the server sent it (shared through the `Arc` the informer keeps it in).
    json: Box<RawValue>,
}

impl WatchedPod {
    /// The whole pod, decoded.
    pub fn pod(&self) -> Result<Pod, serde_json::Error> {
        serde_json::from_str(self.json.get())
    }

    /// Whether the pod has ended (Succeeded or Failed).
    pub fn is_terminal(&self) -> bool {
        matches!(self.phase.as_deref(), Some("Succeeded" | "Failed"))
    }
}

/// What is decoded at once; serde skips every other field without building it.
#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    metadata: HeadMeta,
    #[serde(default)]
    spec: Option<HeadSpec>,
    #[serde(default)]
    status: Option<HeadStatus>,
}

/// The metadata fields the kubelet reads of every version (its identity, version and deletion); the
/// labels, annotations, owners and finalizers it never reads are skipped, not built.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct HeadMeta {
    name: Option<String>,
    namespace: Option<String>,
    uid: Option<String>,
    resource_version: Option<String>,
    deletion_timestamp: Option<Time>,
    deletion_grace_period_seconds: Option<i64>,
}

impl From<HeadMeta> for ObjectMeta {
    fn from(head: HeadMeta) -> Self {
        ObjectMeta {
            name: head.name,
            namespace: head.namespace,
            uid: head.uid,
            resource_version: head.resource_version,
            deletion_timestamp: head.deletion_timestamp,
            deletion_grace_period_seconds: head.deletion_grace_period_seconds,
            ..ObjectMeta::default()
        }
    }
}

#[derive(Deserialize)]
struct HeadStatus {
    #[serde(default)]
    phase: Option<String>,
}

#[derive(Deserialize)]
struct HeadSpec {
    #[serde(rename = "nodeName", default)]
    node_name: Option<String>,
}

impl<'de> Deserialize<'de> for WatchedPod {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let json: Box<RawValue> = Box::deserialize(deserializer)?;
        let head: Head = serde_json::from_str(json.get()).map_err(serde::de::Error::custom)?;
        let node_name = head.spec.and_then(|s| s.node_name);
        let phase = head.status.and_then(|s| s.phase);
        Ok(WatchedPod { metadata: head.metadata.into(), node_name, phase, json })
    }
}

impl kube::Resource for WatchedPod {
    type DynamicType = ();
    type Scope = k8s_openapi::NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("Pod")
    }
    fn group(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("")
    }
    fn version(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("v1")
    }
    fn plural(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("pods")
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_and_node_are_read_at_once_and_the_pod_on_demand() {
        let json = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"n","uid":"u",
            "resourceVersion":"7","labels":{"a":"b"},"deletionTimestamp":"2026-01-01T00:00:00Z",
            "deletionGracePeriodSeconds":30},"spec":{"nodeName":"node-1","containers":[{"name":"c","image":"i"}]},
            "status":{"phase":"Running"}}"#;
        let watched: WatchedPod = serde_json::from_str(json).unwrap();
        let pod = watched.pod().unwrap();
        let read =
            |m: &ObjectMeta| (m.name.clone(), m.namespace.clone(), m.uid.clone(), m.resource_version.clone());
        assert_eq!(read(&watched.metadata), read(&pod.metadata));
        assert_eq!(watched.metadata.deletion_timestamp, pod.metadata.deletion_timestamp);
        assert_eq!(watched.metadata.deletion_grace_period_seconds, Some(30));
        assert_eq!(watched.metadata.labels, None, "labels are left in the JSON");
        assert_eq!(watched.node_name.as_deref(), Some("node-1"));
        assert_eq!(pod, serde_json::from_str::<Pod>(json).unwrap());
    }

    #[test]
    fn a_watch_event_of_a_watched_pod_decodes_as_the_kube_client_reads_it() {
        let line =
            r#"{"type":"MODIFIED","object":{"metadata":{"name":"p","uid":"u"},"spec":{"containers":[]}}}"#;
        let event: kube::api::WatchEvent<WatchedPod> = serde_json::from_str(line).unwrap();
        let kube::api::WatchEvent::Modified(pod) = event else { panic!("{event:?}") };
        assert_eq!((pod.metadata.name.as_deref(), pod.node_name), (Some("p"), None));
    }
}
