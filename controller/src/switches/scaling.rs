//! [`ScalingCore`]: the EphemeralRunnerSet's scaling core of the \[V\] change set (ARC-MODEL §5.4),
//! each part against the upstream behaviour it replaces (§3.2). ARC 0.15.0 took the revision step
//! (#4638, #4644) and the cleanup-first scaling with its marker and suppression (#4642) upstream.

use serde::{Deserialize, Serialize};

use super::SwitchDoc;

/// The ERS scaling core. `Default` is this project's (every part of §5.4 on but the count-less
/// status: the ERS keeps writing its counts, which the ARS mirrors and its drain waits on).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(default, deny_unknown_fields)]
pub struct ScalingCore {
    /// §5.4 "ERS step 4" (#4638, #4644): a runner-spec change is tracked as `spec.actionableRevision`,
    /// which the ARS bumps when it patches the runner spec in place; while it is above
    /// `status.appliedActionableRevision` the ERS cleans up idle runners and records the revision as
    /// applied (clearing the finished-cleanup marker and re-deriving the phase); new runners are
    /// stamped with it. Off (upstream, HEAD's #4516 form): the ERS compares its `integrity-hash`
    /// annotation with the hash of `spec.ephemeralRunnerSpec`, cleans up and rewrites the
    /// annotation, and the Outdated phase is sticky.
    pub actionable_revision: bool,
    /// §5.4 / #4642: when the gate is open and runners have finished, record
    /// `finishedRunnerCleanupPatchID = spec.patchID` (fresh read, optimistic lock), delete the
    /// finished runners, update the status and end the pass without scaling. Off (upstream): scale
    /// first and delete the finished runners in a deferred step of the same pass.
    pub cleanup_finished_first: bool,
    /// §5.4: scale up when `total + deleting < replicas` (deleting runners still hold their
    /// registration). Off (upstream): `total < replicas`.
    pub scale_up_counts_deleting: bool,
    /// §5.4 / #4642: before creating runners, read the set uncached and skip the scale-up when
    /// `status.finishedRunnerCleanupPatchID` equals the non-zero `spec.patchID`: the gap is the
    /// cleanup's own, not new demand. Off (upstream): no such check.
    pub suppress_cleanup_scale_up: bool,
    /// §5.4 "other changes": `updateStatus` writes only the phase (and the \[V\] fields), never the
    /// runner counts. Off (upstream and this project): the counts are written, as ARC's test
    /// "Should update status on Ephemeral Runner state changes" and the ARS drain expect.
    pub status_without_counts: bool,
}

/// Every part of the scaling core, with its origin, in declaration order.
pub(super) const DOCS: &[SwitchDoc] = &[
    SwitchDoc::new(
        "actionable_revision",
        "§5.4, #4638/#4644 (0.15.0)",
        "revision step instead of the integrity-hash step",
    ),
    SwitchDoc::new(
        "cleanup_finished_first",
        "§5.4, #4642 (0.15.0)",
        "clean up finished runners first (marker), then stop",
    ),
    SwitchDoc::new("scale_up_counts_deleting", "§5.4", "scale up when total + deleting < replicas"),
    SwitchDoc::new(
        "suppress_cleanup_scale_up",
        "§5.4, #4642 (0.15.0)",
        "no scale-up for the gap a finished cleanup left",
    ),
    SwitchDoc::new("status_without_counts", "§5.4", "ERS status holds no runner counts"),
];

impl Default for ScalingCore {
    fn default() -> Self {
        ScalingCore {
            actionable_revision: true,
            cleanup_finished_first: true,
            scale_up_counts_deleting: true,
            suppress_cleanup_scale_up: true,
            status_without_counts: false,
        }
    }
}

impl ScalingCore {
    /// Exactly §5.4.
    pub const fn change_set() -> Self {
        ScalingCore {
            actionable_revision: true,
            cleanup_finished_first: true,
            scale_up_counts_deleting: true,
            suppress_cleanup_scale_up: true,
            status_without_counts: true,
        }
    }

    /// Upstream before 0.15.0: integrity-hash step, scale then deferred cleanup, `total < replicas`,
    /// no suppression, counts written.
    pub const fn upstream() -> Self {
        ScalingCore {
            actionable_revision: false,
            cleanup_finished_first: false,
            scale_up_counts_deleting: false,
            suppress_cleanup_scale_up: false,
            status_without_counts: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switches::docs_match_fields;

    #[test]
    fn the_default_is_the_change_set_with_counts_kept_in_the_status() {
        let default = ScalingCore::default();
        assert!(!default.status_without_counts);
        assert_eq!(ScalingCore { status_without_counts: true, ..default }, ScalingCore::change_set());
        let upstream = serde_json::to_value(ScalingCore::upstream()).unwrap();
        assert!(upstream.as_object().unwrap().values().all(|v| v == &serde_json::Value::Bool(false)));
    }

    #[test]
    fn every_part_is_documented_in_order() {
        docs_match_fields(&ScalingCore::default(), DOCS);
    }
}
