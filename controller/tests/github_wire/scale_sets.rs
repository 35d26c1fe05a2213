//! Runner groups and runner scale sets.

use arc_controller::github::wire::{Label, RunnerScaleSet, RunnerScaleSetStatistic, RunnerSetting};

use crate::github_wire::fixture::Stub;

/// The scale set the cases describe, as the client must decode it.
pub(super) fn arc_runner_set(group_id: i64, group_name: &str, setting: RunnerSetting) -> RunnerScaleSet {
    RunnerScaleSet {
        id: 5,
        name: "arc-runner-set".into(),
        runner_group_id: group_id,
        runner_group_name: group_name.into(),
        labels: vec![Label::system("arc-runner-set")],
        runner_setting: setting,
        created_on: Some("2026-01-01T00:00:00Z".parse().unwrap()),
        runner_jit_config_url: "https://pipelinesghubeus6.actions.githubusercontent.com/zNkWqfFt4dpDx6dR1mNjn6Hx1UzNc8PDyU3PHpxA/_apis/runtime/runnerscalesets/5/generatejitconfig".into(),
        statistics: Some(RunnerScaleSetStatistic::default()),
    }
}

fn no_updates() -> RunnerSetting {
    RunnerSetting { disable_update: true, ..RunnerSetting::default() }
}

#[tokio::test]
async fn a_runner_group_is_found_by_name() {
    let stub = Stub::via_admin(&["get-runner-group"]);
    let group = stub.client().get_runner_group_by_name("arc-runners").await.unwrap();
    stub.assert_done();
    assert_eq!((group.id, group.name.as_str(), group.size, group.is_default), (2, "arc-runners", 0, false));
}

#[tokio::test]
async fn a_scale_set_is_found_by_group_and_name() {
    let stub = Stub::via_admin(&["get-scale-set.by-name"]);
    let set = stub.client().get_runner_scale_set(2, "arc-runner-set").await.unwrap();
    stub.assert_done();
    assert_eq!(set, Some(arc_runner_set(2, "arc-runners", no_updates())));
}

#[tokio::test]
async fn a_scale_set_is_read_by_id() {
    let stub = Stub::via_admin(&["get-scale-set.by-id"]);
    let set = stub.client().get_runner_scale_set_by_id(5).await.unwrap();
    stub.assert_done();
    assert_eq!(set, arc_runner_set(2, "arc-runners", no_updates()));
}

#[tokio::test]
async fn a_scale_set_is_created_with_system_labels_and_updates_disabled() {
    let stub = Stub::via_admin(&["create-scale-set"]);
    let wanted = RunnerScaleSet {
        name: "arc-runner-set".into(),
        runner_group_id: 2,
        labels: vec![Label::system("arc-runner-set")],
        runner_setting: no_updates(),
        ..RunnerScaleSet::default()
    };
    let created = stub.client().create_runner_scale_set(&wanted).await.unwrap();
    stub.assert_done();
    assert_eq!(created, arc_runner_set(2, "arc-runners", no_updates()));
}

#[tokio::test]
async fn a_scale_set_moves_to_another_runner_group() {
    let stub = Stub::via_admin(&["update-scale-set"]);
    let change = RunnerScaleSet { runner_group_id: 3, ..RunnerScaleSet::default() };
    let updated = stub.client().update_runner_scale_set(5, &change).await.unwrap();
    stub.assert_done();
    assert_eq!(updated, arc_runner_set(3, "arc-runners-gpu", RunnerSetting::default()));
}

#[tokio::test]
async fn a_scale_set_is_deleted() {
    let stub = Stub::via_admin(&["delete-scale-set"]);
    stub.client().delete_runner_scale_set(5).await.unwrap();
    stub.assert_done();
}
