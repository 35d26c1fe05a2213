//! Step 7 of ARC-MODEL §3.1 with a pod in the cache: what the pod's state means for the runner
//! ([`classify_pod`], rows a–j), and the writes that follow.
//!
//! | # | pod state | verdict |
//! |---|---|---|
//! | a | Failed, runner container without a terminated state (eviction, `OutOf*`) | [`PodVerdict::FailedBeforeRunnerStarted`] |
//! | b | Failed, runner exit 0 | [`PodVerdict::Succeeded`] |
//! | c | Failed, runner exit 7 | [`PodVerdict::Outdated`] |
//! | d | Failed, other runner exit | [`PodVerdict::RunnerFailed`] |
//! | e | an init container terminated non-zero (#4457) | [`PodVerdict::InitContainerFailed`] |
//! | f | no runner container status yet | [`PodVerdict::Starting`] |
//! | g | runner container not terminated | [`PodVerdict::Running`] |
//! | h | runner exit 7 | [`PodVerdict::Outdated`] |
//! | i | other non-zero runner exit | [`PodVerdict::RunnerFailed`] |
//! | j | runner exit 0 | [`PodVerdict::Succeeded`] |
//!
//! Rows c and h (exit 7, #4404) and e (#4457) came after 0.13.1; with `releases.outdated_phase` off
//! exit 7 is one more non-zero exit, and with `releases.init_container_check` off init containers
//! are not looked at ([`PodChecks`]). Row e skips native sidecars (init containers with
//! `restartPolicy: Always`, such as the chart's `dind`): the kubelet restarts a sidecar that exits, so
//! its `terminated` state is a crash being recovered from, not a pod that cannot start
//! (`fixes.init_check_skips_sidecars`; ARC's check reads every init container).
//!
//! A failed runner with a job is deleted (the job is lost, #4239) with a best-effort RemoveRunner
//! (#4260); without a job only its pod is deleted, and the failure is recorded under the pod's UID, so
//! seeing the same dead pod twice (a stale cache) records it once (upstream, with
//! `departures.failure_time_kept` off, moves the failure's time to the latest sighting).

use std::collections::BTreeMap;

use crate::kit::meta::namespace_and_name;
use k8s_openapi::api::core::v1::{ContainerStateTerminated, ContainerStatus, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::EphemeralRunnerReconciler;
use super::draft::RunnerDraft;
use crate::crd::constants::{REASON_OUTDATED, RUNNER_CONTAINER_NAME};
use crate::crd::{EphemeralRunner, EphemeralRunnerPhase, EphemeralRunnerStatus};
use crate::kit::error::Result;
use crate::runtime::outcome::Outcome;
use crate::scaleset::predicates::pod_ready;

/// The runner's exit code when its version is deprecated (`ACTIONS_RUNNER_RETURN_VERSION_DEPRECATED_EXIT_CODE`).
pub const OUTDATED_EXIT_CODE: i32 = 7;

/// What a runner pod's state means (rows a–j of the module table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodVerdict {
    /// The pod failed before the runner container ran (eviction, `OutOf*`): retry with a new pod.
    FailedBeforeRunnerStarted,
    /// The runner exited 0: its job is done and it left the service.
    Succeeded,
    /// The runner exited 7: its version is deprecated.
    Outdated,
    /// The runner exited non-zero.
    RunnerFailed,
    /// An init container failed, whatever the pod phase says yet.
    InitContainerFailed,
    /// The runner container has no status yet.
    Starting,
    /// The runner container is waiting or running.
    Running,
}

/// Which rows of the table the controller has (later releases added two).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PodChecks {
    /// Rows c and h: exit 7 means Outdated (#4404, 0.14.0).
    pub outdated_phase: bool,
    /// Row e: a failed init container (#4457, 0.14.2).
    pub init_container_check: bool,
    /// Row e passes over native sidecars (arcsim's fix; ARC's check reads them too).
    pub skip_sidecars: bool,
}

impl PodChecks {
    /// Every row.
    pub const ALL: PodChecks =
        PodChecks { outdated_phase: true, init_container_check: true, skip_sidecars: true };

    /// The rows `switches` select.
    pub fn of(switches: &crate::switches::Switches) -> Self {
        PodChecks {
            outdated_phase: switches.releases.outdated_phase,
            init_container_check: switches.releases.init_container_check,
            skip_sidecars: switches.fixes.init_check_skips_sidecars,
        }
    }
}

/// Reads a runner pod's state as ARC's reconcile switch does (rows a–j, in order), with the rows
/// `checks` has.
pub fn classify_pod(pod: &Pod, checks: PodChecks) -> PodVerdict {
    let status = pod.status.as_ref();
    let runner = status.and_then(|s| s.container_statuses.as_deref()).and_then(runner_container_status);
    let runner_exit = runner.and_then(terminated).map(|t| t.exit_code);
    if status.and_then(|s| s.phase.as_deref()) == Some("Failed") {
        return match runner_exit {
            None => PodVerdict::FailedBeforeRunnerStarted,
            Some(code) => verdict_of_exit(code, checks),
        };
    }
    if checks.init_container_check && init_container_failed(pod, checks.skip_sidecars) {
        return PodVerdict::InitContainerFailed;
    }
    match (runner, runner_exit) {
        (None, _) => PodVerdict::Starting,
        (Some(_), None) => PodVerdict::Running,
        (Some(_), Some(code)) => verdict_of_exit(code, checks),
    }
}

fn verdict_of_exit(code: i32, checks: PodChecks) -> PodVerdict {
    match code {
        0 => PodVerdict::Succeeded,
        OUTDATED_EXIT_CODE if checks.outdated_phase => PodVerdict::Outdated,
        _ => PodVerdict::RunnerFailed,
    }
}

/// Whether a runner's pod may still run its process (#4664's busy guard): not finished, not
/// deleting, and its runner container not terminated.
pub(super) fn pod_is_live(pod: &Pod) -> bool {
    let status = pod.status.as_ref();
    let finished = status.and_then(|s| s.phase.as_deref()).is_some_and(|p| p == "Succeeded" || p == "Failed");
    let statuses = status.and_then(|s| s.container_statuses.as_deref()).unwrap_or_default();
    let stopped = runner_container_status(statuses).and_then(terminated).is_some();
    pod.metadata.deletion_timestamp.is_none() && !finished && !stopped
}

fn runner_container_status(statuses: &[ContainerStatus]) -> Option<&ContainerStatus> {
    statuses.iter().find(|cs| cs.name == RUNNER_CONTAINER_NAME)
}

fn terminated(status: &ContainerStatus) -> Option<&ContainerStateTerminated> {
    status.state.as_ref().and_then(|state| state.terminated.as_ref())
}

fn init_container_failed(pod: &Pod, skip_sidecars: bool) -> bool {
    let statuses = pod.status.as_ref().and_then(|s| s.init_container_statuses.as_deref());
    let sidecar = |status: &ContainerStatus| skip_sidecars && is_sidecar(pod, &status.name);
    statuses
        .unwrap_or_default()
        .iter()
        .filter(|s| !sidecar(s))
        .filter_map(terminated)
        .any(|t| t.exit_code != 0)
}

/// Whether the pod's init container `name` is a native sidecar (`restartPolicy: Always`).
fn is_sidecar(pod: &Pod, name: &str) -> bool {
    let init = pod.spec.as_ref().and_then(|s| s.init_containers.as_deref()).unwrap_or_default();
    init.iter().any(|c| c.name == name && c.restart_policy.as_deref() == Some("Always"))
}

/// The status fields ARC's `updateRunStatusFromPod` publishes for a live pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunStatus {
    /// The phase to publish (`None`: an empty phase).
    pub phase: Option<EphemeralRunnerPhase>,
    /// The pod's derived readiness.
    pub ready: bool,
    /// The pod's status reason.
    pub reason: String,
    /// The pod's status message.
    pub message: String,
}

/// The status to publish for a live `pod`, or `None` when nothing needs writing: the pod is Succeeded
/// or Failed (the termination rows decide those), or neither the phase nor readiness changed.
///
/// Upstream (`running_from_listener` off) copies the pod phase. With §5.2 on, a live pod only ever
/// publishes Pending, and a Running phase (written by the listener on JobStarted) is kept, never
/// demoted. A pod phase the runner phases lack (`Unknown`) keeps the current phase.
pub fn run_status_from_pod(
    current: Option<&EphemeralRunnerStatus>,
    pod: &Pod,
    running_from_listener: bool,
) -> Option<RunStatus> {
    let status = pod.status.clone().unwrap_or_default();
    let current_phase = current.and_then(|s| s.phase);
    let phase = match status.phase.as_deref() {
        Some("Succeeded" | "Failed") => return None,
        _ if running_from_listener && current_phase == Some(EphemeralRunnerPhase::Running) => current_phase,
        _ if running_from_listener => Some(EphemeralRunnerPhase::Pending),
        Some("Pending") => Some(EphemeralRunnerPhase::Pending),
        Some("Running") => Some(EphemeralRunnerPhase::Running),
        None | Some("") => None,
        Some(_) => current_phase,
    };
    let ready = pod_ready(pod);
    if phase == current_phase && ready == current.is_some_and(|s| s.ready) {
        return None;
    }
    Some(RunStatus {
        phase,
        ready,
        reason: status.reason.unwrap_or_default(),
        message: status.message.unwrap_or_default(),
    })
}

/// Records a failure of the pod `uid` seen at `now`: the first sighting's time is kept with
/// `keep_first` (a stale cache seeing the pod again changes nothing); without it (ARC) every
/// sighting writes `now`.
pub fn record_failure(failures: &mut BTreeMap<String, Time>, uid: String, now: Time, keep_first: bool) {
    if keep_first {
        failures.entry(uid).or_insert(now);
    } else {
        failures.insert(uid, now);
    }
}

impl EphemeralRunnerReconciler {
    /// Step 7 with a pod: acts on the pod's state.
    pub(super) async fn reconcile_pod(&self, runner: &mut RunnerDraft, pod: &Pod) -> Result<Outcome> {
        let verdict = classify_pod(pod, PodChecks::of(&self.ctx.switches));
        tracing::info!(?verdict, pod_uid = pod.metadata.uid.as_deref(), "Inspecting the runner pod");
        match verdict {
            PodVerdict::FailedBeforeRunnerStarted
            | PodVerdict::RunnerFailed
            | PodVerdict::InitContainerFailed => {
                self.delete_runner_or_pod(runner, pod).await?;
            }
            PodVerdict::Succeeded => {
                tracing::info!("Ephemeral runner has finished successfully, deleting ephemeral runner");
                self.delete_runner(runner.get()).await?;
            }
            PodVerdict::Outdated => self.mark_as_outdated(runner).await?,
            PodVerdict::Starting => tracing::info!("Waiting for runner container status to be available"),
            PodVerdict::Running => self.update_run_status_from_pod(runner, pod).await?,
        }
        Ok(Outcome::Done)
    }

    /// ARC's `updateRunStatusFromPod`: publishes phase, readiness, reason and message when they changed.
    async fn update_run_status_from_pod(&self, runner: &mut RunnerDraft, pod: &Pod) -> Result<()> {
        let running_from_listener = self.ctx.switches.optimisations.running_from_listener;
        let Some(next) = run_status_from_pod(runner.get().status.as_ref(), pod, running_from_listener) else {
            return Ok(());
        };
        tracing::info!(phase = ?next.phase, ready = next.ready, "Updating ephemeral runner status");
        let status = runner.status_mut();
        status.phase = next.phase;
        status.ready = next.ready;
        status.reason = next.reason;
        status.message = next.message;
        runner.patch_status(&self.ctx.api).await?;
        Ok(())
    }

    /// ARC's `deleteEphemeralRunnerOrPod`: a runner with a job is deleted (its job is lost) and removed
    /// from the service on a best-effort basis; otherwise only the pod goes, as a recorded failure.
    /// With `fixes.replace_runner_whose_registration_is_gone`, a runner without a job whose
    /// registration GitHub no longer holds is deleted, so its set makes a fresh one, instead of a new
    /// pod retrying the same JIT config.
    async fn delete_runner_or_pod(&self, runner: &mut RunnerDraft, pod: &Pod) -> Result<()> {
        if !runner.get().has_job() {
            if self.ctx.switches.fixes.replace_runner_whose_registration_is_gone
                && self.registration_gone(runner.get()).await
            {
                tracing::info!("The runner's registration is gone at GitHub; deleting the ephemeral runner");
                return self.delete_runner(runner.get()).await;
            }
            return self.delete_pod_as_failed(runner, pod).await;
        }
        tracing::error!("Ephemeral runner has a job assigned, but the pod has failed; deleting the runner");
        self.delete_runner(runner.get()).await?;
        if let Err(error) = self.remove_runner(runner.get()).await {
            tracing::error!(error = %error, "Failed to remove the runner from the service");
        }
        Ok(())
    }

    /// Whether GitHub answers that `runner`'s registration does not exist (GetRunner 404). Any other
    /// answer, an error or no recorded id is taken as "not known to be gone".
    async fn registration_gone(&self, runner: &EphemeralRunner) -> bool {
        let runner_id = runner.runner_id();
        if runner_id == 0 {
            return false;
        }
        let Ok(client) = self.actions_client(runner).await else { return false };
        matches!(client.get_runner(runner_id).await, Err(error) if error.is_runner_not_found())
    }

    /// ARC's `deletePodAsFailed`: deletes the pod unless it is deleting, then records the failure under
    /// the pod's UID (a UID already recorded keeps its first timestamp) with the pod's reason and message.
    async fn delete_pod_as_failed(&self, runner: &mut RunnerDraft, pod: &Pod) -> Result<()> {
        let (namespace, name) = namespace_and_name(runner.get());
        if pod.metadata.deletion_timestamp.is_none() {
            tracing::info!(pod_uid = pod.metadata.uid.as_deref(), "Deleting the ephemeral runner pod");
            self.delete_ignoring_not_found::<Pod>(namespace, name).await?;
        }
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let now = Time(self.ctx.clock.now());
        let pod_status = pod.status.clone().unwrap_or_default();
        let keep_first = self.ctx.switches.departures.failure_time_kept;
        let status = runner.status_mut();
        record_failure(&mut status.failures, uid, now, keep_first);
        status.ready = false;
        status.reason = pod_status.reason.unwrap_or_default();
        status.message = pod_status.message.unwrap_or_default();
        runner.patch_status(&self.ctx.api).await?;
        tracing::info!(failures = runner.get().failure_count(), "Recorded the pod failure");
        Ok(())
    }

    /// ARC's `markAsFailed`: phase Failed with `reason` and `message`, then RemoveRunner.
    pub(super) async fn mark_as_failed(
        &self,
        runner: &mut RunnerDraft,
        message: &str,
        reason: &str,
    ) -> Result<()> {
        tracing::info!(reason, "Updating ephemeral runner status to Failed");
        self.set_terminal_phase(runner, EphemeralRunnerPhase::Failed, reason, message).await
    }

    /// ARC's `markAsOutdated`: phase Outdated, then RemoveRunner.
    async fn mark_as_outdated(&self, runner: &mut RunnerDraft) -> Result<()> {
        tracing::info!("Updating ephemeral runner status to Outdated");
        let phase = EphemeralRunnerPhase::Outdated;
        self.set_terminal_phase(runner, phase, REASON_OUTDATED, "Runner is deprecated").await
    }

    async fn set_terminal_phase(
        &self,
        runner: &mut RunnerDraft,
        phase: EphemeralRunnerPhase,
        reason: &str,
        message: &str,
    ) -> Result<()> {
        let status = runner.status_mut();
        status.phase = Some(phase);
        status.reason = reason.to_string();
        status.message = message.to_string();
        runner.patch_status(&self.ctx.api).await?;
        self.remove_runner(runner.get()).await
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{ContainerState, ContainerStateRunning, PodCondition, PodStatus};
    use k8s_openapi::jiff::Timestamp;

    use super::*;

    fn container(name: &str, exit: Option<i32>) -> ContainerStatus {
        let state = match exit {
            Some(exit_code) => ContainerState {
                terminated: Some(ContainerStateTerminated { exit_code, ..Default::default() }),
                ..Default::default()
            },
            None => ContainerState { running: Some(ContainerStateRunning::default()), ..Default::default() },
        };
        ContainerStatus { name: name.into(), state: Some(state), ..Default::default() }
    }

    fn pod(phase: &str, runner: Option<Option<i32>>, init_exit: Option<i32>) -> Pod {
        let status = PodStatus {
            phase: Some(phase.into()).filter(|p: &String| !p.is_empty()),
            container_statuses: runner
                .map(|exit| vec![container("sidecar", Some(1)), container("runner", exit)]),
            init_container_statuses: init_exit.map(|exit| vec![container("setup", Some(exit))]),
            ..Default::default()
        };
        Pod { status: Some(status), ..Default::default() }
    }

    #[test]
    fn a_failed_pod_is_judged_by_the_runner_containers_exit_code() {
        use PodVerdict::*;
        assert_eq!(
            classify_pod(&pod("Failed", None, None), PodChecks::ALL),
            FailedBeforeRunnerStarted,
            "a: no status"
        );
        assert_eq!(
            classify_pod(&pod("Failed", Some(None), None), PodChecks::ALL),
            FailedBeforeRunnerStarted,
            "a: not terminated"
        );
        assert_eq!(
            classify_pod(&pod("Failed", Some(Some(0)), None), PodChecks::ALL),
            Succeeded,
            "b: a sidecar's exit is ignored"
        );
        assert_eq!(classify_pod(&pod("Failed", Some(Some(7)), None), PodChecks::ALL), Outdated, "c");
        assert_eq!(
            classify_pod(&pod("Failed", Some(Some(137)), Some(1)), PodChecks::ALL),
            RunnerFailed,
            "d before e"
        );
    }

    #[test]
    fn a_live_pod_is_judged_by_init_containers_then_the_runner_container() {
        use PodVerdict::*;
        assert_eq!(classify_pod(&pod("Pending", None, Some(1)), PodChecks::ALL), InitContainerFailed, "e");
        assert_eq!(
            classify_pod(&pod("Pending", None, Some(0)), PodChecks::ALL),
            Starting,
            "f: a finished init container is fine"
        );
        assert_eq!(classify_pod(&pod("Running", None, None), PodChecks::ALL), Starting, "f");
        assert_eq!(classify_pod(&pod("Running", Some(None), None), PodChecks::ALL), Running, "g");
        assert_eq!(
            classify_pod(&pod("Succeeded", Some(None), None), PodChecks::ALL),
            Running,
            "g: no termination status yet"
        );
        assert_eq!(classify_pod(&pod("Running", Some(Some(7)), None), PodChecks::ALL), Outdated, "h");
        assert_eq!(classify_pod(&pod("Running", Some(Some(2)), None), PodChecks::ALL), RunnerFailed, "i");
        assert_eq!(classify_pod(&pod("Succeeded", Some(Some(0)), None), PodChecks::ALL), Succeeded, "j");
        assert_eq!(
            classify_pod(&Pod::default(), PodChecks::ALL),
            Starting,
            "a pod without status is starting"
        );
    }

    #[test]
    fn a_crashed_native_sidecar_fails_the_pod_only_without_the_sidecar_fix() {
        use k8s_openapi::api::core::v1::{Container, PodSpec};
        let mut crashed = pod("Running", Some(None), Some(137));
        let sidecar =
            Container { name: "setup".into(), restart_policy: Some("Always".into()), ..Default::default() };
        crashed.spec = Some(PodSpec { init_containers: Some(vec![sidecar]), ..Default::default() });
        assert_eq!(classify_pod(&crashed, PodChecks::ALL), PodVerdict::Running, "the kubelet restarts it");
        let upstream = PodChecks { skip_sidecars: false, ..PodChecks::ALL };
        assert_eq!(classify_pod(&crashed, upstream), PodVerdict::InitContainerFailed, "ARC 0.14.2's check");
        let plain = pod("Running", Some(None), Some(137));
        assert_eq!(
            classify_pod(&plain, PodChecks::ALL),
            PodVerdict::InitContainerFailed,
            "an init container"
        );
    }

    #[test]
    fn before_0_14_exit_7_is_a_plain_failure_and_init_containers_are_not_inspected() {
        use PodVerdict::*;
        let none = PodChecks { outdated_phase: false, init_container_check: false, skip_sidecars: false };
        assert_eq!(classify_pod(&pod("Failed", Some(Some(7)), None), none), RunnerFailed, "c");
        assert_eq!(classify_pod(&pod("Running", Some(Some(7)), None), none), RunnerFailed, "h");
        assert_eq!(classify_pod(&pod("Pending", None, Some(1)), none), Starting, "e");
        assert_eq!(PodChecks::of(&crate::Profile::Arc0131.switches()), none);
        assert_eq!(PodChecks::of(&crate::Switches::default()), PodChecks::ALL);
    }

    #[test]
    fn a_failure_keeps_its_first_time_unless_upstream_overwrites_it() {
        let at = |s: i64| Time(Timestamp::from_second(1_767_225_600 + s).unwrap());
        let mut kept = BTreeMap::new();
        record_failure(&mut kept, "pod-1".into(), at(1), true);
        record_failure(&mut kept, "pod-1".into(), at(9), true);
        assert_eq!(kept["pod-1"], at(1));
        let mut overwritten = BTreeMap::new();
        record_failure(&mut overwritten, "pod-1".into(), at(1), false);
        record_failure(&mut overwritten, "pod-1".into(), at(9), false);
        assert_eq!((overwritten.len(), &overwritten["pod-1"]), (1, &at(9)));
    }

    fn ready_at(pod: &mut Pod, status: &str, second: i64) {
        let conditions =
            pod.status.get_or_insert_with(Default::default).conditions.get_or_insert_with(Vec::new);
        conditions.push(PodCondition {
            type_: "Ready".into(),
            status: status.into(),
            last_transition_time: Some(Time(Timestamp::from_second(1_767_225_600 + second).unwrap())),
            ..Default::default()
        });
    }

    fn status_in(phase: Option<EphemeralRunnerPhase>, ready: bool) -> EphemeralRunnerStatus {
        EphemeralRunnerStatus { phase, ready, ..Default::default() }
    }

    #[test]
    fn upstream_copies_the_pod_phase_and_writes_only_on_a_change() {
        use EphemeralRunnerPhase::*;
        let running = pod("Running", Some(None), None);
        let next = run_status_from_pod(None, &running, false).expect("a change");
        assert_eq!((next.phase, next.ready), (Some(Running), false));
        assert_eq!(run_status_from_pod(Some(&status_in(Some(Running), false)), &running, false), None);
        let pending = pod("Pending", Some(None), None);
        let back = run_status_from_pod(Some(&status_in(Some(Running), false)), &pending, false);
        assert_eq!(back.map(|s| s.phase), Some(Some(Pending)));
        assert_eq!(run_status_from_pod(None, &pod("Succeeded", Some(None), None), false), None);
        assert_eq!(run_status_from_pod(None, &pod("Failed", Some(None), None), false), None);
        let unknown = pod("Unknown", Some(None), None);
        assert_eq!(run_status_from_pod(Some(&status_in(Some(Running), false)), &unknown, false), None);
    }

    #[test]
    fn with_running_from_the_listener_a_live_pod_publishes_pending_and_never_demotes_running() {
        use EphemeralRunnerPhase::*;
        let running = pod("Running", Some(None), None);
        let next = run_status_from_pod(None, &running, true).expect("a change");
        assert_eq!(next.phase, Some(Pending));
        assert_eq!(run_status_from_pod(Some(&status_in(Some(Pending), false)), &running, true), None);
        assert_eq!(run_status_from_pod(Some(&status_in(Some(Running), false)), &running, true), None);
        let mut ready = running.clone();
        ready_at(&mut ready, "True", 1);
        let next = run_status_from_pod(Some(&status_in(Some(Running), false)), &ready, true).expect("ready");
        assert_eq!((next.phase, next.ready), (Some(Running), true));
    }

    #[test]
    fn readiness_follows_the_latest_ready_condition() {
        let mut running = pod("Running", Some(None), None);
        ready_at(&mut running, "True", 1);
        ready_at(&mut running, "False", 2);
        let current = status_in(Some(EphemeralRunnerPhase::Running), true);
        let next = run_status_from_pod(Some(&current), &running, false).expect("became unready");
        assert!(!next.ready);
    }
}
