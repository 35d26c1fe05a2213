//! Runner registration (JIT configs), lookups and removal at the Actions service.

use arc_controller::github::wire::{JitRunnerSetting, RunnerReference};

use crate::github_wire::fixture::{Case, Stub};

const RUNNER: &str = "arc-runner-set-tq2wx-runner-8k4lz";

fn reference() -> RunnerReference {
    RunnerReference { id: 12, name: RUNNER.into(), runner_scale_set_id: 5 }
}

fn setting() -> JitRunnerSetting {
    JitRunnerSetting { name: RUNNER.into(), work_folder: "_work".into() }
}

#[tokio::test]
async fn a_jit_config_registers_the_runner_and_carries_its_encoded_config() {
    let stub = Stub::via_admin(&["generate-jit-config"]);
    let jit = stub.client().generate_jit_runner_config(&setting(), 5).await.unwrap();
    stub.assert_done();
    assert_eq!(jit.runner, reference());
    let encoded = Case::load("generate-jit-config").text("/response/body/encodedJITConfig");
    assert_eq!(jit.encoded_jit_config, encoded);
}

#[tokio::test]
async fn a_taken_runner_name_is_agent_exists() {
    let stub = Stub::via_admin(&["generate-jit-config.agent-exists"]);
    let err = stub.client().generate_jit_runner_config(&setting(), 5).await.unwrap_err();
    stub.assert_done();
    assert!(err.is_agent_exists(), "{err}");
}

#[tokio::test]
async fn a_runner_is_read_by_id() {
    let stub = Stub::via_admin(&["get-runner"]);
    assert_eq!(stub.client().get_runner(12).await.unwrap(), reference());
    stub.assert_done();
}

#[tokio::test]
async fn a_runner_is_found_by_name() {
    let stub = Stub::via_admin(&["get-runner-by-name"]);
    assert_eq!(stub.client().get_runner_by_name(RUNNER).await.unwrap(), Some(reference()));
    stub.assert_done();
}

#[tokio::test]
async fn a_runner_is_removed() {
    let stub = Stub::via_admin(&["remove-runner"]);
    stub.client().remove_runner(12).await.unwrap();
    stub.assert_done();
}

#[tokio::test]
async fn a_runner_with_a_job_is_not_removed_and_says_why() {
    let stub = Stub::via_admin(&["remove-runner.job-still-running"]);
    let err = stub.client().remove_runner(12).await.unwrap_err();
    stub.assert_done();
    assert!(err.is_job_still_running(), "{err}");
    assert_eq!(err.status(), Some(400));
}
