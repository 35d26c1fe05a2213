//! The patch-ID gate (ARC-MODEL §9 item 5, #3371): an EphemeralRunnerSet scales down, removing and
//! deleting a registered idle runner, only on the listener's patch ID 0.
//!
//! The controller decides from its informer cache, which may lag the store, so the oracle judges
//! each removal against what the controller could have seen. The reconcile that removed runner `x`
//! read its set after its cache first held `x` (every removing path walks the cached runners; the
//! §5.4 cleanup also takes runners still unregistered in the cache and re-reads them, so a tighter
//! bound would be wrong) and before it called RemoveRunner for `x`; the read log bounds which
//! versions of the set the cache held in that window. A removal is a candidate when GitHub answered
//! the controller's RemoveRunner for `x`'s runner with a 204 after `x` carried that runner id (the
//! scaling path reads the id from `x`) and the controller then deleted `x` while `x` had never had a
//! job, finished or begun deleting. Other paths also remove then delete idle runners: a set being
//! deleted, an Outdated set, and a set applying a new runner spec (§5.4); a candidate for which some
//! held version allows one of those is not judged. Every other one is a scale-down, and some held
//! version must have had patch ID 0. The creation side of the gate is not judged: upstream may
//! legitimately re-open it (the "re-fires" of §9).

use arc_sim::record::Interest;
use arc_world::RunRecord;

use super::Oracle;
use crate::probes::scale_downs;
use crate::violation::Violation;

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
        scale_downs::needs()
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        scale_downs::judged(run)
            .iter()
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

#[cfg(test)]
mod tests {
    use arc_sim::apiserver::EventType;
    use arc_sim::apiserver::reads::{ReadEntry, ReadVia};
    use arc_sim::faults::ApiVerb;
    use arc_sim::github::{EventKind, RemoveOutcome};
    use arc_world::SyntheticRun;
    use serde_json::Value;
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
        assert_eq!(scale_downs::judged_count(&run), 1);
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
        assert_eq!(scale_downs::judged_count(&run), 1);
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
        assert_eq!(
            scale_downs::judged_count(&busy),
            0,
            "RemoveRunner refused: the delete comes from elsewhere"
        );
        let had_job =
            removed_and_deleted(scaling(3, idle_runner(Some("job-7"))), RemoveOutcome::Removed).build();
        assert_eq!(scale_downs::judged_count(&had_job), 0, "not idle");
        let mut deleting_set = set(3);
        deleting_set["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
        let set_deleted = SyntheticRun::new()
            .committed(1, "ephemeralrunnersets", EventType::Modified, deleting_set)
            .event(1, read(1, "ephemeralrunnersets", "set", 1))
            .committed(2, "ephemeralrunners", EventType::Added, idle_runner(None))
            .event(3, read(3, "ephemeralrunners", "r", 2));
        let run = removed_and_deleted(set_deleted, RemoveOutcome::Removed).build();
        assert_eq!(scale_downs::judged_count(&run), 0, "a set being deleted removes its runners");
        assert!(ScaleDownOnlyOnPatchZero.check(&run).is_empty());
    }

    #[test]
    fn a_removal_before_the_runner_carried_the_id_is_not_a_scale_down() {
        let mut unregistered_of_set = er("r", "u1", Some("Pending"), 0, None);
        unregistered_of_set["metadata"]["ownerReferences"] =
            idle_runner(None)["metadata"]["ownerReferences"].clone();
        let run = SyntheticRun::new()
            .committed(1, "ephemeralrunnersets", EventType::Added, set(3))
            .event(1, read(1, "ephemeralrunnersets", "set", 1))
            .committed(2, "ephemeralrunners", EventType::Added, unregistered_of_set)
            .event(3, read(3, "ephemeralrunners", "r", 2))
            .event(4, github(4, EventKind::RemoveRunner { runner_id: 41, outcome: RemoveOutcome::Removed }))
            .committed(5, "ephemeralrunners", EventType::Modified, idle_runner(None))
            .event(7, request(7, "controller", ApiVerb::Delete, "ephemeralrunners", "r", 200))
            .build();
        assert_eq!(scale_downs::judged_count(&run), 0, "id 41 reached the runner after its removal");
    }

    /// The set at patch ID 3 stamped with `hash` over runner spec `image`.
    fn stamped(hash: &str, image: &str) -> Value {
        let mut set = set(3);
        set["metadata"]["annotations"] = json!({"actions.github.com/integrity-hash": hash});
        set["spec"]["ephemeralRunnerSpec"] =
            json!({"spec": {"containers": [{"name": "runner", "image": image}]}});
        set
    }

    /// The set as first stamped (rv 1, read at 1 ms), then as `then` written by `writer` (rv 2, read at
    /// 2 ms); runner `r` (rv 3) committed at 3 ms and first read at 4 ms, removed at 6 ms and deleted at
    /// 7 ms.
    fn restamped(writer: &str, then: Value) -> RunRecord {
        let mut write = request(2, writer, ApiVerb::Patch, "ephemeralrunnersets", "set", 200);
        write.resource_version = "2".into();
        let run = SyntheticRun::new()
            .committed(1, "ephemeralrunnersets", EventType::Added, stamped("h1", "runner:1"))
            .event(1, read(1, "ephemeralrunnersets", "set", 1))
            .event(2, write)
            .committed(2, "ephemeralrunnersets", EventType::Modified, then)
            .event(2, read(2, "ephemeralrunnersets", "set", 2))
            .committed(3, "ephemeralrunners", EventType::Added, idle_runner(None))
            .event(4, read(4, "ephemeralrunners", "r", 3));
        removed_and_deleted(run, RemoveOutcome::Removed).build()
    }

    #[test]
    fn a_runner_spec_changed_under_an_unchanged_integrity_hash_is_one_to_apply_not_a_scale_down() {
        let stale = restamped("controller", stamped("h1", "runner:2"));
        assert_eq!(scale_downs::judged_count(&stale), 0, "the hash no longer stands for the spec");
        let restamped_with_its_spec = restamped("controller", stamped("h2", "runner:2"));
        assert_eq!(scale_downs::judged_count(&restamped_with_its_spec), 1, "a fresh hash: a scale-down");
        assert_eq!(ScaleDownOnlyOnPatchZero.check(&restamped_with_its_spec).len(), 1);
    }

    #[test]
    fn an_integrity_hash_a_user_wrote_is_a_refresh_to_apply_not_a_scale_down() {
        let refreshed = restamped("user", stamped("refresh-2", "runner:1"));
        assert_eq!(scale_downs::judged_count(&refreshed), 0, "the user forced a refresh");
        let written_back = restamped("controller", stamped("h3", "runner:1"));
        assert_eq!(scale_downs::judged_count(&written_back), 1, "the controller's own hash stands");
    }
}
