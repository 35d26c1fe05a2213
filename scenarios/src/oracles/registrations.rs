//! Registrations at GitHub: none orphaned once the world has settled, and one JIT registration per
//! EphemeralRunner (per incarnation: `generateName` may hand a later runner a name an earlier one had).

use std::collections::BTreeMap;

use arc_sim::apiserver::Committed;
use arc_sim::apiserver::EventType;
use arc_sim::github::EventKind;
use arc_sim::github::GitHubEvent;
use arc_sim::record::Interest;
use arc_sim::world::RunRecord;

use super::Oracle;
use super::view::{runner_id, str_at, uid_of};
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
