//! PUT and PUT /status: optimistic concurrency, the status split, generation.

use kube::api::PostParams;
use serde_json::json;

use crate::apiserver::support::*;

#[tokio::test(start_paused = true)]
async fn an_update_with_a_stale_resource_version_is_409_conflict() {
    let w = world();
    let created = w.runners().create(&PostParams::default(), &runner("x")).await.unwrap();
    let mut first = created.clone();
    first.data["spec"]["githubConfigUrl"] = json!("https://github.com/arcsim/other");
    w.runners().replace("x", &PostParams::default(), &first).await.unwrap();
    let mut stale = created;
    stale.data["spec"]["githubConfigUrl"] = json!("https://github.com/arcsim/third");
    let status = status_of(w.runners().replace("x", &PostParams::default(), &stale).await);
    assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        status.message,
        "Operation cannot be fulfilled on ephemeralrunners.actions.github.com \"x\": the object has been modified; please apply your changes to the latest version and try again"
    );
}

#[tokio::test(start_paused = true)]
async fn the_main_resource_ignores_status_and_status_ignores_the_rest() {
    let w = world();
    let created = w.runners().create(&PostParams::default(), &runner("x")).await.unwrap();
    let mut both = created.clone();
    both.data["status"] = json!({"phase": "Running"});
    both.data["spec"]["githubConfigUrl"] = json!("https://github.com/arcsim/changed");
    let main = w.runners().replace("x", &PostParams::default(), &both).await.unwrap();
    assert!(main.data.get("status").is_none(), "the main resource ignored status");
    assert_eq!(main.data["spec"]["githubConfigUrl"], "https://github.com/arcsim/changed");
    let mut status_write = main.clone();
    status_write.data["status"] = json!({"phase": "Running"});
    status_write.data["spec"]["githubConfigUrl"] = json!("https://github.com/arcsim/ignored");
    let after = w.runners().replace_status("x", &PostParams::default(), &status_write).await.unwrap();
    assert_eq!(after.data["status"]["phase"], "Running");
    assert_eq!(after.data["spec"]["githubConfigUrl"], "https://github.com/arcsim/changed");
}

#[tokio::test(start_paused = true)]
async fn generation_bumps_on_spec_changes_only() {
    let w = world();
    let created = w.runners().create(&PostParams::default(), &runner("x")).await.unwrap();
    let mut labelled = created.clone();
    labelled.metadata.labels = Some([("a".to_string(), "b".to_string())].into());
    let labelled = w.runners().replace("x", &PostParams::default(), &labelled).await.unwrap();
    assert_eq!(labelled.metadata.generation, Some(1));
    let mut status = labelled.clone();
    status.data["status"] = json!({"phase": "Pending"});
    let status = w.runners().replace_status("x", &PostParams::default(), &status).await.unwrap();
    assert_eq!(status.metadata.generation, Some(1));
    let mut spec = status.clone();
    spec.data["spec"]["runnerScaleSetId"] = json!(3);
    let spec = w.runners().replace("x", &PostParams::default(), &spec).await.unwrap();
    assert_eq!(spec.metadata.generation, Some(2));
}

#[tokio::test(start_paused = true)]
async fn an_update_that_changes_nothing_keeps_its_resource_version() {
    let w = world();
    let created = w.runners().create(&PostParams::default(), &runner("x")).await.unwrap();
    let same = w.runners().replace("x", &PostParams::default(), &created).await.unwrap();
    assert_eq!(same.metadata.resource_version, created.metadata.resource_version);
    assert_eq!(w.server.resource_version(), rv_of(&created.metadata));
}
