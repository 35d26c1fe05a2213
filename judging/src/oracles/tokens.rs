//! Registration tokens (race 2, §8.2): no runner container registers with an expired token once the
//! controller has had its chance to replace the pod.
//!
//! The freshness rule of §8.2: after a token expires, either the runner's pod is replaced within one
//! reconcile plus one registration-check interval while the runner is idle, or the runner is busy and
//! the replacement is deferred. So a container that restarts and runs `config.sh` with an expired token
//! is a violation when its runner had already been idle for longer than that window since the token
//! expired (#1087 recreates the pod in that window; without it the pod keeps the stale token). Idle
//! means as the service lists it: a runner whose process died under its job stays busy until the
//! service removes it as lost, whatever became of the job. The window counts from the moment the
//! controller's own clock reached the expiry: a controller whose clock reads behind GitHub's cannot
//! act sooner (clocks per party, docs/windows.md). Over HTTP `config.sh` sees only GitHub's 404; the
//! service's own record of the refusal says whether the token had expired.

use std::collections::{BTreeMap, BTreeSet};

use arc_sim::apiserver::Committed;
use arc_sim::clock_skew::ClockSkew;
use arc_sim::github::{EventKind, GitHubEvent};
use arc_sim::kubelet::KubeletEvent;
use arc_sim::kubelet::KubeletEventKind;
use arc_sim::record::{Interest, WorldEvent};
use arc_world::RunRecord;

use super::Oracle;
use crate::view::str_at;
use crate::violation::Violation;

/// How long an idle runner may keep an expired token: a registration-check interval (1 min), its
/// jitter, a reconcile, the unregister-delete-recreate round trip and a pod start (3 min in all).
pub const FRESHNESS_WINDOW_MS: u64 = 180_000;

/// No container registers with a token that expired while its runner sat idle past the window.
pub struct NoExpiredTokenRegistration;

impl Oracle for NoExpiredTokenRegistration {
    fn name(&self) -> &'static str {
        "no-expired-token-registration"
    }

    /// Judges a record so far: each failed registration is judged on the token and busy spans before it.
    fn judges_so_far(&self) -> bool {
        true
    }

    fn describe(&self) -> &'static str {
        "no runner container registers with a token that expired while its runner sat idle past the freshness window"
    }

    fn needs(&self) -> Interest {
        Interest::of_resources::<Committed>(&["runners"])
            .and::<KubeletEvent>()
            .and::<GitHubEvent>()
            .and::<WorldEvent>()
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let expiry = token_expiry(run);
        let busy = busy_spans(run);
        let clocks = run.controller_clocks();
        let refused_expired = refused_as_expired(run);
        let mut out = Vec::new();
        for e in run.kubelet_events() {
            let KubeletEventKind::RegistrationFailed { token, reason } = &e.kind else { continue };
            if !reason.contains("expired") && !refused_expired.contains(token.as_str()) {
                continue;
            }
            let name = e.pod.rsplit('/').next().unwrap_or("");
            let expired_at = expiry.get(token.as_str()).copied().unwrap_or(0);
            let noticed = expired_at + behind_ms(&clocks, expired_at);
            let spans = busy.get(name).map(Vec::as_slice).unwrap_or(&[]);
            if let Some(idle_from) = idle_stretch(noticed, e.ms, spans, FRESHNESS_WINDOW_MS) {
                out.push(Violation {
                    oracle: self.name(),
                    at_ms: e.ms,
                    objects: vec![format!("pod {}", e.pod)],
                    message: format!(
                        "config.sh ran with a token that expired at {expired_at} ms; the runner had been idle since {idle_from} ms"
                    ),
                });
            }
        }
        out
    }
}

/// How far behind true time the controller's clock read at `at_ms` (its slowest process's, 0 if
/// none was behind): the window counts from when the controller's own clock said the token expired,
/// since a controller cannot act on an expiry its clock has not reached (docs/windows.md, "Clocks per
/// party").
fn behind_ms(clocks: &BTreeMap<String, ClockSkew>, at_ms: u64) -> u64 {
    clocks.values().map(|skew| u64::try_from(-skew.ahead_ms(at_ms)).unwrap_or(0)).max().unwrap_or(0)
}

/// The tokens GitHub refused because they had expired. Over HTTP `config.sh` sees only a 404, so
/// its failure is known to be an expiry from the service's side.
fn refused_as_expired(run: &RunRecord) -> BTreeSet<&str> {
    run.github_events()
        .filter_map(|e| match &e.kind {
            EventKind::RegistrationTokenRefused { token, expired: true } => Some(token.as_str()),
            _ => None,
        })
        .collect()
}

/// Sim ms at which each registration token (from the Runners' status) expires.
fn token_expiry(run: &RunRecord) -> BTreeMap<String, u64> {
    let epoch = run.trace.clock().epoch().as_millisecond();
    run.changes_of("runners")
        .filter_map(|(_, c)| {
            let token = str_at(&c.object, "/status/registration/token")?;
            let at: jiff::Timestamp = str_at(&c.object, "/status/registration/expiresAt")?.parse().ok()?;
            Some((token.to_string(), u64::try_from(at.as_millisecond() - epoch).unwrap_or(0)))
        })
        .collect()
}

/// Per legacy runner name: when its registrations ran jobs, `[start, end)`.
fn busy_spans(run: &RunRecord) -> BTreeMap<String, Vec<(u64, u64)>> {
    let lost_until = lost_until(run);
    let mut out: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    for job in &run.jobs {
        let Some(runner) = run.runners.iter().find(|r| Some(r.id) == job.runner_id && r.scope.is_some())
        else {
            continue;
        };
        let Some(start) = job.started_ms else { continue };
        let end = job.finished_ms.unwrap_or(u64::MAX).max(*lost_until.get(&job.request_id).unwrap_or(&0));
        out.entry(runner.name.clone()).or_default().push((start, end));
    }
    out
}

/// For each job whose runner's process died under it: when GitHub stopped listing that runner busy
/// (its removal as lost, or `u64::MAX`). The service keeps a lost runner busy until the lost-runner
/// timeout even when the job is canceled meanwhile, and the controller rightly leaves a busy runner's
/// pod alone.
fn lost_until(run: &RunRecord) -> BTreeMap<i64, u64> {
    let mut lost: BTreeMap<i64, i64> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for e in run.github_events() {
        match e.kind {
            EventKind::ProcessExited { runner_id, lost_job: Some(job) } => {
                lost.insert(runner_id, job);
                out.insert(job, u64::MAX);
            }
            EventKind::RunnerRemoved { runner_id, .. } => {
                if let Some(job) = lost.remove(&runner_id) {
                    out.insert(job, e.at_ms);
                }
            }
            _ => {}
        }
    }
    out
}

/// The start of an idle stretch of at least `window` between `from` and `to`, if there is one.
fn idle_stretch(from: u64, to: u64, busy: &[(u64, u64)], window: u64) -> Option<u64> {
    let mut idle_from = from;
    let mut spans: Vec<(u64, u64)> = busy.iter().copied().filter(|(s, e)| *e > from && *s < to).collect();
    spans.sort_unstable();
    for (start, end) in spans {
        if start.saturating_sub(idle_from) >= window {
            return Some(idle_from);
        }
        idle_from = idle_from.max(end);
    }
    (to.saturating_sub(idle_from) >= window).then_some(idle_from)
}

#[cfg(test)]
mod tests {
    use arc_sim::apiserver::EventType;
    use arc_sim::github::{JobState, RemovalReason, RunnerState};
    use arc_world::SyntheticRun;
    use serde_json::json;

    use super::*;

    #[test]
    fn the_window_waits_for_the_slowest_controller_clock_to_reach_the_expiry() {
        let mut clocks = BTreeMap::new();
        assert_eq!(behind_ms(&clocks, 1_000), 0, "true clocks");
        clocks.insert("controller".to_string(), ClockSkew { offset_ms: 5_000, drift_ppm: 0 });
        assert_eq!(behind_ms(&clocks, 1_000), 0, "a clock ahead noticed the expiry early");
        clocks.insert("controller#1".to_string(), ClockSkew { offset_ms: -30_000, drift_ppm: -100 });
        assert_eq!(behind_ms(&clocks, 10_000_000), 31_000, "30 s behind, and 1 s lost over 10,000 s");
    }
    use crate::oracles::fixtures::{NS, job, runner};

    /// When the token `tok` of legacy runner `r` expires.
    const EXPIRES_MS: u64 = 10_000;

    /// A record in which runner `r` got token `tok` (expiring at [`EXPIRES_MS`]) and its container's
    /// `config.sh` failed at `failed_ms` for `reason`.
    fn token_run(failed_ms: u64, reason: &str) -> SyntheticRun {
        // A synthetic record's trace is stamped by a clock started at the default epoch.
        let epoch = arc_sim::SimClock::start().epoch();
        let expires_at = epoch + jiff::SignedDuration::from_millis(EXPIRES_MS as i64);
        let legacy = json!({"apiVersion": "actions.summerwind.dev/v1alpha1", "kind": "Runner",
            "metadata": {"name": "r", "namespace": NS, "uid": "runner-r"},
            "status": {"registration": {"token": "tok", "expiresAt": expires_at.to_string()}}});
        let failed = KubeletEvent {
            ms: failed_ms,
            pod: format!("{NS}/r"),
            uid: "pod-r".into(),
            kind: KubeletEventKind::RegistrationFailed { token: "tok".into(), reason: reason.into() },
        };
        SyntheticRun::new().committed(1, "runners", EventType::Added, legacy).event(failed_ms, failed)
    }

    /// Job 7 ran on legacy runner `r` (id 41) over `[start, end)`.
    fn busy(run: SyntheticRun, start: u64, end: u64) -> SyntheticRun {
        let mut legacy = runner(41, "r", RunnerState::Idle);
        legacy.scope = Some("/orgs/arcsim".into());
        let mut ran = job(7, JobState::Running, Some(41));
        ran.started_ms = Some(start);
        ran.finished_ms = Some(end);
        run.runners(vec![legacy]).jobs(vec![ran])
    }

    #[test]
    fn registering_with_a_token_that_expired_while_idle_past_the_window_is_a_violation() {
        let late = EXPIRES_MS + FRESHNESS_WINDOW_MS + 1;
        let found = NoExpiredTokenRegistration.check(&token_run(late, "token expired").build());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].at_ms, late);
        assert_eq!(found[0].objects, vec![format!("pod {NS}/r")]);
        assert!(found[0].message.contains(&format!("expired at {EXPIRES_MS} ms")), "{}", found[0].message);
    }

    #[test]
    fn an_expired_token_within_the_window_or_another_failure_is_clean() {
        let soon = EXPIRES_MS + FRESHNESS_WINDOW_MS - 1;
        assert!(NoExpiredTokenRegistration.check(&token_run(soon, "token expired").build()).is_empty());
        let late = EXPIRES_MS + FRESHNESS_WINDOW_MS + 1;
        let refused = token_run(late, "runner name already taken").build();
        assert!(NoExpiredTokenRegistration.check(&refused).is_empty(), "not an expiry");
    }

    #[test]
    fn over_http_the_services_refusal_says_whether_a_404_was_an_expiry() {
        let late = EXPIRES_MS + FRESHNESS_WINDOW_MS + 1;
        let refused = |expired| GitHubEvent {
            at_ms: late - 5,
            kind: EventKind::RegistrationTokenRefused { token: "tok".into(), expired },
            by: None,
        };
        let failed = || token_run(late, "POST /actions/runner-registration: 404");
        let expired = failed().event(late - 5, refused(true)).build();
        assert_eq!(NoExpiredTokenRegistration.check(&expired).len(), 1, "expired, as the service knows");
        let unknown = failed().event(late - 5, refused(false)).build();
        assert!(NoExpiredTokenRegistration.check(&unknown).is_empty(), "a token never issued");
        assert!(NoExpiredTokenRegistration.check(&failed().build()).is_empty(), "no refusal: another 404");
    }

    #[test]
    fn a_runner_busy_with_a_job_may_keep_its_expired_token() {
        // Idle 10 s after the expiry, busy until 20 s before the failure: no idle stretch reaches the window.
        let failed_ms = EXPIRES_MS + 2 * FRESHNESS_WINDOW_MS;
        let deferred = busy(token_run(failed_ms, "token expired"), EXPIRES_MS + 10_000, failed_ms - 20_000);
        assert!(NoExpiredTokenRegistration.check(&deferred.build()).is_empty());
        let idle_after =
            busy(token_run(failed_ms, "token expired"), EXPIRES_MS + 10_000, EXPIRES_MS + 20_000);
        let found = NoExpiredTokenRegistration.check(&idle_after.build());
        assert_eq!(found.len(), 1, "idle for the window after the job ended: {found:?}");
        assert!(found[0].message.contains(&format!("idle since {} ms", EXPIRES_MS + 20_000)));
    }

    #[test]
    fn a_runner_lost_under_its_job_stays_busy_until_the_service_removes_it() {
        // The job ends (canceled) 10 s after its start, but the runner's process died under it and
        // the service lists the runner busy until it removes it as lost, 20 s before the failure.
        let failed_ms = EXPIRES_MS + 2 * FRESHNESS_WINDOW_MS;
        let (start, removed) = (EXPIRES_MS + 10_000, failed_ms - 20_000);
        let exited = GitHubEvent {
            at_ms: start + 1_000,
            kind: EventKind::ProcessExited { runner_id: 41, lost_job: Some(7) },
            by: None,
        };
        let gone = GitHubEvent {
            at_ms: removed,
            kind: EventKind::RunnerRemoved { runner_id: 41, reason: RemovalReason::Lost },
            by: None,
        };
        let run = busy(token_run(failed_ms, "token expired"), start, start + 10_000);
        let lost = run.event(start + 1_000, exited).event(removed, gone);
        assert!(NoExpiredTokenRegistration.check(&lost.build()).is_empty(), "busy as the service lists it");
        let unlisted = busy(token_run(failed_ms, "token expired"), start, start + 10_000);
        assert_eq!(NoExpiredTokenRegistration.check(&unlisted.build()).len(), 1, "a plain job end frees it");
    }

    #[test]
    fn an_idle_stretch_is_found_only_when_long_enough() {
        assert_eq!(idle_stretch(0, 100, &[], 50), Some(0));
        assert_eq!(idle_stretch(0, 100, &[(10, 90)], 50), None);
        assert_eq!(idle_stretch(0, 200, &[(10, 90)], 50), Some(90));
        assert_eq!(idle_stretch(0, 200, &[(60, 90), (120, 200)], 50), Some(0));
    }
}
