//! Race 2's windows (ARC-MODEL §8.2): legacy registration tokens expire while the pods holding them
//! live on. A window opens when a runner container starts with a token that has already expired
//! (what the token-in-hash fix exists to prevent), or when a token is replaced while its runner runs a
//! job (what recreation without unregistering turns into a lost job).

use arc_sim::json_at::At;
use std::collections::BTreeMap;

use arc_sim::kubelet::KubeletEventKind;
use arc_world::RunRecord;
use serde_json::Value;

use super::history::Commits;
use crate::view::{key_of, str_at};

/// One registration token of a legacy Runner, as its status carried it.
struct Token {
    /// The Runner's `namespace/name`.
    runner: String,
    /// The token.
    token: String,
    /// Sim ms it expires (`u64::MAX` when unknown).
    expires_ms: u64,
    /// Sim ms it was replaced by the next token (`u64::MAX` if never).
    replaced_ms: u64,
}

/// Every token the Runners' status carried, in order of first appearance.
fn token_lifetimes(run: &RunRecord) -> Vec<Token> {
    let epoch = run.trace.clock().epoch().as_millisecond();
    let mut out: Vec<Token> = Vec::new();
    for (ms, change) in run.changes_of("runners") {
        let Some(token) = str_at(&change.object, "/status/registration/token") else { continue };
        let runner = key_of(&change.object);
        if out.iter().any(|t| t.runner == runner && t.token == token) {
            continue;
        }
        if let Some(last) = out.iter_mut().rev().find(|t| t.runner == runner) {
            last.replaced_ms = ms;
        }
        let expires_ms = str_at(&change.object, "/status/registration/expiresAt")
            .and_then(|t| t.parse::<jiff::Timestamp>().ok())
            .map_or(u64::MAX, |t| u64::try_from(t.as_millisecond() - epoch).unwrap_or(0));
        out.push(Token { runner, token: token.to_string(), expires_ms, replaced_ms: u64::MAX });
    }
    out
}

/// The `RUNNER_TOKEN` a legacy runner pod's containers carry.
fn env_token(pod: &Value) -> Option<&str> {
    let containers = pod.at("/spec/containers")?.as_array()?;
    containers
        .iter()
        .flat_map(|c| c.get("env").and_then(Value::as_array).into_iter().flatten())
        .find(|e| e.get("name").and_then(Value::as_str) == Some("RUNNER_TOKEN"))?
        .get("value")?
        .as_str()
}

/// A legacy runner container started (first start or restart) holding a token that had expired.
pub fn container_started_with_expired_token(run: &RunRecord) -> u32 {
    let tokens = token_lifetimes(run);
    let expiry: BTreeMap<&str, u64> = tokens.iter().map(|t| (t.token.as_str(), t.expires_ms)).collect();
    let pods = Commits::of(run, "pods");
    let mut hits = 0;
    for event in run.kubelet_events() {
        let KubeletEventKind::ContainerStarted { .. } = event.kind else { continue };
        let Some(pod) = pods.last_before(&event.pod, event.ms) else { continue };
        let Some(token) = env_token(&pod.object) else { continue };
        hits += u32::from(expiry.get(token).is_some_and(|exp| *exp < event.ms));
    }
    hits
}

/// A legacy Runner's registration token was replaced while GitHub still held it valid: the controller
/// judged its expiry on a clock that read ahead of GitHub's. Only an expired token is replaced (or
/// one issued for another repository, which no world changes), so with true clocks the replacement
/// always comes after the expiry: 3,500 replacements in worlds without skew came 0.2–44 s after it.
/// The other direction (a clock behind) is not told apart from a late reconcile.
pub fn token_refreshed_before_expiry(run: &RunRecord) -> u32 {
    token_lifetimes(run).iter().filter(|t| t.replaced_ms < t.expires_ms && t.expires_ms != u64::MAX).count()
        as u32
}

/// A legacy Runner's token was replaced while its runner ran a job at GitHub.
pub fn token_refreshed_while_busy(run: &RunRecord) -> u32 {
    let busy: Vec<(String, u64, u64)> = run
        .jobs
        .iter()
        .filter_map(|j| {
            let runner = run.runners.iter().find(|r| Some(r.id) == j.runner_id && r.scope.is_some())?;
            Some((runner.name.clone(), j.started_ms?, j.finished_ms.unwrap_or(u64::MAX)))
        })
        .collect();
    token_lifetimes(run)
        .iter()
        .filter(|t| t.replaced_ms != u64::MAX)
        .filter(|t| {
            let name = t.runner.rsplit('/').next().unwrap_or("");
            busy.iter().any(|(n, from, to)| n == name && *from <= t.replaced_ms && t.replaced_ms < *to)
        })
        .count() as u32
}
