//! Objects the tests start from: the GitHub config secret, and ARS / ERS / ER with ARC's defaults.

use k8s_openapi::api::core::v1::{PodTemplateSpec, Secret};
use serde_json::json;

use super::{Harness, RUNNER_NS};

/// GitHub config URL every fixture uses.
pub(crate) const CONFIG_URL: &str = "https://github.com/arcsim/app";
/// Name of the GitHub config secret every fixture uses.
pub(crate) const CONFIG_SECRET: &str = "github-config";

/// A runner pod template with the `runner` container ARC requires.
pub(crate) fn runner_template() -> PodTemplateSpec {
    serde_json::from_value(json!({
        "metadata": {"labels": {"app": "runner"}},
        "spec": {
            "restartPolicy": "Never",
            "containers": [{
                "name": "runner",
                "image": "ghcr.io/actions/actions-runner:2.330.0",
                "command": ["/home/runner/run.sh"]
            }]
        }
    }))
    .expect("a valid template")
}

impl Harness {
    /// Creates the GitHub config secret (a personal access token) in `namespace`.
    pub(crate) async fn github_secret(&self, namespace: &str) {
        let secret: Secret = serde_json::from_value(json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": CONFIG_SECRET, "namespace": namespace},
            "stringData": {"github_token": "ghp_arcsim"}
        }))
        .expect("a valid secret");
        self.api::<Secret>(namespace)
            .create(&Default::default(), &secret)
            .await
            .expect("the GitHub config secret is created");
    }

    /// Registers a scale set at the fake GitHub, as the ARS controller would, and returns its id.
    pub(crate) fn scale_set(&self, name: &str) -> i64 {
        self.github.create_scale_set(name, 1, &[name])
    }

    /// The controller's GitHub client for the fixtures' config (URL and secret in [`RUNNER_NS`]), as
    /// its reconcilers build it.
    pub(crate) async fn fixture_actions_client(&self) -> arc_controller::github::ActionsClient {
        let target = arc_controller::scaleset::GitHubTarget {
            url: CONFIG_URL,
            secret: CONFIG_SECRET,
            proxy: None,
            tls: None,
        };
        self.ctx.actions_client(RUNNER_NS, target).await.expect("a client")
    }

    /// The secret and the scale set the runner fixtures need, in [`RUNNER_NS`].
    pub(crate) async fn runner_prerequisites(&self, scale_set: &str) -> i64 {
        self.github_secret(RUNNER_NS).await;
        self.scale_set(scale_set)
    }
}
