//! Discovery documents, read by kube's own discovery client.

use kube::discovery::{Discovery, Scope};

use crate::apiserver::support::*;

#[tokio::test(start_paused = true)]
async fn kube_discovery_finds_every_served_resource() {
    let w = world();
    let version = w.client.apiserver_version().await.unwrap();
    assert_eq!(version.git_version, "v1.33.0");
    let discovery = Discovery::new(w.client.clone()).run().await.unwrap();
    let group = discovery.get("actions.github.com").expect("the ARC group");
    let mut kinds: Vec<String> = group.recommended_resources().into_iter().map(|(ar, _)| ar.plural).collect();
    kinds.sort();
    assert_eq!(
        kinds,
        ["autoscalinglisteners", "autoscalingrunnersets", "ephemeralrunners", "ephemeralrunnersets"]
    );
    let (pods, caps) = discovery
        .get("")
        .unwrap()
        .recommended_resources()
        .into_iter()
        .find(|(ar, _)| ar.plural == "pods")
        .expect("pods");
    assert_eq!(pods.kind, "Pod");
    assert_eq!(caps.scope, Scope::Namespaced);
    assert!(caps.subresources.iter().any(|(ar, _)| ar.plural == "status" || ar.plural == "pods/status"));
    assert!(discovery.get("actions.summerwind.dev").is_some());
}
