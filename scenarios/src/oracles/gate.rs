//! The patch-ID gate (ARC-MODEL §9 item 5, #3371): an EphemeralRunnerSet scales down, removing and
//! deleting a registered idle runner, only on the listener's patch ID 0.
//!
//! The controller decides from its informer cache, which may lag the store, so the oracle judges
//! each removal against what the controller could have seen. The reconcile that removed runner `x`
//! read its set after its cache first held `x` (every removing path walks the cached runners; the
//! §5.4 cleanup also takes runners still unregistered in the cache and re-reads them, so a tighter
//! bound would be wrong) and before it called RemoveRunner for `x`; the read log bounds which
//! versions of the set the cache held in that window. A removal is a candidate when GitHub answered
//! the controller's RemoveRunner for `x`'s runner with a 204 and the controller then deleted `x` while
//! `x` had never had a job, finished or begun deleting. Other paths also remove then delete idle runners: a set being
//! deleted, an Outdated set, and a set applying a new runner spec (§5.4); a candidate for which some
//! held version allows one of those is not judged. Every other one is a scale-down, and some held
//! version must have had patch ID 0. The creation side of the gate is not judged: upstream may
//! legitimately re-open it (the "re-fires" of §9).

use arc_sim::json_at::At;
use std::collections::BTreeMap;

use arc_controller::crd::EphemeralRunnerSpec;
use arc_controller::crd::ephemeral_runner_set::integrity_hash_of;
use arc_sim::apiserver::reads::{ReadEntry, ReadVia};
use arc_sim::apiserver::{AuditEntry, Committed};
use arc_sim::faults::ApiVerb;
use arc_sim::github::GitHubEvent;
use arc_sim::github::{EventKind, RemoveOutcome};
use arc_sim::record::Interest;
use arc_world::RunRecord;
use serde_json::Value;

use super::Oracle;
use super::view::{
    controller_uid, is_deleting, is_terminal, key_of, runner_id, runner_phase, str_at, uid_of,
};
use crate::verdict::Violation;

/// Idle runners are scaled down only when the controller could have seen their set at patch ID 0.
pub struct ScaleDownOnlyOnPatchZero;

impl Oracle for ScaleDownOnlyOnPatchZero {
    fn name(&self) -> &'static str {
        "scale-down-only-on-patch-zero"
    }

    /// Judges a record so far: a delete is judged on what happened up to it.
    fn judges_so_far(&self) -> bool {
        true
    }

    fn describe(&self) -> &'static str {
        "an idle runner is scaled down only when the controller's cache could hold its set at patch ID 0"
    }

    fn needs(&self) -> Interest {
        Interest::of_resources::<AuditEntry>(&["ephemeralrunners"])
            .and_resources::<Committed>(&["ephemeralrunners", "ephemeralrunnersets"])
            .and_resources::<ReadEntry>(&["ephemeralrunners", "ephemeralrunnersets"])
            .and::<GitHubEvent>()
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        scale_downs(run)
            .into_iter()
            .filter(|s| !s.patch_ids.contains(&0))
            .map(|s| Violation {
                oracle: self.name(),
                at_ms: s.ms,
                objects: vec![
                    format!("ephemeralrunner {}", s.runner),
                    format!("ephemeralrunnerset {}", s.set),
                ],
                message: format!(
                    "scaled down while every version of its set the controller held between {} and {} ms \
                     had a non-zero patch ID ({:?})",
                    s.window.0, s.window.1, s.patch_ids
                ),
            })
            .collect()
    }
}

/// How many scale-downs the oracle judged in `run` (its coverage probe).
pub fn scale_downs_judged(run: &RunRecord) -> u32 {
    u32::try_from(scale_downs(run).len()).unwrap_or(u32::MAX)
}

/// How many judged scale-downs came while the controller's cache could also hold its set at a
/// non-zero patch ID: the window in which the gate decides (the `idle-runner-scaled-down` probe).
pub fn scale_downs_with_nonzero_patch_held(run: &RunRecord) -> u32 {
    let contested = scale_downs(run).into_iter().filter(|s| s.patch_ids.iter().any(|p| *p != 0));
    u32::try_from(contested.count()).unwrap_or(u32::MAX)
}

/// One judged scale-down.
struct ScaleDown {
    /// Sim ms of the delete.
    ms: u64,
    /// The runner's and its set's `namespace/name`.
    runner: String,
    set: String,
    /// When the deciding reconcile could have read the set: from the first cache read of the runner to
    /// the RemoveRunner answer.
    window: (u64, u64),
    /// `spec.patchID` of each version of the set the cache may have held then.
    patch_ids: Vec<i64>,
}

/// The controller's removals that only the scaling path can explain.
fn scale_downs(run: &RunRecord) -> Vec<ScaleDown> {
    let sets = SetHistory::of(run);
    let runners = runner_versions(run);
    let cache = CacheReads::of(run);
    let deletes = run.audit().filter(|a| {
        a.resource == "ephemeralrunners"
            && a.verb == ApiVerb::Delete
            && super::view::is_controller(&a.actor)
            && a.took_effect()
            && !a.status_subresource
    });
    let mut out = Vec::new();
    for a in deletes {
        let key = format!("{}/{}", a.namespace, a.name);
        let Some(victim) = runners.get(&key).and_then(|v| idle_before(v, a.served_ms)) else { continue };
        let Some(set) = sets.key_by_uid.get(&victim.owner_uid) else { continue };
        let Some(removed_at) = removed_before(run, victim.runner_id, a.served_ms) else { continue };
        let Some(from) = cache.first_read("ephemeralrunners", &key) else { continue };
        let held: Vec<&Value> = cache
            .versions_held(set, (from, removed_at))
            .iter()
            .filter_map(|rv| sets.version(set, *rv))
            .collect();
        if held.is_empty() || held.iter().any(|v| other_path_allowed(v)) {
            continue;
        }
        let patch_ids = held.iter().map(|v| patch_id(v)).collect();
        out.push(ScaleDown {
            ms: a.served_ms,
            runner: key,
            set: set.clone(),
            window: (from, removed_at),
            patch_ids,
        });
    }
    out
}

/// Whether a set in this state removes idle runners by a path other than scaling: it is being
/// deleted, it is Outdated, or it has a runner spec to apply (a revision above the applied one, or,
/// for a controller without the revision step, an `integrity-hash` annotation that is not its
/// runner spec's hash).
fn other_path_allowed(set: &Value) -> bool {
    let number = |ptr: &str| set.at(ptr).and_then(Value::as_i64).unwrap_or(0);
    is_deleting(set)
        || str_at(set, "/status/phase") == Some("Outdated")
        || number("/spec/actionableRevision") > number("/status/appliedActionableRevision")
        || integrity_hash_stale(set)
}

/// Whether the set's `integrity-hash` annotation differs from the hash of its runner spec (ARC's
/// `ephemeralRunnerSetIntegrityHash`, the function the controller stamps it with).
fn integrity_hash_stale(set: &Value) -> bool {
    let Some(recorded) = str_at(set, "/metadata/annotations/actions.github.com~1integrity-hash") else {
        return false;
    };
    let spec = set.at("/spec/ephemeralRunnerSpec").cloned().unwrap_or(Value::Null);
    let Ok(spec) = serde_json::from_value::<EphemeralRunnerSpec>(spec) else { return false };
    integrity_hash_of(&spec).is_ok_and(|hash| hash != recorded)
}

fn patch_id(set: &Value) -> i64 {
    set.at("/spec/patchID").and_then(Value::as_i64).unwrap_or(0)
}

/// Per EphemeralRunner `namespace/name`: (sim ms, object) of each version, in order.
type RunnerVersions<'a> = BTreeMap<String, Vec<(u64, &'a Value)>>;

fn runner_versions(run: &RunRecord) -> RunnerVersions<'_> {
    let mut versions: RunnerVersions<'_> = BTreeMap::new();
    for (ms, change) in run.changes_of("ephemeralrunners") {
        versions.entry(key_of(&change.object)).or_default().push((ms, &change.object));
    }
    versions
}

/// A runner as the store had it just before the controller deleted it.
struct Victim {
    owner_uid: String,
    runner_id: i64,
}

/// The runner before `ms`, if it was registered and had never had a job, finished or begun deleting.
fn idle_before(versions: &[(u64, &Value)], ms: u64) -> Option<Victim> {
    let mut last: Option<&Value> = None;
    for (at, o) in versions.iter().take_while(|(at, _)| *at <= ms) {
        if is_deleting(o) && *at == ms {
            break;
        }
        if is_deleting(o) || str_at(o, "/status/jobId").is_some() || is_terminal(runner_phase(o)) {
            return None;
        }
        last = Some(o);
    }
    let o = last?;
    let owner_uid = controller_uid(o)?.to_string();
    let runner_id = runner_id(o);
    (runner_id != 0).then_some(Victim { owner_uid, runner_id })
}

/// The sim ms of the latest RemoveRunner for `runner` answered 204 (removed, or unknown) at or before
/// `ms`. A busy answer does not count: the removing path keeps the runner, and a later delete of it
/// comes from elsewhere (its pod succeeded, say).
fn removed_before(run: &RunRecord, runner: i64, ms: u64) -> Option<u64> {
    run.github_events()
        .take_while(|e| e.at_ms <= ms)
        .filter(|e| {
            matches!(e.kind, EventKind::RemoveRunner { runner_id, outcome: RemoveOutcome::Removed | RemoveOutcome::Unknown }
                if runner_id == runner)
        })
        .map(|e| e.at_ms)
        .last()
}

/// Every committed version of every EphemeralRunnerSet.
struct SetHistory<'a> {
    /// `namespace/name` by uid.
    key_by_uid: BTreeMap<String, String>,
    /// Per `namespace/name`: resourceVersion → object.
    versions: BTreeMap<String, BTreeMap<u64, &'a Value>>,
}

impl<'a> SetHistory<'a> {
    fn of(run: &'a RunRecord) -> Self {
        let mut history = SetHistory { key_by_uid: BTreeMap::new(), versions: BTreeMap::new() };
        for (_, change) in run.changes_of("ephemeralrunnersets") {
            let key = key_of(&change.object);
            history.key_by_uid.insert(uid_of(&change.object).to_string(), key.clone());
            history.versions.entry(key).or_default().insert(change.rv, &change.object);
        }
        history
    }

    /// `set` at resourceVersion `rv`.
    fn version(&self, set: &str, rv: u64) -> Option<&'a Value> {
        self.versions.get(set)?.get(&rv).copied()
    }
}

/// What the controller's informers were handed: watch events and list items (its gets bypass the
/// cache, so they do not count), per (resource, object key), in order.
struct CacheReads<'a> {
    by_key: BTreeMap<(&'a str, &'a str), Vec<&'a ReadEntry>>,
}

impl<'a> CacheReads<'a> {
    fn of(run: &'a RunRecord) -> Self {
        let mut by_key: BTreeMap<(&'a str, &'a str), Vec<&'a ReadEntry>> = BTreeMap::new();
        for read in run.reads().filter(|r| super::view::is_controller(&r.actor) && r.via != ReadVia::Get) {
            by_key.entry((read.resource.as_str(), read.key.as_str())).or_default().push(read);
        }
        CacheReads { by_key }
    }

    /// The sim ms of the first read of `key`.
    fn first_read(&self, resource: &str, key: &str) -> Option<u64> {
        self.by_key.get(&(resource, key))?.first().map(|r| r.ms)
    }

    /// The versions of `set` the cache may have held at some instant in `window`: the last one read
    /// before it and every one read within it (a version read at an instant may not be applied yet
    /// when a reconcile reads the cache at that same instant).
    fn versions_held(&self, set: &str, (from, to): (u64, u64)) -> Vec<u64> {
        let reads = self.by_key.get(&("ephemeralrunnersets", set)).map(Vec::as_slice).unwrap_or(&[]);
        let before = reads.iter().rev().find(|r| r.ms < from).map(|r| r.rv);
        let within = reads.iter().filter(|r| r.ms >= from && r.ms <= to).map(|r| r.rv);
        before.into_iter().chain(within).collect()
    }
}

#[cfg(test)]
mod tests {
    use arc_sim::apiserver::EventType;
    use arc_world::synthetic::SyntheticRun;
    use serde_json::json;

    use super::*;
    use crate::oracles::fixtures::{NS, er, github, request};

    /// EphemeralRunnerSet `set` at `patch_id`.
    fn set(patch_id: i64) -> Value {
        json!({"apiVersion": "actions.github.com/v1alpha1", "kind": "EphemeralRunnerSet",
            "metadata": {"name": "set", "namespace": NS, "uid": "ers-uid"},
            "spec": {"patchID": patch_id, "replicas": 0}})
    }

    /// Registered idle runner `r` (id 41) of `set`, with `job_id` if it had one.
    fn idle_runner(job_id: Option<&str>) -> Value {
        let mut runner = er("r", "u1", Some("Running"), 41, job_id);
        runner["metadata"]["ownerReferences"] = json!([{"apiVersion": "actions.github.com/v1alpha1",
            "kind": "EphemeralRunnerSet", "name": "set", "uid": "ers-uid", "controller": true}]);
        runner
    }

    /// The controller's informer was handed `key` of `resource` at resourceVersion `rv`.
    fn read(ms: u64, resource: &str, key: &str, rv: u64) -> ReadEntry {
        ReadEntry {
            ms,
            actor: "controller".into(),
            resource: resource.into(),
            key: format!("{NS}/{key}"),
            rv,
            via: ReadVia::Watch,
        }
    }

    /// The set (rv 1, at `patch_id`) is read at 1 ms; runner `r` (rv 2) is committed at 2 ms and first
    /// read at 3 ms. The caller adds what happens in the window, then [`removed_and_deleted`] and builds.
    fn scaling(patch_id: i64, runner: Value) -> SyntheticRun {
        SyntheticRun::new()
            .committed(1, "ephemeralrunnersets", EventType::Added, set(patch_id))
            .event(1, read(1, "ephemeralrunnersets", "set", 1))
            .committed(2, "ephemeralrunners", EventType::Added, runner)
            .event(3, read(3, "ephemeralrunners", "r", 2))
    }

    /// GitHub answers RemoveRunner for runner 41 with `outcome` at 6 ms; the controller deletes `r` at 7 ms.
    fn removed_and_deleted(run: SyntheticRun, outcome: RemoveOutcome) -> SyntheticRun {
        run.event(6, github(6, EventKind::RemoveRunner { runner_id: 41, outcome }))
            .event(7, request(7, "controller", ApiVerb::Delete, "ephemeralrunners", "r", 200))
    }

    #[test]
    fn scaling_down_while_the_cache_held_only_a_non_zero_patch_is_a_violation() {
        let run = removed_and_deleted(scaling(3, idle_runner(None)), RemoveOutcome::Removed).build();
        assert_eq!(scale_downs_judged(&run), 1);
        let found = ScaleDownOnlyOnPatchZero.check(&run);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].at_ms, 7);
        assert_eq!(
            found[0].objects,
            vec![format!("ephemeralrunner {NS}/r"), format!("ephemeralrunnerset {NS}/set")]
        );
        assert!(
            found[0].message.contains("between 3 and 6 ms had a non-zero patch ID ([3])"),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn scaling_down_on_patch_zero_is_clean() {
        let run = removed_and_deleted(scaling(0, idle_runner(None)), RemoveOutcome::Unknown).build();
        assert_eq!(scale_downs_judged(&run), 1);
        assert!(ScaleDownOnlyOnPatchZero.check(&run).is_empty());
    }

    #[test]
    fn a_patch_zero_counts_only_if_the_cache_got_it_before_remove_runner() {
        let zero_in_window = scaling(3, idle_runner(None))
            .committed(4, "ephemeralrunnersets", EventType::Modified, set(0))
            .event(5, read(5, "ephemeralrunnersets", "set", 3));
        let run = removed_and_deleted(zero_in_window, RemoveOutcome::Removed).build();
        assert!(ScaleDownOnlyOnPatchZero.check(&run).is_empty(), "the reconcile may have read patch 0");
        let zero_too_late =
            scaling(3, idle_runner(None)).committed(4, "ephemeralrunnersets", EventType::Modified, set(0));
        let late = removed_and_deleted(zero_too_late, RemoveOutcome::Removed)
            .event(8, read(8, "ephemeralrunnersets", "set", 3));
        let found = ScaleDownOnlyOnPatchZero.check(&late.build());
        assert_eq!(found.len(), 1, "patch 0 reached the cache after the removal: {found:?}");
    }

    #[test]
    fn removals_the_scaling_path_does_not_explain_are_not_judged() {
        let busy = removed_and_deleted(scaling(3, idle_runner(None)), RemoveOutcome::JobStillRunning).build();
        assert_eq!(scale_downs_judged(&busy), 0, "RemoveRunner refused: the delete comes from elsewhere");
        let had_job =
            removed_and_deleted(scaling(3, idle_runner(Some("job-7"))), RemoveOutcome::Removed).build();
        assert_eq!(scale_downs_judged(&had_job), 0, "not idle");
        let mut deleting_set = set(3);
        deleting_set["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
        let set_deleted = SyntheticRun::new()
            .committed(1, "ephemeralrunnersets", EventType::Modified, deleting_set)
            .event(1, read(1, "ephemeralrunnersets", "set", 1))
            .committed(2, "ephemeralrunners", EventType::Added, idle_runner(None))
            .event(3, read(3, "ephemeralrunners", "r", 2));
        let run = removed_and_deleted(set_deleted, RemoveOutcome::Removed).build();
        assert_eq!(scale_downs_judged(&run), 0, "a set being deleted removes its runners");
        assert!(ScaleDownOnlyOnPatchZero.check(&run).is_empty());
    }
}
