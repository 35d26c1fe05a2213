//! Registrations at GitHub: none orphaned once the world has settled, none outliving the
//! EphemeralRunner it was made for (the registration finalizer's promise), and one JIT registration
//! per EphemeralRunner (per incarnation: `generateName` may hand a later runner a name an earlier one
//! had).

use std::collections::BTreeMap;

use arc_sim::apiserver::Committed;
use arc_sim::apiserver::EventType;
use arc_sim::github::EventKind;
use arc_sim::github::GitHubEvent;
use arc_sim::record::Interest;
use arc_sim::world::RunRecord;

use super::Oracle;
use super::view::{key_of, runner_id, str_at, uid_of};
use crate::verdict::Violation;

/// Once the world has settled, every runner still registered at GitHub belongs to a live
/// EphemeralRunner (by `status.runnerId`) or legacy Runner (by name).
pub struct NoOrphanRegistration;

impl Oracle for NoOrphanRegistration {
    fn name(&self) -> &'static str {
        "no-orphan-registration"
    }

    fn describe(&self) -> &'static str {
        "after settling, no runner is registered at GitHub without an EphemeralRunner or Runner"
    }

    fn needs(&self) -> Interest {
        Interest::of_resources::<Committed>(&["ephemeralrunners"]).and::<GitHubEvent>()
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let Some(at_ms) = run.settled_at_ms else { return Vec::new() };
        let er_ids: Vec<i64> = run.objects_of("ephemeralrunners").iter().map(runner_id).collect();
        let legacy_names: Vec<&str> =
            run.objects_of("runners").iter().filter_map(|r| str_at(r, "/metadata/name")).collect();
        run.runners
            .iter()
            .filter(|r| !r.is_removed())
            .filter(|r| match r.scale_set_id {
                Some(_) => !er_ids.contains(&r.id),
                None => !legacy_names.contains(&r.name.as_str()),
            })
            .map(|r| Violation {
                oracle: self.name(),
                at_ms,
                objects: vec![format!("runner {} ({})", r.id, r.name)],
                message: format!(
                    "runner is still registered ({:?}) but nothing in the cluster owns it",
                    r.state
                ),
            })
            .collect()
    }
}

/// An EphemeralRunner is gone from the API server only after every runner registered for it (by
/// name, this incarnation) was removed at GitHub: RemoveRunner, its own deregistration after a job,
/// or the lost-runner timeout. This is what the registration finalizer is for; a runner deleted while
/// it lacks that finalizer (ARC HEAD's finalizer short circuit, #4580) goes without RemoveRunner and
/// leaves its registration behind.
pub struct RegistrationRemovedBeforeRunnerGone;

impl Oracle for RegistrationRemovedBeforeRunnerGone {
    fn name(&self) -> &'static str {
        "registration-removed-before-runner-gone"
    }

    fn describe(&self) -> &'static str {
        "an EphemeralRunner is gone only after every runner registered for it was removed at GitHub"
    }

    fn needs(&self) -> Interest {
        Interest::of_resources::<Committed>(&["ephemeralrunners"]).and::<GitHubEvent>()
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let created = creations_by_name(run);
        let removed = removals(run);
        let mut out = Vec::new();
        for (gone_ms, change) in run.changes_of("ephemeralrunners").filter(|(_, c)| c.kind == EventType::Deleted) {
            let Some(name) = str_at(&change.object, "/metadata/name") else { continue };
            let uid = uid_of(&change.object);
            for (registered_ms, runner) in registrations_of(run, &created, name, uid) {
                if removed.get(&runner).is_some_and(|at| *at <= gone_ms) {
                    continue;
                }
                out.push(Violation {
                    oracle: self.name(),
                    at_ms: gone_ms,
                    objects: vec![format!("ephemeralrunner {}", key_of(&change.object)), format!("runner {runner}")],
                    message: format!(
                        "the runner was gone at {gone_ms} ms, but runner {runner} registered for it at \
                         {registered_ms} ms was never removed before"
                    ),
                });
            }
        }
        out
    }
}

/// The JIT registrations (sim ms, runner id) made under `name` while the incarnation `uid` was the
/// runner of that name.
fn registrations_of(
    run: &RunRecord,
    created: &BTreeMap<&str, Vec<(u64, String)>>,
    name: &str,
    uid: &str,
) -> Vec<(u64, i64)> {
    let incarnation_at =
        |ms: u64| created.get(name).and_then(|c| c.iter().rev().find(|(at, _)| *at <= ms)).map(|(_, u)| u.as_str());
    run.github_events()
        .filter_map(|e| match &e.kind {
            EventKind::RunnerRegistered { runner_id, name: n, scale_set_id: Some(_) }
                if n == name && incarnation_at(e.at_ms) == Some(uid) =>
            {
                Some((e.at_ms, *runner_id))
            }
            _ => None,
        })
        .collect()
}

/// When each runner was removed at GitHub (the first time).
fn removals(run: &RunRecord) -> BTreeMap<i64, u64> {
    let mut out = BTreeMap::new();
    for e in run.github_events() {
        if let EventKind::RunnerRemoved { runner_id, .. } = e.kind {
            out.entry(runner_id).or_insert(e.at_ms);
        }
    }
    out
}

/// Each runner name is registered through a JIT config at most once: the JIT secret is read from the
/// API server, so a stale cache never causes a second registration (§8.1 (c)).
pub struct JitConfigOncePerRunner;

impl Oracle for JitConfigOncePerRunner {
    fn name(&self) -> &'static str {
        "jit-config-once-per-runner"
    }

    fn describe(&self) -> &'static str {
        "GenerateJitRunnerConfig registers each EphemeralRunner once"
    }

    fn needs(&self) -> Interest {
        Interest::of_resources::<Committed>(&["ephemeralrunners"]).and::<GitHubEvent>()
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let created = creations_by_name(run);
        let mut seen: BTreeMap<(&str, &str), (u64, i64)> = BTreeMap::new();
        let mut out = Vec::new();
        for event in run.github_events() {
            let EventKind::RunnerRegistered { runner_id, name, scale_set_id: Some(_) } = &event.kind else {
                continue;
            };
            let incarnation = created
                .get(name.as_str())
                .and_then(|c| c.iter().rev().find(|(ms, _)| *ms <= event.at_ms))
                .map_or("", |(_, uid)| uid.as_str());
            if let Some((first_ms, first_id)) = seen.insert((name, incarnation), (event.at_ms, *runner_id)) {
                out.push(Violation {
                    oracle: self.name(),
                    at_ms: event.at_ms,
                    objects: vec![
                        format!("runner name {name}"),
                        format!("runners {first_id} and {runner_id}"),
                    ],
                    message: format!(
                        "registered again at {} ms after a first registration at {first_ms} ms",
                        event.at_ms
                    ),
                });
            }
        }
        out
    }
}

/// Per EphemeralRunner name (without namespace: GitHub knows runners by name), the sim ms and uid of
/// each object created with it, in order.
fn creations_by_name(run: &RunRecord) -> BTreeMap<&str, Vec<(u64, String)>> {
    let mut out: BTreeMap<&str, Vec<(u64, String)>> = BTreeMap::new();
    for (ms, change) in run.changes_of("ephemeralrunners").filter(|(_, c)| c.kind == EventType::Added) {
        if let Some(name) = str_at(&change.object, "/metadata/name") {
            out.entry(name).or_default().push((ms, uid_of(&change.object).to_string()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arc_sim::Seed;
    use arc_sim::apiserver::store::StoreKey;
    use arc_sim::apiserver::{Change, Committed, EventType};
    use arc_sim::clock::SimClock;
    use arc_sim::github::{EventKind, GitHubEvent, RemovalReason};
    use arc_sim::record::{Event, Observed};
    use arc_sim::trace::{Trace, TraceMode};
    use arc_sim::world::RunRecord;
    use serde_json::json;

    use super::*;

    /// A record holding `events`, stamped with their sim ms, in order.
    fn record(events: Vec<(u64, Arc<dyn Observed>)>) -> RunRecord {
        let events = events
            .into_iter()
            .enumerate()
            .map(|(seq, (at_ms, body))| Event { seq: seq as u64, at_ms, body })
            .collect();
        RunRecord {
            seed: Seed(1),
            plug: "scale-set",
            settled_at_ms: None,
            end_ms: 10_000,
            workload_end_ms: 0,
            trace: Trace::new(SimClock::start(), TraceMode::HashOnly),
            events,
            api_requests: Default::default(),
            jobs: Vec::new(),
            runners: Vec::new(),
            metrics: Default::default(),
            listener_metrics: Default::default(),
            objects: Default::default(),
            submitted_jobs: Vec::new(),
            controller_restarts: 0,
            restarts_mid_reconcile: 0,
        }
    }

    fn runner_change(kind: EventType, rv: u64) -> Arc<dyn Observed> {
        let object = json!({"metadata": {"name": "arc-runner-x", "namespace": "ns", "uid": "uid-1"}});
        let key = StoreKey { resource: 0, namespace: "ns".into(), name: "arc-runner-x".into() };
        let change = Change { rv, kind, key, object: Arc::new(object), old: None };
        Arc::new(Committed { resource: "ephemeralrunners".into(), change: Arc::new(change) })
    }

    fn github(at_ms: u64, kind: EventKind) -> Arc<dyn Observed> {
        Arc::new(GitHubEvent { at_ms, kind })
    }

    fn registered(at_ms: u64) -> (u64, Arc<dyn Observed>) {
        let kind = EventKind::RunnerRegistered { runner_id: 7, name: "arc-runner-x".into(), scale_set_id: Some(1) };
        (at_ms, github(at_ms, kind))
    }

    fn removed(at_ms: u64) -> (u64, Arc<dyn Observed>) {
        (at_ms, github(at_ms, EventKind::RunnerRemoved { runner_id: 7, reason: RemovalReason::Removed }))
    }

    #[tokio::test(start_paused = true)]
    async fn a_runner_gone_after_its_registration_was_removed_is_clean() {
        let run = record(vec![
            (100, runner_change(EventType::Added, 1)),
            registered(200),
            removed(900),
            (1_000, runner_change(EventType::Deleted, 5)),
        ]);
        assert_eq!(RegistrationRemovedBeforeRunnerGone.check(&run), Vec::new());
    }

    #[tokio::test(start_paused = true)]
    async fn a_runner_gone_while_its_registration_stays_is_a_violation() {
        let run = record(vec![
            (100, runner_change(EventType::Added, 1)),
            registered(200),
            (1_000, runner_change(EventType::Deleted, 5)),
            removed(5_000),
        ]);
        let violations = RegistrationRemovedBeforeRunnerGone.check(&run);
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert_eq!(violations[0].at_ms, 1_000);
        assert_eq!(violations[0].objects, ["ephemeralrunner ns/arc-runner-x", "runner 7"]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_registration_of_another_incarnation_of_the_name_does_not_count() {
        let run = record(vec![registered(50), (100, runner_change(EventType::Added, 1)), (1_000, runner_change(EventType::Deleted, 5))]);
        assert_eq!(RegistrationRemovedBeforeRunnerGone.check(&run), Vec::new());
    }
}
