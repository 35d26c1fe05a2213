//! `standard-app-auth`: the standard world with the runner set's GitHub config secret holding a GitHub
//! App (`github_app_id`, `github_app_installation_id`, `github_app_private_key`, the keys ARC reads)
//! instead of a PAT. The fake GitHub knows the app's public key and verifies every app JWT's RS256
//! signature and times; REST calls must carry an installation token it issued and that has not
//! expired. Tokens are short-lived here (installation tokens 5 minutes, admin tokens 10), so the
//! controller and the listeners buy installation tokens and buy them again when they have expired; the
//! run must pass the standard oracles. Half its worlds give each party a clock of its own (`super::clocks`),
//! so the tokens' 60 s refresh margins and the JWT's times are judged across skew.

use super::clocks::draw_party_clocks;
use arc_sim::Seed;
use arc_sim::github::GitHubApp;
use serde_json::{Value, json};

use super::objects::{CONFIG_SECRET, RUNNER_NAMESPACE};
use super::standard::{scale_set_oracles, scale_set_world};
use crate::scenario::{Scenario, WorldPlan};
use crate::variant::Variant;
use arc_judging::oracles::Oracle;

/// The app's id at the fake GitHub.
pub const APP_ID: &str = "123456";
/// Its installation on the scenario's organisation.
pub const APP_INSTALLATION_ID: i64 = 987654;
/// The app's private key: the test-only key of the golden wire cases.
pub const APP_PRIVATE_KEY: &str = include_str!("../../../fixtures/github/app-private-key.pem");
/// Its public half, which the fake verifies JWTs with.
pub const APP_PUBLIC_KEY: &str = include_str!("../../../fixtures/github/app-public-key.pem");

/// The standard world on GitHub App credentials.
pub struct StandardAppAuth;

/// The GitHub config secret with the app's credentials, in `namespace`.
pub fn github_app_secret(namespace: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": CONFIG_SECRET, "namespace": namespace},
        "stringData": {
            "github_app_id": APP_ID,
            "github_app_installation_id": APP_INSTALLATION_ID.to_string(),
            "github_app_private_key": APP_PRIVATE_KEY,
        }
    })
}

/// The app as the fake GitHub knows it.
pub fn fake_app() -> GitHubApp {
    GitHubApp {
        app_id: APP_ID.into(),
        installation_ids: vec![APP_INSTALLATION_ID],
        public_key_pem: APP_PUBLIC_KEY.into(),
    }
}

impl Scenario for StandardAppAuth {
    fn name(&self) -> &'static str {
        "standard-app-auth"
    }

    fn describe(&self) -> &'static str {
        "the standard world with a GitHub App (RS256 JWT → installation token) instead of a PAT"
    }

    fn world(&self, seed: Seed, variant: Variant) -> WorldPlan {
        let mut plan = scale_set_world(seed, variant, 0, 10);
        plan.config.objects[0] = github_app_secret(RUNNER_NAMESPACE);
        plan.config.github.apps = vec![fake_app()];
        // Short-lived tokens, so that a run refreshes both: the admin token every ~9 minutes, each
        // time through a registration token that needs an installation token, which has expired.
        plan.config.github.installation_token_ttl_ms = 300_000;
        plan.config.github.admin_token_ttl_ms = 600_000;
        draw_party_clocks(seed, &mut plan, 0.5);
        plan
    }

    fn oracles(&self) -> Vec<&'static dyn Oracle> {
        scale_set_oracles()
    }
}
