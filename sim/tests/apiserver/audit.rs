//! The audit log: every mutating request, attributed to the actor that sent it.

use arc_sim::faults::ApiVerb;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{DeleteParams, PostParams};

use crate::apiserver::support::*;

#[tokio::test(start_paused = true)]
async fn mutating_requests_are_audited_with_their_actor() {
    let w = world();
    let kubelet: Api<Pod> = Api::namespaced(w.server.client_as("kubelet"), "default");
    let mut generated = pod("");
    generated.metadata.name = None;
    generated.metadata.generate_name = Some("g-".into());
    let created = kubelet.create(&PostParams::default(), &generated).await.unwrap();
    w.pods().get(created.metadata.name.as_deref().unwrap()).await.unwrap();
    let _ = w.pods().delete("missing", &DeleteParams::default()).await;
    let audit = w.server.audit();
    assert_eq!(audit.len(), 2, "reads are not audited: {audit:?}");
    assert_eq!((audit[0].actor.as_str(), audit[0].verb, audit[0].code), ("kubelet", ApiVerb::Create, 201));
    assert_eq!(
        Some(audit[0].name.as_str()),
        created.metadata.name.as_deref(),
        "creates record the given name"
    );
    assert_eq!((audit[1].actor.as_str(), audit[1].verb, audit[1].code), ("client", ApiVerb::Delete, 404));
    assert!(
        w.record
            .trace()
            .lines()
            .iter()
            .any(|l| l.contains("create pods default/* -> 201") && l.ends_with("by=kubelet"))
    );
}

#[tokio::test(start_paused = true)]
async fn reads_of_kept_kinds_record_who_was_handed_which_version_and_how() {
    use arc_sim::apiserver::reads::ReadVia;
    use arc_sim::record::Interest;
    use futures::StreamExt;
    use kube::api::{ListParams, WatchParams};

    let w = world();
    let reads_of_pods =
        Interest::of_resources::<arc_sim::apiserver::reads::ReadEntry>(&["pods", "no-such-kind"]);
    w.record.keep_only(reads_of_pods);
    let created = w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    let rv = rv_of(&created.metadata);
    let controller: Api<Pod> = Api::namespaced(w.server.client_as("controller"), "default");
    controller.get("a").await.unwrap();
    controller.list(&ListParams::default()).await.unwrap();
    let mut events = controller.watch(&WatchParams::default(), "0").await.unwrap().boxed();
    events.next().await.expect("the ADDED event").unwrap();
    let reads: Vec<_> =
        w.server.reads().into_iter().map(|r| (r.actor, r.resource, r.key, r.rv, r.via)).collect();
    let read = |via| ("controller".to_string(), "pods".to_string(), "default/a".to_string(), rv, via);
    assert_eq!(reads, [read(ReadVia::Get), read(ReadVia::List), read(ReadVia::Watch)]);
}
