//! Label keys and values, and annotation keys and total size, are validated on every kind with
//! apimachinery's messages.

use kube::api::{Patch, PatchParams, PostParams};
use serde_json::json;

use crate::apiserver::support::*;

const KEY_RULE: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_RULE: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

#[tokio::test(start_paused = true)]
async fn a_bad_label_key_on_a_pod_is_422_with_apimachinerys_message() {
    let w = world();
    let mut p = pod("p");
    p.metadata.labels = Some([("bad key".to_string(), "v".to_string())].into());
    let status = status_of(w.pods().create(&PostParams::default(), &p).await);
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        status.message,
        format!("Pod \"p\" is invalid: metadata.labels: Invalid value: \"bad key\": {KEY_RULE}")
    );
    let cause = &status.details.unwrap().causes[0];
    assert_eq!((cause.reason.as_str(), cause.field.as_str()), ("FieldValueInvalid", "metadata.labels"));
}

#[tokio::test(start_paused = true)]
async fn a_bad_label_value_on_a_custom_resource_names_kind_and_group() {
    let w = world();
    let mut r = runner("r");
    r.metadata.labels = Some([("app".to_string(), "-web".to_string())].into());
    let status = status_of(w.runners().create(&PostParams::default(), &r).await);
    assert_eq!(
        status.message,
        format!(
            "EphemeralRunner.actions.github.com \"r\" is invalid: metadata.labels: Invalid value: \"-web\": {VALUE_RULE}"
        )
    );
}

#[tokio::test(start_paused = true)]
async fn a_patch_adding_a_bad_label_is_refused_and_changes_nothing() {
    let w = world();
    let created = w.runners().create(&PostParams::default(), &runner("r")).await.unwrap();
    let long = "v".repeat(64);
    let patch = Patch::Merge(json!({"metadata": {"labels": {"example.com/tier": long, "ok": "yes"}}}));
    let status = status_of(w.runners().patch("r", &PatchParams::default(), &patch).await);
    assert_eq!(status.code, 422);
    assert!(status.message.contains("metadata.labels: Invalid value: \"vvvv"), "{}", status.message);
    assert!(status.message.ends_with(": must be no more than 63 characters"), "{}", status.message);
    let stored = w.server.object("ephemeralrunners", "default", "r").unwrap();
    assert_eq!(stored["metadata"]["resourceVersion"], json!(created.metadata.resource_version.unwrap()));
}

#[tokio::test(start_paused = true)]
async fn annotation_keys_and_total_size_are_validated() {
    let w = world();
    let mut p = pod("p");
    p.metadata.annotations = Some([("Example.COM/Ok".to_string(), "x".to_string())].into());
    assert!(w.pods().create(&PostParams::default(), &p).await.is_ok(), "case does not matter in keys");
    let mut q = pod("q");
    q.metadata.annotations = Some([("a".to_string(), "x".repeat(256 * 1024))].into());
    let status = status_of(w.pods().create(&PostParams::default(), &q).await);
    assert_eq!(
        status.message,
        "Pod \"q\" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes"
    );
}
