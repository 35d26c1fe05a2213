//! Registrations at GitHub: none orphaned at the end of a run, none outliving the
//! EphemeralRunner it was made for (the registration finalizer's promise), and one JIT registration
//! per EphemeralRunner (per incarnation: `generateName` may hand a later runner a name an earlier one
//! had).

use std::collections::BTreeMap;

use arc_sim::apiserver::Committed;
use arc_sim::apiserver::EventType;
use arc_sim::github::EventKind;
use arc_sim::github::{GitHubEvent, Runner};
use arc_sim::record::Interest;
use arc_world::RunRecord;

use super::Oracle;
use crate::view::{key_of, runner_id, str_at, uid_of};
use crate::violation::Violation;

/// At the end of the run, settled or not, every runner still registered at GitHub belongs to an
/// EphemeralRunner (by `status.runnerId`, or by name while its id is being recorded) or a legacy Runner
/// (by name).
pub struct NoOrphanRegistration;

impl Oracle for NoOrphanRegistration {
    fn name(&self) -> &'static str {
        "no-orphan-registration"
    }

    fn describe(&self) -> &'static str {
        "at the end of the run no runner is registered at GitHub without an EphemeralRunner or Runner"
    }

    fn needs(&self) -> Interest {
        Interest::none()
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        orphan_registrations(run)
            .into_iter()
            .map(|r| Violation {
                oracle: self.name(),
                at_ms: run.end_ms,
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

    /// Judges a record so far: a runner gone before its registration was removed stays so.
    fn judges_so_far(&self) -> bool {
        true
    }

    /// #4664 (`releases.deregister_in_background`) gives this order up by design: a runner whose pod
    /// is gone or stopped goes first and its registration is removed by a background queue; the leak
    /// oracles still judge whether that removal happens.
    fn applies(&self, switches: &arc_controller::Switches) -> bool {
        !switches.releases.deregister_in_background
    }

    fn describe(&self) -> &'static str {
        "an EphemeralRunner is gone only after every runner registered for it was removed at GitHub"
    }

    fn needs(&self) -> Interest {
        Interest::of_resources::<Committed>(&["ephemeralrunners"]).and::<GitHubEvent>()
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let created = creations_by_name(run);
        let registered = jit_registrations_by_name(run);
        let removed = removals(run);
        let mut out = Vec::new();
        for (gone_ms, change) in
            run.changes_of("ephemeralrunners").filter(|(_, c)| c.kind == EventType::Deleted)
        {
            let Some(name) = str_at(&change.object, "/metadata/name") else { continue };
            let uid = uid_of(&change.object);
            for (registered_ms, runner) in registrations_of(&registered, &created, name, uid) {
                if removed.get(&runner).is_some_and(|at| *at <= gone_ms) {
                    continue;
                }
                out.push(Violation {
                    oracle: self.name(),
                    at_ms: gone_ms,
                    objects: vec![
                        format!("ephemeralrunner {}", key_of(&change.object)),
                        format!("runner {runner}"),
                    ],
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

/// Every JIT registration (sim ms, runner id), by runner name, in event order: read once a run, so
/// each deleted runner costs its own registrations, not the whole event log.
fn jit_registrations_by_name(run: &RunRecord) -> BTreeMap<&str, Vec<(u64, i64)>> {
    let mut out: BTreeMap<&str, Vec<(u64, i64)>> = BTreeMap::new();
    for event in run.github_events() {
        if let EventKind::RunnerRegistered { runner_id, name, scale_set_id: Some(_) } = &event.kind {
            out.entry(name.as_str()).or_default().push((event.at_ms, *runner_id));
        }
    }
    out
}

/// The JIT registrations (sim ms, runner id) made under `name` while the incarnation `uid` was the
/// runner of that name.
fn registrations_of(
    registered: &BTreeMap<&str, Vec<(u64, i64)>>,
    created: &BTreeMap<&str, Vec<(u64, String)>>,
    name: &str,
    uid: &str,
) -> Vec<(u64, i64)> {
    let incarnation_at = |ms: u64| {
        created.get(name).and_then(|c| c.iter().rev().find(|(at, _)| *at <= ms)).map(|(_, u)| u.as_str())
    };
    let under_name = registered.get(name).map_or(&[][..], Vec::as_slice);
    under_name.iter().filter(|(at_ms, _)| incarnation_at(*at_ms) == Some(uid)).copied().collect()
}

/// The runners registered at GitHub at the end of the run that no object left in the cluster owns.
pub fn orphan_registrations(run: &RunRecord) -> Vec<&Runner> {
    let ers = run.objects_of("ephemeralrunners");
    let er_ids: Vec<i64> = ers.iter().map(runner_id).collect();
    let er_names: Vec<&str> = ers.iter().filter_map(|r| str_at(r, "/metadata/name")).collect();
    let legacy_names: Vec<&str> =
        run.objects_of("runners").iter().filter_map(|r| str_at(r, "/metadata/name")).collect();
    run.runners
        .iter()
        .filter(|r| !r.is_removed())
        .filter(|r| match r.scale_set_id {
            Some(_) => !er_ids.contains(&r.id) && !er_names.contains(&r.name.as_str()),
            None => !legacy_names.contains(&r.name.as_str()),
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

/// Each runner name is registered through a JIT config at most once after its config was saved: the
/// JIT secret is read from the API server, so a stale cache never causes a second registration (§8.1
/// (c)). A secret stored in the second registration's own instant is the second one's. A registration
/// whose secret was never stored (its create failed) may be replaced: the
/// controller removes the runner by name on AgentExists and registers again, as ARC does.
pub struct JitConfigOncePerRunner;

impl Oracle for JitConfigOncePerRunner {
    fn name(&self) -> &'static str {
        "jit-config-once-per-runner"
    }

    /// Judges a record so far: a second registration is judged on the events before it.
    fn judges_so_far(&self) -> bool {
        true
    }

    fn describe(&self) -> &'static str {
        "GenerateJitRunnerConfig registers each EphemeralRunner once its JIT config secret is stored"
    }

    fn needs(&self) -> Interest {
        Interest::of_resources::<Committed>(&["ephemeralrunners", "secrets"]).and::<GitHubEvent>()
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let created = creations_by_name(run);
        let secrets = secrets_stored(run);
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
            let Some((first_ms, first_id)) = seen.insert((name, incarnation), (event.at_ms, *runner_id))
            else {
                continue;
            };
            let stored = secrets
                .get(name.as_str())
                // Before the second registration: a create that commits in the instant of the second
                // registration stores the second one's config (the API server's serving time ends at
                // the commit, so GitHub's answer and the commit can share a millisecond).
                .is_some_and(|at| at.iter().any(|ms| (first_ms..event.at_ms).contains(ms)));
            if stored {
                out.push(Violation {
                    oracle: self.name(),
                    at_ms: event.at_ms,
                    objects: vec![
                        format!("runner name {name}"),
                        format!("runners {first_id} and {runner_id}"),
                    ],
                    message: format!(
                        "registered again at {} ms after a first registration at {first_ms} ms whose JIT config was stored",
                        event.at_ms
                    ),
                });
            }
        }
        out
    }
}

/// Per Secret name (the JIT secret is named after its runner), the sim ms of each creation.
fn secrets_stored(run: &RunRecord) -> BTreeMap<&str, Vec<u64>> {
    let mut out: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for (ms, change) in run.changes_of("secrets").filter(|(_, c)| c.kind == EventType::Added) {
        if let Some(name) = str_at(&change.object, "/metadata/name") {
            out.entry(name).or_default().push(ms);
        }
    }
    out
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
    use arc_sim::apiserver::EventType;
    use arc_sim::github::{EventKind, GitHubEvent, RemovalReason, RunnerState};
    use arc_world::SyntheticRun;

    use super::*;
    use crate::oracles::fixtures::{er, github, removed_runner, runner};

    #[test]
    fn a_registration_nothing_owns_at_the_end_is_an_orphan_settled_or_not() {
        let owned = SyntheticRun::new()
            .objects("ephemeralrunners", vec![er("r-1", "u1", None, 5, None), er("r-2", "u2", None, 0, None)])
            .runners(vec![runner(5, "r-1", RunnerState::Idle), runner(6, "r-2", RunnerState::Offline)])
            .build();
        assert!(
            NoOrphanRegistration.check(&owned).is_empty(),
            "owned by id, and by name while the id is recorded"
        );
        let orphan = SyntheticRun::new()
            .runners(vec![runner(5, "r-1", RunnerState::Offline), removed_runner(6, "r-2")])
            .ended_at(9_000)
            .build();
        let found = NoOrphanRegistration.check(&orphan);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].at_ms, found[0].objects[0].as_str()), (9_000, "runner 5 (r-1)"));
    }

    #[test]
    fn a_second_jit_registration_of_one_runner_incarnation_is_a_violation() {
        let registered = |at, id| {
            github(
                at,
                EventKind::RunnerRegistered { runner_id: id, name: "r-1".into(), scale_set_id: Some(1) },
            )
        };
        let once = SyntheticRun::new()
            .committed(1, "ephemeralrunners", EventType::Added, er("r-1", "u1", None, 0, None))
            .event(2, registered(2, 5))
            .committed(3, "ephemeralrunners", EventType::Added, er("r-1", "u2", None, 0, None))
            .event(4, registered(4, 6))
            .build();
        assert!(JitConfigOncePerRunner.check(&once).is_empty(), "a new incarnation may register again");
        let secret = serde_json::json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "r-1", "namespace": crate::oracles::fixtures::NS}});
        let twice = SyntheticRun::new()
            .committed(1, "ephemeralrunners", EventType::Added, er("r-1", "u1", None, 0, None))
            .event(2, registered(2, 5))
            .committed(2, "secrets", EventType::Added, secret.clone())
            .event(3, registered(3, 6))
            .build();
        assert_eq!(JitConfigOncePerRunner.check(&twice).len(), 1);
        let secret_never_stored = SyntheticRun::new()
            .committed(1, "ephemeralrunners", EventType::Added, er("r-1", "u1", None, 0, None))
            .event(2, registered(2, 5))
            .event(3, registered(3, 6))
            .build();
        assert!(
            JitConfigOncePerRunner.check(&secret_never_stored).is_empty(),
            "a registration whose config was never stored may be replaced"
        );
        let secret = serde_json::json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "r-1", "namespace": crate::oracles::fixtures::NS}});
        let stored_by_the_second = SyntheticRun::new()
            .committed(1, "ephemeralrunners", EventType::Added, er("r-1", "u1", None, 0, None))
            .event(2, registered(2, 5))
            .event(3, registered(3, 6))
            .committed(3, "secrets", EventType::Added, secret)
            .build();
        assert!(
            JitConfigOncePerRunner.check(&stored_by_the_second).is_empty(),
            "a secret stored in the second registration's instant is the second one's"
        );
    }

    fn registered(at_ms: u64) -> GitHubEvent {
        github(at_ms, EventKind::RunnerRegistered { runner_id: 7, name: "r-1".into(), scale_set_id: Some(1) })
    }

    fn removed(at_ms: u64) -> GitHubEvent {
        github(at_ms, EventKind::RunnerRemoved { runner_id: 7, reason: RemovalReason::Removed })
    }

    fn runner_lifetime(events: &[(&str, u64)]) -> RunRecord {
        let mut run = SyntheticRun::new();
        for (what, at) in events {
            run = match *what {
                "added" => {
                    run.committed(*at, "ephemeralrunners", EventType::Added, er("r-1", "u1", None, 0, None))
                }
                "deleted" => {
                    run.committed(*at, "ephemeralrunners", EventType::Deleted, er("r-1", "u1", None, 7, None))
                }
                "registered" => run.event(*at, registered(*at)),
                _ => run.event(*at, removed(*at)),
            };
        }
        run.build()
    }

    #[test]
    fn a_runner_gone_after_its_registration_was_removed_is_clean() {
        let run =
            runner_lifetime(&[("added", 100), ("registered", 200), ("removed", 900), ("deleted", 1_000)]);
        assert_eq!(RegistrationRemovedBeforeRunnerGone.check(&run), Vec::new());
    }

    #[test]
    fn a_runner_gone_while_its_registration_stays_is_a_violation() {
        let run =
            runner_lifetime(&[("added", 100), ("registered", 200), ("deleted", 1_000), ("removed", 5_000)]);
        let violations = RegistrationRemovedBeforeRunnerGone.check(&run);
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert_eq!(violations[0].at_ms, 1_000);
        assert_eq!(violations[0].objects[1], "runner 7");
    }

    #[test]
    fn a_registration_of_another_incarnation_of_the_name_does_not_count() {
        let run = runner_lifetime(&[("registered", 50), ("added", 100), ("deleted", 1_000)]);
        assert_eq!(RegistrationRemovedBeforeRunnerGone.check(&run), Vec::new());
    }
}
