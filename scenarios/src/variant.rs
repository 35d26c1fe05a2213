//! Variants: the fixed controller, and one variant per historic bug, each the fixed controller with one
//! fix switched back off. A variant is what a sweep runs a scenario against.

use std::fmt;
use std::str::FromStr;

use arc_controller::{Fixes, Optimisations};

/// A controller build, as a set of fixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub enum Variant {
    /// Every fix on.
    Fixed,
    /// #4201 reverted: a pod create answered AlreadyExists is a reconcile error (rate-limited retry).
    Bug4201,
    /// #1087 reverted: the registration token is left out of the pod template hash.
    Bug1087,
    /// #1125 reverted: a legacy pod is deleted for recreation without unregistering the runner first.
    Bug1125,
    /// Scale-down deletes idle EphemeralRunners without calling RemoveRunner first.
    BugScaleDownNoRemove,
    /// #3371 reverted: no patch-ID gate; the runner set scales to `replicas` on every patch, down too.
    Bug3371,
    /// The ERS←ER predicate drops updates that change only `status.jobId` (#4647 review).
    Bug4647JobId,
    /// The ARS←ERS predicate leaves the ERS counts out, as §5.1 writes it (a gap the equivalence
    /// oracle found in the change set).
    BugArsPredicateCounts,
    /// One finalizer added per reconcile instead of both at once (#4580).
    Bug4580Finalizer,
    /// JIT secrets read from an informer cache instead of the API server (§8.1 ablation).
    BugSecretsCached,
    /// The listener writes Running without guarding against a terminal or deleting runner (§5.2).
    BugRunningOverwritesTerminal,
    /// Runner removal acts on a stale snapshot (ARC's own behaviour; a race this suite found).
    BugStaleRemovalSnapshot,
    /// A legacy runner missing from the (stale) runner list is taken as gone while its container
    /// runs (ARC's own behaviour; a race this suite found).
    BugUnlistedRunnerGone,
    /// A runner deleted while it registers is deregistered from a stale snapshot with no runner id,
    /// leaving its registration behind (ARC's own behaviour; a race this suite found).
    BugStaleDeregistration,
    /// The EphemeralRunner's phase is copied from its pod (Running as soon as the container runs), as
    /// upstream did before the listener came to own the Running phase (§5.2, #4646 in 0.15.0).
    BugRunningFromPod,
}

impl Variant {
    /// Every variant, fixed first.
    pub const ALL: [Variant; 15] = [
        Variant::Fixed,
        Variant::Bug4201,
        Variant::Bug1087,
        Variant::Bug1125,
        Variant::BugScaleDownNoRemove,
        Variant::Bug3371,
        Variant::Bug4647JobId,
        Variant::BugArsPredicateCounts,
        Variant::Bug4580Finalizer,
        Variant::BugSecretsCached,
        Variant::BugRunningOverwritesTerminal,
        Variant::BugStaleRemovalSnapshot,
        Variant::BugUnlistedRunnerGone,
        Variant::BugStaleDeregistration,
        Variant::BugRunningFromPod,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Fixed => "fixed",
            Variant::Bug4201 => "bug-4201",
            Variant::Bug1087 => "bug-1087",
            Variant::Bug1125 => "bug-1125",
            Variant::BugScaleDownNoRemove => "bug-scale-down-no-remove",
            Variant::Bug3371 => "bug-3371",
            Variant::Bug4647JobId => "bug-4647-jobid",
            Variant::BugArsPredicateCounts => "bug-ars-predicate-counts",
            Variant::Bug4580Finalizer => "bug-4580-finalizer",
            Variant::BugSecretsCached => "bug-secrets-cached",
            Variant::BugRunningOverwritesTerminal => "bug-running-overwrites-terminal",
            Variant::BugStaleRemovalSnapshot => "bug-stale-removal-snapshot",
            Variant::BugUnlistedRunnerGone => "bug-unlisted-runner-gone",
            Variant::BugStaleDeregistration => "bug-stale-deregistration",
            Variant::BugRunningFromPod => "bug-running-from-pod",
        }
    }

    /// One line on what the variant reverts.
    pub fn describe(self) -> &'static str {
        match self {
            Variant::Fixed => "every historic fix on",
            Variant::Bug4201 => "AlreadyExists on pod create is a reconcile error (before #4201)",
            Variant::Bug1087 => "registration token not in the legacy pod template hash (before #1087)",
            Variant::Bug1125 => "legacy pod deleted for recreation without unregistering (before #1125)",
            Variant::BugScaleDownNoRemove => "scale-down deletes idle runners without RemoveRunner first",
            Variant::Bug3371 => "no patch-ID gate: scale to replicas on every patch, down too (before #3371)",
            Variant::Bug4647JobId => "ERS predicate drops JobID-only runner updates (#4647 review)",
            Variant::BugArsPredicateCounts => "ARS predicate ignores the ERS counts (§5.1 as written)",
            Variant::Bug4580Finalizer => "one runner finalizer added per reconcile (#4580)",
            Variant::BugSecretsCached => "JIT secrets read from a cache (§8.1 ablation)",
            Variant::BugRunningOverwritesTerminal => "listener writes Running over terminal runners (§5.2)",
            Variant::BugStaleRemovalSnapshot => {
                "runner removal uses a stale snapshot (ARC as is; found by arcsim)"
            }
            Variant::BugUnlistedRunnerGone => {
                "legacy: an unlisted runner is gone even while its container runs (ARC as is; found by arcsim)"
            }
            Variant::BugStaleDeregistration => {
                "a runner deleted while registering is deregistered as id 0 and leaks (ARC as is; found by arcsim)"
            }
            Variant::BugRunningFromPod => {
                "phase Running copied from the pod, before any job (upstream before #4646)"
            }
        }
    }

    /// The controller's fixes under this variant.
    pub fn fixes(self) -> Fixes {
        let mut fixes = Fixes::default();
        match self {
            Variant::Fixed => {}
            Variant::Bug4201 => fixes.already_exists_requeue = false,
            Variant::Bug1087 => fixes.token_in_pod_hash = false,
            Variant::Bug1125 => fixes.unregister_before_recreate = false,
            Variant::BugScaleDownNoRemove => fixes.remove_runner_before_scale_down = false,
            Variant::Bug3371 => fixes.patch_id_gate = false,
            Variant::Bug4647JobId => fixes.predicate_includes_job_id = false,
            Variant::BugArsPredicateCounts => fixes.ars_predicate_includes_counts = false,
            Variant::Bug4580Finalizer => fixes.add_both_finalizers_at_once = false,
            Variant::BugSecretsCached => fixes.secrets_read_uncached = false,
            Variant::BugRunningOverwritesTerminal => fixes.running_never_overwrites_terminal = false,
            Variant::BugStaleRemovalSnapshot => fixes.reread_runner_before_removal = false,
            Variant::BugUnlistedRunnerGone => fixes.keep_unlisted_running_runner = false,
            Variant::BugStaleDeregistration => fixes.reread_runner_before_deregistration = false,
            Variant::BugRunningFromPod => {}
        }
        fixes
    }

    /// The controller's change-set switches under this variant (all on but for `bug-running-from-pod`).
    pub fn optimisations(self) -> Optimisations {
        let mut optimisations = Optimisations::default();
        if self == Variant::BugRunningFromPod {
            optimisations.running_from_listener = false;
        }
        optimisations
    }

    /// Whether this is the fixed controller.
    pub fn is_fixed(self) -> bool {
        self == Variant::Fixed
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown variant name, with the valid ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown variant {0:?}; valid: {valid}", valid = Variant::ALL.map(Variant::name).join(", "))]
pub struct UnknownVariant(pub String);

impl FromStr for Variant {
    type Err = UnknownVariant;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Variant::ALL.into_iter().find(|v| v.name() == s).ok_or_else(|| UnknownVariant(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bug_variant_turns_exactly_one_switch_off() {
        let on =
            |value: serde_json::Value| value.as_object().unwrap().values().filter(|v| **v == true).count();
        let switches_on = |v: Variant| {
            on(serde_json::to_value(v.fixes()).unwrap())
                + on(serde_json::to_value(v.optimisations()).unwrap())
        };
        let all = switches_on(Variant::Fixed);
        for v in Variant::ALL {
            let expected = if v.is_fixed() { all } else { all - 1 };
            assert_eq!(switches_on(v), expected, "{v}");
            assert_eq!(v.name().parse::<Variant>(), Ok(v));
        }
        let err = "bug-9999".parse::<Variant>().unwrap_err().to_string();
        assert!(err.contains("valid: fixed, bug-4201"), "{err}");
    }
}
