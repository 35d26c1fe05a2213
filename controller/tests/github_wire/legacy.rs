//! GitHub's REST API for self-hosted runners, as the legacy Runner controller uses it.

use arc_controller::github::wire::LegacyRunnerLabel;

use crate::github_wire::fixture::Stub;

#[tokio::test]
async fn self_hosted_runners_are_listed_with_status_busy_and_labels() {
    let stub = Stub::new(&["list-runners"]);
    let runners = stub.client().list_runners().await.unwrap();
    stub.assert_done();
    let [runner] = runners.as_slice() else { panic!("one runner: {runners:?}") };
    assert_eq!(
        (runner.id, runner.name.as_str(), runner.os.as_str()),
        (23, "example-runnerdeploy-wz4sj", "linux")
    );
    assert_eq!((runner.status.as_str(), runner.busy), ("online", false));
    let label =
        |id: i64, name: &str, kind: &str| LegacyRunnerLabel { id, name: name.into(), kind: kind.into() };
    let expected = [
        label(1, "self-hosted", "read-only"),
        label(2, "linux", "read-only"),
        label(3, "x64", "read-only"),
        label(4, "gpu", "custom"),
    ];
    assert_eq!(runner.labels, expected);
}

#[tokio::test]
async fn a_self_hosted_runner_is_deleted() {
    let stub = Stub::new(&["delete-runner"]);
    stub.client().remove_legacy_runner(23).await.unwrap();
    stub.assert_done();
}

#[tokio::test]
async fn a_busy_self_hosted_runner_is_not_deleted_and_says_so() {
    let stub = Stub::new(&["delete-runner.busy"]);
    let err = stub.client().remove_legacy_runner(23).await.unwrap_err();
    stub.assert_done();
    assert!(err.is_runner_busy(), "{err}");
    assert!(err.to_string().contains("is still running a job"), "{err}");
}
