//! [`Fixes`]: one `bool` per historic fix, named after what it does and documented with the change
//! that introduced it (an ARC pull request, or a race this suite found). Turning one off reproduces
//! the behaviour *before* that change, so a scenario can show the bug the fix removed; a bug variant
//! is a profile with one of these turned off. The last few are guards against plausible bugs that
//! ARC never had (origin "plausible bug, not in ARC"): on is ARC's behaviour and this project's,
//! off is a mistake a controller developer could make, there so that an oracle no historic bug
//! fails is still shown to fail.

use serde::{Deserialize, Serialize};

use super::SwitchDoc;

/// One switch per historic fix. `Default` is every fix on.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(default, deny_unknown_fields)]
pub struct Fixes {
    /// #4201 (0.13.0): AlreadyExists on the runner pod's create is watch lag, not a failure: log at
    /// info and requeue after 5 s. Off: returned as an error (error log, rate-limited requeue), the
    /// race-1 hot loop of ARC-MODEL §8.1.
    pub already_exists_requeue: bool,
    /// #2255 (0.3.0): a deleting EphemeralRunner is removed from the service before anything else
    /// (the registration finalizer): while RemoveRunner answers JobStillRunning the runner keeps its
    /// pod and the deletion waits 30 s and tries again. Off (before #2255): deletion deletes the pod
    /// and the JIT secret at once and drops the finalizers without RemoveRunner, so a runner deleted
    /// mid-job (by a user's `kubectl delete`, say) takes its job down with its pod and its
    /// registration is left behind.
    pub remove_runner_on_deletion: bool,
    /// #1125, in scale-set form: scale-down and cleanup call RemoveRunner before deleting an idle
    /// EphemeralRunner, and keep the runner when the service answers JobStillRunning. Off: the
    /// runner is deleted on a (possibly stale) "no job" reading alone (race 3, §8.3).
    pub remove_runner_before_scale_down: bool,
    /// #3371: the ERS acts on the listener's desired count only when `spec.patchID` is 0 or differs
    /// from the newest `patch-id` on its runners, and scales down only on patch 0. Off (before it):
    /// every reconcile scales to `replicas`, down included, whatever the patch — the overscaling and
    /// churn of idle runners #3371 removed.
    pub patch_id_gate: bool,
    /// #4647 review (`452febd4`): the ERS←ER update predicate includes `status.jobId`, because the
    /// ERS reads `HasJob()` when it picks runners to scale down. Off: a job assignment alone does not
    /// wake the ERS (§5.1). Meaningless without `optimisations.predicates`.
    pub predicate_includes_job_id: bool,
    /// arcsim's fix to §5.1's ARS←ERS predicate, found by the equivalence oracle: the projection
    /// includes the ERS counts, which this ERS still writes and the ARS mirrors into its status and
    /// waits on. Off: §5.1 (and #4647) as written, counts outside, so the ARS status lags its runner
    /// set. Meaningless without `optimisations.predicates`.
    pub ars_predicate_includes_counts: bool,
    /// #4320 (0.13.1): the ERS creates runners with both finalizers, and the ER controller adds any
    /// missing ones in one patch and carries on in the same pass. Off (before #4320): runners are
    /// created without finalizers and the ER controller adds one per pass, returning after each — a
    /// reconcile and a write more per runner, on the path to its first pod.
    pub add_both_finalizers_at_once: bool,
    /// #4580: when a runner has neither finalizer, the ER controller adds both before it registers
    /// the runner. Off: ARC HEAD's short circuit (`added = added || AddFinalizer(main)`), which adds
    /// only the main finalizer and carries on into registration in the same pass, so a deletion
    /// before the next pass finds no registration finalizer and skips RemoveRunner: the runner stays
    /// registered with nothing to own it. HEAD reaches that branch only for runners created without
    /// finalizers (by a pre-#4320 ERS during an upgrade, or after a tool stripped them), so with this
    /// switch off the ERS also creates runners without finalizers.
    pub no_finalizer_short_circuit: bool,
    /// #2276 / #2947: Secrets are read straight from the API server, never from the informer cache.
    /// Off is the §8.1 ablation: a stale cache makes the ER controller register a second runner.
    pub secrets_read_uncached: bool,
    /// §5.2 / #4646: the listener's `phase=Running` write is guarded (not deleting, not terminal,
    /// optimistic lock on the observed resourceVersion). Off: it is written unconditionally.
    /// Meaningless without `optimisations.running_from_listener`.
    pub running_never_overwrites_terminal: bool,
    /// ARC's listener (\[SS\] `listener.Run`): a GetMessage long poll that fails after the GitHub
    /// client's retries ends the listener, so its pod is recreated and opens a fresh session. Off
    /// (the zombie listener of actions/scaleset #63, ARC #4285): the listener logs the failure and
    /// waits to be stopped, its pod Running and its session held but never polled again, so no job
    /// of its scale set is acquired until something restarts it.
    pub listener_exits_when_poll_fails: bool,
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
    /// is read afresh before it is deregistered. Off: ARC's behaviour (0.13.1 to HEAD
    /// `deleteRunnerFromService` removes the snapshot's `Status.RunnerId`).
    pub reread_runner_before_deregistration: bool,
    /// #4619 / #4683 (the fix of #4653): RemoveRunner is never asked for id 0. A deleting runner with
    /// no recorded id (after `reread_runner_before_deregistration`'s fresh read, when that is on) was
    /// registered under no id this controller knows, so its registration finalizer goes without a
    /// call; with `reread_runner_before_removal`, scale-down and cleanup skip the call for a runner
    /// still unregistered when read afresh. Where the service answers 204 for id 0 this changes no
    /// outcome; where it refuses id 0 (assumption `unregistered-runner-removal=refuse-id-zero`) it
    /// is what lets the runner go. Off: ARC 0.13.1's `deleteRunnerFromService` and
    /// `deleteEphemeralRunnerWithActionsClient`, which remove `runnerId` 0, so a runner that never
    /// registered stays deleting forever there (#4653). (#4664 reads the id from the JIT secret
    /// instead, which also closes `reread_runner_before_deregistration`'s window; not modelled.)
    pub remove_runner_by_known_id: bool,
    /// arcsim's own fix for a race the suite found in ARC's `deleteIdleEphemeralRunners`: when
    /// RemoveRunner went through and the EphemeralRunner's delete then failed (a 429, a 5xx) or the
    /// process stopped between the two, nothing records the removal. ARC counts the runner as kept
    /// (`deleteEphemeralRunnerWithActionsClient` returns `false, err`), so the walk removes one more,
    /// and on the next pass the count is met: the removed runner stays, counted live with no
    /// registration behind it, until its pod exits (at once when the service answers its poll
    /// `RunnerNotFound`; 6.6–16.5 min while actions/runner retries "registration not found",
    /// assumption `removed-runner-poll`). With the fix the set marks the runner before RemoveRunner
    /// (annotation `actions.github.com/removing-runner-id`), counts a removed runner as removed, and
    /// every pass of any process finishes a marked live runner's removal (RemoveRunner again, then
    /// the delete; `JobStillRunning` takes the mark off). Off: ARC's behaviour (0.13.1 to master
    /// `2ee6b3b8`).
    pub delete_removed_runner_first: bool,
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
    /// arcsim's own fix for a race the suite found in the `actions/scaleset` listener (0.14+): it
    /// acknowledges a message (DeleteMessage) before it acquires the message's available jobs, so a
    /// listener that dies between the two (a crash, an OOM kill, a node drain, or an error on
    /// AcquireJobs) leaves those jobs acknowledged but never acquired: GitHub does not offer them
    /// again, the next listener's statistics count only assigned jobs, and the jobs wait until
    /// something else asks for a runner (a form of #4027). With the fix, the listener acquires first
    /// and acknowledges after, as 0.13's worker did, so an unacknowledged message is redelivered to
    /// the next session. Off: the `actions/scaleset` order.
    pub acquire_before_ack: bool,
    /// arcsim's fix for a listener that scales from a stale `totalAssignedJobs` (#4397, open): the
    /// statistics come only with messages, so when the last message's count was stale (the service
    /// read it from a lagging view, assumption `service-reads`) the listener holds runners nobody
    /// needs for as long as no other message comes. With the fix, a 202 (a quiet long poll, every
    /// ~50 s) reads the scale set's statistics afresh (GetRunnerScaleSet) before scaling. Off:
    /// ARC's behaviour, the message's count until the next message.
    pub reread_statistics_when_quiet: bool,
    /// arcsim's fix for a runner whose registration GitHub dropped before its pod connected (assumption
    /// `registration-lifetime=unconnected-5-min`; #4307 and #4183: "Registration … was not found"):
    /// when its pod fails, ARC records the failure and makes a new pod with the same JIT config, which
    /// GitHub refuses again, until the failure limit. With the fix, a failed runner without a job whose
    /// GetRunner answers 404 is deleted, so its set makes a fresh registration (as ARC commit
    /// `ff7b81dc`'s health check replaces a running runner whose registration is gone). Off: ARC's
    /// retries.
    pub replace_runner_whose_registration_is_gone: bool,
    /// arcsim's fix, after ARC up to 0.8.1 (`GetAcquirableJobs` when a session opened, dropped in
    /// 0.8.2): a listener whose new session reports available jobs acquires those nobody has
    /// acquired. Where the service drops what a dead listener received but never acknowledged
    /// (assumption `unacknowledged-messages=dropped`, #4027), their offers never come again and the
    /// jobs would wait forever. Off: only the jobs messages offer are acquired.
    pub acquire_acquirable_jobs_on_open: bool,
    /// arcsim's fix, as actions/scaleset #123 proposes: when refreshing the message session answers
    /// 404 (the service dropped the session, assumption `session-refresh=ends-with-token`), the
    /// listener opens a new session and carries on instead of exiting, which left the scale set
    /// without a listener until its pod was restarted. Off: ARC's exit.
    pub new_session_when_session_gone: bool,
    /// An arcsim fix (assumption `rest-rate-limits`): while GitHub rations the legacy controller's
    /// calls (it refused one for its rate limit within the hour), a Runner whose pod template is
    /// stale (a new registration token) and whose runner container has crashed gets a new pod at once,
    /// with no registration check and no unregistration: a crashed container runs no job, and its
    /// restart would run `config.sh` with the old, perhaps expired, token (as ARC's #1420, v0.22+,
    /// deletes a pod that stopped prematurely without unregistering it). Unrationed, ARC's path stays
    /// (race 2's window). Off: the check first (refused and retried every 30 s,
    /// `retryDelayOnGitHubAPIRateLimitError`), while the container restarts with the expired token.
    pub recreate_crashed_runner_with_stale_token: bool,
    /// A plausible bug, not in ARC: the runner pod names its EphemeralRunner as *controller*
    /// (ARC's `createPod` calls `ctrl.SetControllerReference`, and its pod builder writes
    /// `controller: true` too). Off: the look-alike `controllerutil.SetOwnerReference`, an owner
    /// reference without `controller` or `blockOwnerDeletion`: the garbage collector still removes the
    /// pod with its runner, but `Owns(Pod)` maps no pod event to the runner (it follows controller
    /// references only), so the runner's pass no longer follows its pod. ARC would need both places
    /// to slip.
    pub pod_controller_reference: bool,
    /// A plausible bug, not in ARC: a pod create refused by anything but AlreadyExists, Invalid,
    /// Forbidden or a quota (a 5xx, a throttle, a lost answer) is an error and retried (ARC's
    /// `default: return err`). Off: it marks the runner Failed as an invalid pod does; when the create
    /// had committed and only its answer was lost, the runner is Failed while its pod runs, and the
    /// pass the pod's ADD wakes, on a snapshot older than that write, publishes the pod's phase over
    /// it (ARC's status copy is the same unlocked merge patch; ARC never writes Failed with a pod
    /// alive, so it has no such write to undo).
    pub transient_create_error_retried: bool,
    /// A plausible bug, not in ARC: with leader election, a process starts its controllers only once
    /// it holds the Lease (controller-runtime's default: every controller needs leader election).
    /// Off: the controllers start at process start on every replica and the election decides only
    /// who renews the Lease, as controller-runtime does for a runnable whose `NeedLeaderElection()`
    /// is false (a controller built with `NeedLeaderElection: false`): a standby writes too.
    pub controllers_wait_for_lease: bool,
    /// arcsim's, not in ARC (client-go's election is not fencing): a leader's controllers write only
    /// while the Lease was renewed within `renew_deadline` on the process's own clock
    /// (`ops::lease_guard`). Off, as in every ARC release: a leader stopped past its lease (a paused
    /// VM, a long GC) goes on writing from its in-flight reconciles and due timers until its renewal
    /// loop notices that another process took the Lease.
    pub writes_stop_at_lease_deadline: bool,
    /// arcsim's, not in ARC (found by this suite; docs/windows.md "Sidecars"): the init-container
    /// check (#4457, `releases.init_container_check`) passes over native sidecars, init containers
    /// with `restartPolicy: Always` such as the chart's `dind` (#3842), which the kubelet restarts
    /// when they exit. Off, as in ARC 0.14.2 to HEAD: a sidecar's crash, reported `terminated` until
    /// the kubelet's next sync restarts it, reads as a failed init container, and the runner's pod is
    /// deleted as failed (or, with a job, the runner deleted) though the runner is fine.
    pub init_check_skips_sidecars: bool,
}

/// Every fix, with its origin, in declaration order.
pub(super) const DOCS: &[SwitchDoc] = &[
    SwitchDoc::new(
        "already_exists_requeue",
        "#4201 (0.13.0)",
        "pod AlreadyExists is watch lag: info log, requeue 5 s",
    ),
    SwitchDoc::new(
        "remove_runner_on_deletion",
        "#2255 (0.3.0)",
        "a deleting runner is removed from the service before its pod goes",
    ),
    SwitchDoc::new(
        "remove_runner_before_scale_down",
        "#1125 (scale-set form)",
        "RemoveRunner before deleting an idle runner",
    ),
    SwitchDoc::new(
        "patch_id_gate",
        "#3371 (0.9.0)",
        "act only on a new patch ID; scale down only on patch 0",
    ),
    SwitchDoc::new(
        "predicate_includes_job_id",
        "#4647 review (0.15.0)",
        "ERS<-ER predicate sees status.jobId",
    ),
    SwitchDoc::new("ars_predicate_includes_counts", "arcsim", "ARS<-ERS predicate sees the ERS counts"),
    SwitchDoc::new(
        "add_both_finalizers_at_once",
        "#4320 (0.13.1)",
        "runners created with both finalizers; missing ones added in one pass",
    ),
    SwitchDoc::new(
        "no_finalizer_short_circuit",
        "#4580 (0.15.0)",
        "no short circuit: both finalizers before registration",
    ),
    SwitchDoc::new(
        "secrets_read_uncached",
        "#2276/#2947",
        "JIT secrets read from the API server, not a cache",
    ),
    SwitchDoc::new(
        "running_never_overwrites_terminal",
        "#4646 (0.15.0)",
        "listener's Running write guarded and locked",
    ),
    SwitchDoc::new(
        "listener_exits_when_poll_fails",
        "ARC listener.Run; actions/scaleset #63",
        "listener exits when its long poll fails, not a zombie",
    ),
    SwitchDoc::new(
        "reread_runner_before_removal",
        "arcsim",
        "re-read a runner before RemoveRunner-then-delete",
    ),
    SwitchDoc::new(
        "reread_runner_before_deregistration",
        "arcsim",
        "re-read a deleting runner with no id before RemoveRunner",
    ),
    SwitchDoc::new(
        "remove_runner_by_known_id",
        "#4619/#4683 (fixes #4653)",
        "never RemoveRunner(0): a runner with no id is not removed",
    ),
    SwitchDoc::new(
        "delete_removed_runner_first",
        "arcsim",
        "a runner is marked before RemoveRunner; a marked live runner's removal is finished first",
    ),
    SwitchDoc::new("token_in_pod_hash", "#1087 (legacy)", "registration token in the legacy pod hash"),
    SwitchDoc::new(
        "unregister_before_recreate",
        "#1125 (legacy)",
        "unregister before recreating a legacy pod",
    ),
    SwitchDoc::new(
        "keep_unlisted_running_runner",
        "arcsim (legacy)",
        "keep the pod of an unlisted runner whose container runs",
    ),
    SwitchDoc::new(
        "acquire_before_ack",
        "arcsim",
        "listener acquires a message's jobs before acknowledging it",
    ),
    SwitchDoc::new(
        "reread_statistics_when_quiet",
        "arcsim (#4397)",
        "a quiet long poll re-reads the scale set's statistics before scaling",
    ),
    SwitchDoc::new(
        "replace_runner_whose_registration_is_gone",
        "arcsim (#4307, ff7b81dc)",
        "a failed runner whose registration is gone is replaced, not retried",
    ),
    SwitchDoc::new(
        "acquire_acquirable_jobs_on_open",
        "arcsim (ARC <= 0.8.1's GetAcquirableJobs)",
        "a new session with available jobs acquires those nobody acquired",
    ),
    SwitchDoc::new(
        "new_session_when_session_gone",
        "arcsim (actions/scaleset #123)",
        "a refresh answered 404 opens a new session instead of exiting",
    ),
    SwitchDoc::new(
        "recreate_crashed_runner_with_stale_token",
        "arcsim (rest-rate-limits)",
        "rate-limited: a crashed legacy runner with a stale pod template gets a new pod unasked",
    ),
    SwitchDoc::new(
        "pod_controller_reference",
        "plausible bug, not in ARC",
        "runner pod owned by its runner as controller, not just owner",
    ),
    SwitchDoc::new(
        "transient_create_error_retried",
        "plausible bug, not in ARC",
        "a pod create refused by a 5xx or lost answer is retried, not Failed",
    ),
    SwitchDoc::new(
        "controllers_wait_for_lease",
        "plausible bug, not in ARC",
        "with leader election, controllers start only once the Lease is held",
    ),
    SwitchDoc::new(
        "writes_stop_at_lease_deadline",
        "arcsim (client-go's election is not fencing)",
        "a leader writes only within the renew deadline of its last renewal",
    ),
    SwitchDoc::new(
        "init_check_skips_sidecars",
        "arcsim (#4457's check and #3842's dind sidecar)",
        "a crashed native sidecar is not a failed init container",
    ),
];

impl Default for Fixes {
    fn default() -> Self {
        Self::all_on()
    }
}

impl Fixes {
    /// Every fix on.
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
            remove_runner_on_deletion: on,
            remove_runner_before_scale_down: on,
            patch_id_gate: on,
            predicate_includes_job_id: on,
            ars_predicate_includes_counts: on,
            add_both_finalizers_at_once: on,
            no_finalizer_short_circuit: on,
            secrets_read_uncached: on,
            running_never_overwrites_terminal: on,
            listener_exits_when_poll_fails: on,
            reread_runner_before_removal: on,
            reread_runner_before_deregistration: on,
            remove_runner_by_known_id: on,
            delete_removed_runner_first: on,
            token_in_pod_hash: on,
            unregister_before_recreate: on,
            keep_unlisted_running_runner: on,
            acquire_before_ack: on,
            reread_statistics_when_quiet: on,
            replace_runner_whose_registration_is_gone: on,
            acquire_acquirable_jobs_on_open: on,
            new_session_when_session_gone: on,
            recreate_crashed_runner_with_stale_token: on,
            pod_controller_reference: on,
            transient_create_error_retried: on,
            controllers_wait_for_lease: on,
            writes_stop_at_lease_deadline: on,
            init_check_skips_sidecars: on,
        }
    }

    /// Whether new runners are created with both finalizers: only when neither finalizer fix is off
    /// (both model runners that reach the ER controller without finalizers).
    pub const fn finalizers_at_creation(&self) -> bool {
        self.add_both_finalizers_at_once && self.no_finalizer_short_circuit
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switches::docs_match_fields;

    #[test]
    fn every_fix_is_on_by_default_and_all_off_turns_every_one_off() {
        assert_eq!(Fixes::default(), Fixes::all_on());
        let on = serde_json::to_value(Fixes::all_on()).unwrap();
        assert!(on.as_object().unwrap().values().all(|v| v == &serde_json::Value::Bool(true)), "{on}");
        let off = serde_json::to_value(Fixes::all_off()).unwrap();
        assert!(off.as_object().unwrap().values().all(|v| v == &serde_json::Value::Bool(false)), "{off}");
    }

    #[test]
    fn a_partial_config_keeps_the_unnamed_fixes_on_and_a_misspelt_one_is_rejected() {
        let fixes: Fixes = serde_json::from_str(r#"{"token_in_pod_hash": false}"#).unwrap();
        assert_eq!(fixes, Fixes { token_in_pod_hash: false, ..Fixes::all_on() });
        let err = serde_json::from_str::<Fixes>(r#"{"token_in_hash": false}"#).unwrap_err();
        assert!(err.to_string().contains("token_in_hash"), "{err}");
    }

    #[test]
    fn runners_are_created_with_finalizers_only_while_both_finalizer_fixes_are_on() {
        assert!(Fixes::all_on().finalizers_at_creation());
        assert!(!Fixes { add_both_finalizers_at_once: false, ..Fixes::all_on() }.finalizers_at_creation());
        assert!(!Fixes { no_finalizer_short_circuit: false, ..Fixes::all_on() }.finalizers_at_creation());
    }

    #[test]
    fn every_fix_is_documented_in_order() {
        docs_match_fields(&Fixes::default(), DOCS);
    }
}
