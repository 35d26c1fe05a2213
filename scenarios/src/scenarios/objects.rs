//! The objects scenarios start from, as a user would apply them: the GitHub config secret, an
//! AutoscalingRunnerSet, legacy Runners.

use arc_controller::scaleset::resource_builder::ResourceBuilder;
use serde_json::{Value, json};

/// Namespace of the runner sets and runners.
pub const RUNNER_NAMESPACE: &str = "arc-runners";
/// Namespace of the controller and its listeners.
pub const CONTROLLER_NAMESPACE: &str = "arc-systems";
/// The GitHub config URL every scenario uses.
pub const CONFIG_URL: &str = "https://github.com/arcsim/app";
/// The GitHub config secret.
pub const CONFIG_SECRET: &str = "github-config";
/// The runner set's (and scale set's) name.
pub const RUNNER_SET: &str = "arc-runner-set";

/// The GitHub config secret (a personal access token) in `namespace`.
pub fn github_secret(namespace: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": CONFIG_SECRET, "namespace": namespace},
        "stringData": {"github_token": "ghp_arcsim"}
    })
}

/// An AutoscalingRunnerSet named [`RUNNER_SET`] with `min`..`max` runners, labelled for this controller
/// build, whose runners run ARC's runner image with `restartPolicy: Never` (as ARC's chart sets it).
pub fn runner_set(min: u32, max: u32) -> Value {
    let version = ResourceBuilder::default().controller_version;
    json!({
        "apiVersion": "actions.github.com/v1alpha1",
        "kind": "AutoscalingRunnerSet",
        "metadata": {
            "name": RUNNER_SET,
            "namespace": RUNNER_NAMESPACE,
            "labels": {"app.kubernetes.io/version": version}
        },
        "spec": {
            "githubConfigUrl": CONFIG_URL,
            "githubConfigSecret": CONFIG_SECRET,
            "runnerScaleSetName": RUNNER_SET,
            "minRunners": min,
            "maxRunners": max,
            "template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{
                    "name": "runner",
                    "image": "ghcr.io/actions/actions-runner:2.330.0",
                    "command": ["/home/runner/run.sh"]
                }]
            }}
        }
    })
}

/// Namespace of the legacy controller's GitHub secret.
pub const LEGACY_SECRET_NAMESPACE: &str = "actions-runner-system";
/// Labels of the legacy runners (and of the jobs aimed at them).
pub const LEGACY_LABEL: &str = "arcsim-legacy";

/// A legacy, persistent Runner `name` for `arcsim/app` in [`RUNNER_NAMESPACE`].
pub fn legacy_runner(name: &str) -> Value {
    json!({
        "apiVersion": "actions.summerwind.dev/v1alpha1",
        "kind": "Runner",
        "metadata": {"name": name, "namespace": RUNNER_NAMESPACE},
        "spec": {
            "repository": "arcsim/app",
            "labels": [LEGACY_LABEL],
            "ephemeral": false,
            "image": "summerwind/actions-runner:latest"
        }
    })
}
