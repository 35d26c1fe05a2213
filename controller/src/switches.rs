//! Behaviour switches: ordinary configuration, like Kubernetes feature gates, never `cfg(test)`.
//!
//! [`Fixes`] has one `bool` per historic ARC fix, named after what it does and documented with the
//! ARC change that introduced it. Turning one off reproduces the behaviour *before* that change, so
//! a scenario can show the bug the fix removed. [`Optimisations`] toggles the \[V\] change set
//! (ARC-MODEL §5) whose oracles compare "on" with "off". Everything defaults to on.
//!
//! Both structs deserialize from partial input (`#[serde(default)]`): a config that names only the
//! switches it turns off keeps every other one on.

use serde::{Deserialize, Serialize};

/// One switch per historic fix. `Default` is every fix on (current ARC behaviour).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(default, deny_unknown_fields)]
pub struct Fixes {
    /// #4201 (0.13.0): AlreadyExists on the runner pod's create is watch lag, not a failure: log at
    /// info and requeue after 5 s. Off: returned as an error (error log, rate-limited requeue), the
    /// race-1 hot loop of ARC-MODEL §8.1.
    pub already_exists_requeue: bool,
    /// #1125, in scale-set form: scale-down and cleanup call RemoveRunner before deleting an idle
    /// EphemeralRunner, and keep the runner when the service answers JobStillRunning. Off: the
    /// runner is deleted on a (possibly stale) "no job" reading alone (race 3, §8.3).
    pub remove_runner_before_scale_down: bool,
    /// #3371: the ERS acts on the listener's desired count only when `spec.patchID` is 0 or differs
    /// from the newest `patch-id` on its runners, and scales down only on patch 0. Off (before it):
    /// every reconcile scales to `replicas`, down included, whatever the patch — the overscaling and
    /// churn of idle runners #3371 removed.
    pub patch_id_gate: bool,
    /// #4647 review: the ERS←ER update predicate includes `status.jobId`, because the ERS reads
    /// `HasJob()` when it picks runners to scale down. Off: a job assignment alone does not wake the
    /// ERS (§5.1).
    pub predicate_includes_job_id: bool,
    /// arcsim's fix to §5.1's ARS←ERS predicate, found by the equivalence oracle: the projection
    /// includes the ERS counts, which this ERS still writes and the ARS mirrors into its status and
    /// waits on. Off: §5.1 as written (counts outside), so the ARS status lags its runner set.
    pub ars_predicate_includes_counts: bool,
    /// #4580 (with #4320): the ERS creates runners with both finalizers, and the ER controller adds
    /// any missing ones in one patch and carries on in the same pass. Off (before #4320): runners are
    /// created without finalizers and the ER controller adds one per pass, returning after each — a
    /// reconcile and a write more per runner, on the path to its first pod.
    pub add_both_finalizers_at_once: bool,
    /// #2276 / #2947: Secrets are read straight from the API server, never from the informer cache.
    /// Off is the §8.1 ablation: a stale cache makes the ER controller register a second runner.
    pub secrets_read_uncached: bool,
    /// §5.2: the listener's `phase=Running` write is guarded (not deleting, not terminal, optimistic
    /// lock on the observed resourceVersion). Off: it is written unconditionally.
    pub running_never_overwrites_terminal: bool,
    /// arcsim's own fix for a race the suite found in ARC's `cleanUpEphemeralRunners` and
    /// `deleteIdleEphemeralRunners`: before RemoveRunner-then-delete, read the runner afresh (its
    /// snapshot may be seconds old after earlier RemoveRunner calls), skip it if it has a job or is
    /// done, remove the id it has now, and delete a still-unregistered one only if it is unchanged.
    /// Off: ARC's behaviour, which can remove `runnerId` 0 and delete a runner that has since
    /// registered and taken a job.
    pub reread_runner_before_removal: bool,
    /// arcsim's own fix for a race the suite found in ARC's EphemeralRunner deletion path: a runner
    /// deleted while its controller registers it is finalized from a cached snapshot that may not
    /// hold the runner id the registering reconcile just wrote, so RemoveRunner is called with id 0,
    /// the registration finalizer goes (a merge patch, no optimistic lock) and the registration is
    /// left at GitHub, offline, owned by nothing. With the fix, a deleting runner with no recorded id
    /// is read afresh before it is deregistered. Off: ARC's behaviour.
    pub reread_runner_before_deregistration: bool,
    /// #1087 (legacy): the registration token is part of the runner pod's `pod-template-hash`, so a
    /// refreshed token recreates the pod. Off: a restarted container registers with the old token
    /// (race 2, §8.2).
    pub token_in_pod_hash: bool,
    /// #1125 (legacy): before deleting a runner pod to recreate it, unregister the runner and keep
    /// the pod when the service says it is busy. Off: the pod is deleted right after a (possibly
    /// stale) busy check (race 3, §8.3).
    pub unregister_before_recreate: bool,
    /// arcsim's own fix for a race the suite found in #1125's `unregisterRunner` (legacy): a runner
    /// the runner list does not show is taken as gone, but the list can be 60 s stale, so a
    /// container that registered within that window looks gone; when the registration timeout then
    /// fires, its pod is deleted mid-job. With the fix, an unlisted runner whose container is
    /// running keeps its pod until a later check. Off: ARC's behaviour.
    pub keep_unlisted_running_runner: bool,
}

impl Default for Fixes {
    fn default() -> Self {
        Self::all_on()
    }
}

impl Fixes {
    /// Every fix on: current ARC behaviour.
    pub const fn all_on() -> Self {
        Self::uniform(true)
    }

    /// Every fix off: the behaviour before any of them.
    pub const fn all_off() -> Self {
        Self::uniform(false)
    }

    const fn uniform(on: bool) -> Self {
        Fixes {
            already_exists_requeue: on,
            remove_runner_before_scale_down: on,
            patch_id_gate: on,
            predicate_includes_job_id: on,
            ars_predicate_includes_counts: on,
            add_both_finalizers_at_once: on,
            secrets_read_uncached: on,
            running_never_overwrites_terminal: on,
            reread_runner_before_removal: on,
            reread_runner_before_deregistration: on,
            token_in_pod_hash: on,
            unregister_before_recreate: on,
            keep_unlisted_running_runner: on,
        }
    }
}

/// The \[V\] change set (ARC-MODEL §5). `Default` is everything on.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(default, deny_unknown_fields)]
pub struct Optimisations {
    /// §5.1: update predicates on the owned watches drop updates whose projection is unchanged.
    /// Off: only the global resourceVersion-changed filter applies.
    pub predicates: bool,
    /// §5.3: reconcilers deep-copy an object only on first mutation and skip writes when nothing
    /// changed. Off: a copy per reconcile, as ARC's `DeepCopy()` before every patch.
    pub lazy_copy: bool,
    /// §5.2: the Running phase comes from the listener's JobStarted; the ER controller publishes
    /// only Pending. Off: the ER controller copies pod phase Running into the ER (upstream).
    pub running_from_listener: bool,
}

impl Default for Optimisations {
    fn default() -> Self {
        Self::all_on()
    }
}

impl Optimisations {
    /// Every optimisation on.
    pub const fn all_on() -> Self {
        Optimisations { predicates: true, lazy_copy: true, running_from_listener: true }
    }

    /// Every optimisation off: upstream ARC.
    pub const fn all_off() -> Self {
        Optimisations { predicates: false, lazy_copy: false, running_from_listener: false }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fix_and_optimisation_is_on_by_default() {
        assert_eq!(Fixes::default(), Fixes::all_on());
        assert_eq!(Optimisations::default(), Optimisations::all_on());
        let json = serde_json::to_value(Fixes::default()).unwrap();
        let values: Vec<_> = json.as_object().unwrap().values().cloned().collect();
        assert_eq!(values.len(), 13);
        assert!(values.iter().all(|v| v == &serde_json::Value::Bool(true)), "{json}");
    }

    #[test]
    fn all_off_turns_every_switch_off() {
        let json = serde_json::to_value(Fixes::all_off()).unwrap();
        assert!(json.as_object().unwrap().values().all(|v| v == &serde_json::Value::Bool(false)));
        let json = serde_json::to_value(Optimisations::all_off()).unwrap();
        assert!(json.as_object().unwrap().values().all(|v| v == &serde_json::Value::Bool(false)));
    }

    #[test]
    fn a_partial_config_keeps_the_unnamed_switches_on() {
        let fixes: Fixes = serde_json::from_str(r#"{"token_in_pod_hash": false}"#).unwrap();
        assert_eq!(fixes, Fixes { token_in_pod_hash: false, ..Fixes::all_on() });
        let opts: Optimisations = serde_json::from_str(r#"{"predicates": false}"#).unwrap();
        assert_eq!(opts, Optimisations { predicates: false, ..Optimisations::all_on() });
    }

    #[test]
    fn a_misspelt_switch_is_rejected() {
        let err = serde_json::from_str::<Fixes>(r#"{"token_in_hash": false}"#).unwrap_err();
        assert!(err.to_string().contains("token_in_hash"), "{err}");
    }
}
