//! Variants: the fixed controller, and one variant per historic bug, each the fixed controller with one
//! fix switched back off (three are plausible bugs ARC never had, for oracles no historic bug fails). A [`Build`] is a variant of a profile (`arc_controller::Profile`): the
//! profile's switches with the variant's fix off. Where a profile never had the fix, the variant is
//! the profile as it is. A build is what a sweep runs a scenario against.

use std::fmt;
use std::str::FromStr;

use arc_controller::{Profile, Switches};

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
    /// Before #4320: runners created without finalizers, one finalizer added per reconcile (the
    /// first half of #4580's history).
    Bug4580Finalizer,
    /// ARC HEAD's finalizer short circuit (#4580): only the main finalizer, then on into
    /// registration, for runners created without finalizers.
    Bug4580ShortCircuit,
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
    /// RemoveRunner is asked for id 0 when a runner has no recorded id (ARC before #4664): where the
    /// service refuses id 0 (#4653), the runner stays deleting forever.
    Bug4653RemoveZero,
    /// A failed runner whose registration GitHub dropped is given a new pod with the same JIT config,
    /// which GitHub refuses again, until the failure limit (ARC as is; #4307, #4183).
    Bug4307RegistrationGone,
    /// A runner RemoveRunner took away whose EphemeralRunner delete then failed is counted as kept,
    /// so scale-down removes another and the removed one stays live with no registration (ARC's own
    /// behaviour; a race this suite found).
    BugRemovedRunnerKept,
    /// The `actions/scaleset` listener acknowledges a message before acquiring its jobs.
    BugAckBeforeAcquire,
    /// The EphemeralRunner's phase is copied from its pod (Running as soon as the container runs), as
    /// upstream did before the listener came to own the Running phase (§5.2, #4646 in 0.15.0).
    BugRunningFromPod,
    /// A listener whose long poll fails (no answer after the client's retries) waits instead of
    /// exiting: a zombie holding its session (actions/scaleset #63, ARC #4285). Only a network
    /// fault makes the poll fail so.
    BugZombieListener,
    /// Before #2255: a deleting runner's pod is deleted without RemoveRunner, busy or not.
    Bug2255NoRemoveOnDelete,
    /// A plausible bug, not in ARC: the runner pod names its runner as owner but not as controller
    /// (`SetOwnerReference` for `SetControllerReference`).
    BugPodOwnerNotController,
    /// A plausible bug, not in ARC: a pod create refused by a 5xx, a throttle or a lost answer marks
    /// the runner Failed, as an invalid pod does.
    BugCreateErrorFinal,
    /// A plausible bug, not in ARC: with leader election, every replica starts its controllers at
    /// once and the election decides only who renews the Lease.
    BugControllersBeforeLease,
    /// Every ARC release (client-go's election is not fencing): a leader writes past its renew
    /// deadline, as a leader stopped past its lease does once it goes on.
    BugWritesAfterLeaseLost,
    /// ARC 0.14.2 to HEAD (#4457's check with #3842's dind sidecar): a native sidecar's crash, reported
    /// `terminated` until the kubelet restarts it, reads as a failed init container.
    BugInitCheckReadsSidecars,
}

impl Variant {
    /// Every variant, fixed first.
    pub const ALL: [Variant; 27] = [
        Variant::Fixed,
        Variant::Bug4201,
        Variant::Bug1087,
        Variant::Bug1125,
        Variant::BugScaleDownNoRemove,
        Variant::Bug3371,
        Variant::Bug4647JobId,
        Variant::BugArsPredicateCounts,
        Variant::Bug4580Finalizer,
        Variant::Bug4580ShortCircuit,
        Variant::BugSecretsCached,
        Variant::BugRunningOverwritesTerminal,
        Variant::BugStaleRemovalSnapshot,
        Variant::BugUnlistedRunnerGone,
        Variant::BugStaleDeregistration,
        Variant::Bug4653RemoveZero,
        Variant::Bug4307RegistrationGone,
        Variant::BugRemovedRunnerKept,
        Variant::BugAckBeforeAcquire,
        Variant::BugRunningFromPod,
        Variant::BugZombieListener,
        Variant::Bug2255NoRemoveOnDelete,
        Variant::BugPodOwnerNotController,
        Variant::BugCreateErrorFinal,
        Variant::BugControllersBeforeLease,
        Variant::BugWritesAfterLeaseLost,
        Variant::BugInitCheckReadsSidecars,
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
            Variant::Bug4580ShortCircuit => "bug-4580-short-circuit",
            Variant::BugSecretsCached => "bug-secrets-cached",
            Variant::BugRunningOverwritesTerminal => "bug-running-overwrites-terminal",
            Variant::BugStaleRemovalSnapshot => "bug-stale-removal-snapshot",
            Variant::BugUnlistedRunnerGone => "bug-unlisted-runner-gone",
            Variant::BugStaleDeregistration => "bug-stale-deregistration",
            Variant::Bug4653RemoveZero => "bug-4653-remove-zero",
            Variant::Bug4307RegistrationGone => "bug-4307-registration-gone",
            Variant::BugRemovedRunnerKept => "bug-removed-runner-kept",
            Variant::BugAckBeforeAcquire => "bug-ack-before-acquire",
            Variant::BugRunningFromPod => "bug-running-from-pod",
            Variant::BugZombieListener => "bug-zombie-listener",
            Variant::Bug2255NoRemoveOnDelete => "bug-2255-no-remove-on-delete",
            Variant::BugPodOwnerNotController => "bug-pod-owner-not-controller",
            Variant::BugCreateErrorFinal => "bug-create-error-final",
            Variant::BugControllersBeforeLease => "bug-controllers-before-lease",
            Variant::BugWritesAfterLeaseLost => "bug-writes-after-lease-lost",
            Variant::BugInitCheckReadsSidecars => "bug-init-check-reads-sidecars",
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
            Variant::Bug4580Finalizer => "no finalizers at creation, one added per reconcile (before #4320)",
            Variant::Bug4580ShortCircuit => {
                "main finalizer only, then on into registration (ARC HEAD's short circuit, #4580)"
            }
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
            Variant::Bug4653RemoveZero => {
                "RemoveRunner asked for id 0; refused, the runner deletes forever (before #4664; #4653)"
            }
            Variant::Bug4307RegistrationGone => {
                "a failed runner whose registration is gone retries the same JIT config (ARC as is; #4307)"
            }
            Variant::BugRemovedRunnerKept => {
                "a removed runner whose delete failed stays, counted live, with no registration (ARC as is; found by arcsim)"
            }
            Variant::BugRunningFromPod => {
                "phase Running copied from the pod, before any job (upstream before #4646)"
            }
            Variant::BugZombieListener => {
                "a listener whose long poll fails waits instead of exiting (scaleset #63, #4285)"
            }
            Variant::Bug2255NoRemoveOnDelete => {
                "a deleting runner's pod goes without RemoveRunner, busy or not (before #2255)"
            }
            Variant::BugAckBeforeAcquire => {
                "listener acks a message before acquiring its jobs; a crash between loses them (ARC 0.14+; found by arcsim)"
            }
            Variant::BugPodOwnerNotController => {
                "runner pod owned but not controlled by its runner (plausible bug, not in ARC)"
            }
            Variant::BugCreateErrorFinal => {
                "a pod create refused by a 5xx or a lost answer marks the runner Failed (plausible bug, not in ARC)"
            }
            Variant::BugControllersBeforeLease => {
                "controllers start on every replica before the Lease is held (plausible bug, not in ARC)"
            }
            Variant::BugWritesAfterLeaseLost => {
                "a leader writes past its renew deadline: a leader stopped past its lease writes once it goes on (every ARC release)"
            }
            Variant::BugInitCheckReadsSidecars => {
                "a crashed native sidecar (dind) reads as a failed init container (#4457's check, 0.14.2 to HEAD)"
            }
        }
    }

    /// Where the bug is written up in this repository (a finding's file), for the variants a finding
    /// is about; `None` for the rest, whose [`Variant::describe`] names the upstream issue or PR.
    pub fn write_up(self) -> Option<&'static str> {
        Some(match self {
            Variant::BugStaleRemovalSnapshot => "findings/01-stale-removal-snapshot.md",
            Variant::BugArsPredicateCounts => "findings/02-ars-predicate-hides-counts.md",
            Variant::BugUnlistedRunnerGone => "findings/03-legacy-unlisted-runner-gone.md",
            Variant::Bug4580ShortCircuit => "findings/04-finalizer-short-circuit.md",
            Variant::BugStaleDeregistration => "findings/05-deleted-while-registering.md",
            Variant::BugAckBeforeAcquire => "findings/06-ack-before-acquire.md",
            Variant::Bug4653RemoveZero => "findings/07-remove-runner-id-zero-stalls.md",
            Variant::Bug4307RegistrationGone => "findings/09-registration-gone-retried.md",
            Variant::BugRemovedRunnerKept => "findings/11-removed-runner-kept.md",
            _ => return None,
        })
    }

    /// The switch this variant turns off, `group.name` (`None` for the fixed controller): a fix, or
    /// for `bug-running-from-pod` the change-set switch that moved Running to the listener.
    pub fn switch(self) -> Option<&'static str> {
        Some(match self {
            Variant::Fixed => return None,
            Variant::Bug4201 => "fixes.already_exists_requeue",
            Variant::Bug1087 => "fixes.token_in_pod_hash",
            Variant::Bug1125 => "fixes.unregister_before_recreate",
            Variant::BugScaleDownNoRemove => "fixes.remove_runner_before_scale_down",
            Variant::Bug3371 => "fixes.patch_id_gate",
            Variant::Bug4647JobId => "fixes.predicate_includes_job_id",
            Variant::BugArsPredicateCounts => "fixes.ars_predicate_includes_counts",
            Variant::Bug4580Finalizer => "fixes.add_both_finalizers_at_once",
            Variant::Bug4580ShortCircuit => "fixes.no_finalizer_short_circuit",
            Variant::BugSecretsCached => "fixes.secrets_read_uncached",
            Variant::BugRunningOverwritesTerminal => "fixes.running_never_overwrites_terminal",
            Variant::BugStaleRemovalSnapshot => "fixes.reread_runner_before_removal",
            Variant::BugUnlistedRunnerGone => "fixes.keep_unlisted_running_runner",
            Variant::BugStaleDeregistration => "fixes.reread_runner_before_deregistration",
            Variant::Bug4653RemoveZero => "fixes.remove_runner_by_known_id",
            Variant::Bug4307RegistrationGone => "fixes.replace_runner_whose_registration_is_gone",
            Variant::BugRemovedRunnerKept => "fixes.delete_removed_runner_first",
            Variant::BugAckBeforeAcquire => "fixes.acquire_before_ack",
            Variant::BugRunningFromPod => "optimisations.running_from_listener",
            Variant::BugZombieListener => "fixes.listener_exits_when_poll_fails",
            Variant::Bug2255NoRemoveOnDelete => "fixes.remove_runner_on_deletion",
            Variant::BugPodOwnerNotController => "fixes.pod_controller_reference",
            Variant::BugCreateErrorFinal => "fixes.transient_create_error_retried",
            Variant::BugControllersBeforeLease => "fixes.controllers_wait_for_lease",
            Variant::BugWritesAfterLeaseLost => "fixes.writes_stop_at_lease_deadline",
            Variant::BugInitCheckReadsSidecars => "fixes.init_check_skips_sidecars",
        })
    }

    /// `profile`'s switches with this variant's switch off. `bug-ack-before-acquire` also turns off
    /// `fixes.acquire_acquirable_jobs_on_open`, which would otherwise recover the jobs its order loses:
    /// the variant is the `actions/scaleset` listener, which has neither.
    pub fn switches(self, profile: Profile) -> Switches {
        let mut switches = profile.switches();
        if let Some(switch) = self.switch() {
            switches.set_in(None, switch, false).expect("every variant names a switch");
        }
        if self == Variant::BugAckBeforeAcquire {
            switches.fixes.acquire_acquirable_jobs_on_open = false;
        }
        switches
    }

    /// Whether this variant of `profile` is the profile as it is: the profile never had the fix.
    pub fn same_as_fixed_in(self, profile: Profile) -> bool {
        self.switches(profile) == profile.switches()
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

/// A controller build: a variant of a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Build {
    /// The profile.
    pub profile: Profile,
    /// The variant of it.
    pub variant: Variant,
}

impl Build {
    /// `variant` of `profile`.
    pub const fn new(profile: Profile, variant: Variant) -> Self {
        Build { profile, variant }
    }

    /// `variant` of the default (`arcsim`) profile.
    pub const fn arcsim(variant: Variant) -> Self {
        Build { profile: Profile::Arcsim, variant }
    }

    /// The controller's switches.
    pub fn switches(self) -> Switches {
        self.variant.switches(self.profile)
    }
}

impl fmt::Display for Build {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} / {}", self.profile, self.variant)
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
    fn every_bug_variant_turns_exactly_its_switches_off() {
        let on =
            |value: serde_json::Value| value.as_object().unwrap().values().filter(|v| **v == true).count();
        let switches_on = |v: Variant| {
            let switches = v.switches(Profile::Arcsim);
            on(serde_json::to_value(switches.fixes).unwrap())
                + on(serde_json::to_value(switches.optimisations).unwrap())
        };
        let all = switches_on(Variant::Fixed);
        for v in Variant::ALL {
            // bug-ack-before-acquire is the scaleset listener: neither of its two fixes.
            let off = match v {
                Variant::Fixed => 0,
                Variant::BugAckBeforeAcquire => 2,
                _ => 1,
            };
            let expected = all - off;
            assert_eq!(switches_on(v), expected, "{v}");
            assert_eq!(v.name().parse::<Variant>(), Ok(v));
        }
        let err = "bug-9999".parse::<Variant>().unwrap_err().to_string();
        assert!(err.contains("valid: fixed, bug-4201"), "{err}");
    }

    #[test]
    fn every_write_up_a_variant_points_to_is_in_the_repository() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for variant in Variant::ALL {
            if let Some(file) = variant.write_up() {
                assert!(root.join(file).is_file(), "{variant}: {file} is missing");
            }
        }
    }

    #[test]
    fn a_variant_of_a_profile_turns_its_fix_off_in_that_profile_only() {
        let build = Build::new(Profile::Arc0131, Variant::Bug4201);
        let mut expected = Profile::Arc0131.switches();
        expected.fixes.already_exists_requeue = false;
        assert_eq!(build.switches(), expected);
        assert!(!expected.scaling.actionable_revision, "the rest stays arc-0.13.1's");
        assert_eq!(Build::arcsim(Variant::Fixed).switches(), Switches::default());
    }

    #[test]
    fn a_variant_of_a_fix_the_profile_never_had_is_the_profile_as_it_is() {
        assert!(Variant::BugStaleRemovalSnapshot.same_as_fixed_in(Profile::Arc0131));
        assert!(Variant::Bug4647JobId.same_as_fixed_in(Profile::ChangeSet));
        assert!(!Variant::Bug4647JobId.same_as_fixed_in(Profile::Arc0150));
        assert!(!Variant::Bug4201.same_as_fixed_in(Profile::Arc0131));
        assert!(Variant::Fixed.same_as_fixed_in(Profile::Arcsim));
        for profile in Profile::ALL {
            assert!(!Variant::Bug3371.same_as_fixed_in(profile), "{profile} has #3371");
        }
    }
}
