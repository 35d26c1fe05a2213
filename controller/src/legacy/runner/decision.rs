//! The decisions of the Runner controller that need no I/O (ARC-MODEL §7 steps 5 and 8), so each can
//! be tested as a table:
//!
//! - [`is_stopped`]: the pod succeeded, or its runner container exited 0.
//! - [`runner_container_running`]: the runner container is running now.
//! - [`pod_template_stale`]: the pod was built from another template than the Runner's now.
//! - [`runner_container_crashed`]: the runner container exited non-zero or waits to restart.
//! - [`Registration::of`]: what ListRunners says about the runner (ARC's `IsRunnerBusy`).
//! - [`RegistrationCheck::verdict`]: recreate the pod, look again later, or keep it.
//! - [`deferred_check`]: how long until the next registration check is due.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;

use crate::crd::constants::{LABEL_POD_TEMPLATE_HASH, RUNNER_CONTAINER_NAME};
use crate::github::wire::LegacyRunner;

/// Whether the runner in `pod` has stopped for good: the pod `Succeeded`, or it is `Running` with
/// the `runner` container terminated with exit code 0.
pub(crate) fn is_stopped(pod: &Pod) -> bool {
    let Some(status) = &pod.status else { return false };
    match status.phase.as_deref() {
        Some("Succeeded") => true,
        Some("Running") => status.container_statuses.iter().flatten().any(|c| {
            c.name == RUNNER_CONTAINER_NAME
                && c.state.as_ref().and_then(|s| s.terminated.as_ref()).is_some_and(|t| t.exit_code == 0)
        }),
        _ => false,
    }
}

/// Whether the `runner` container of `pod` is running now (its state says so).
pub(crate) fn runner_container_running(pod: &Pod) -> bool {
    let Some(status) = &pod.status else { return false };
    status.container_statuses.iter().flatten().any(|c| {
        c.name == RUNNER_CONTAINER_NAME && c.state.as_ref().and_then(|s| s.running.as_ref()).is_some()
    })
}

/// Whether `pod`'s `pod-template-hash` label differs from `desired_hash` (the Runner changed, or with
/// #1087 its token did).
pub(crate) fn pod_template_stale(pod: &Pod, desired_hash: &str) -> bool {
    let current = pod.metadata.labels.as_ref().and_then(|l| l.get(LABEL_POD_TEMPLATE_HASH));
    current.map(String::as_str) != Some(desired_hash)
}

/// Whether the `runner` container of `pod` has crashed: terminated with a non-zero exit code, or
/// waiting in `CrashLoopBackOff` to start again. Its process runs no job.
pub(crate) fn runner_container_crashed(pod: &Pod) -> bool {
    let Some(status) = &pod.status else { return false };
    status.container_statuses.iter().flatten().filter(|c| c.name == RUNNER_CONTAINER_NAME).any(|c| {
        let Some(state) = &c.state else { return false };
        let failed = state.terminated.as_ref().is_some_and(|t| t.exit_code != 0);
        let backing_off =
            state.waiting.as_ref().is_some_and(|w| w.reason.as_deref() == Some("CrashLoopBackOff"));
        failed || backing_off
    })
}

/// What GitHub's runner list says about one runner. `busy` may be stale (the list is cached).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Registration {
    /// Listed and online.
    Online {
        /// Running a job.
        busy: bool,
    },
    /// Listed but offline (ARC's `RunnerOffline`); a runner can show busy while offline.
    Offline {
        /// Running a job.
        busy: bool,
    },
    /// Not listed (ARC's `RunnerNotFound`).
    NotFound,
}

impl Registration {
    /// The entry named `name` in `runners`.
    pub(crate) fn of(runners: &[LegacyRunner], name: &str) -> Self {
        match runners.iter().find(|r| r.name == name) {
            None => Registration::NotFound,
            Some(r) if r.status == "offline" => Registration::Offline { busy: r.busy },
            Some(r) => Registration::Online { busy: r.busy },
        }
    }

    /// Whether the runner is listed as busy.
    pub(crate) fn is_busy(self) -> bool {
        matches!(self, Registration::Online { busy: true } | Registration::Offline { busy: true })
    }
}

/// Why a runner pod is deleted to be recreated (a metric label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RestartReason {
    /// The pod succeeded or its runner exited 0 (non-ephemeral runners restart).
    Stopped,
    /// The pod-template hash changed (spec, labels, base URL, or with #1087 the token) and the runner
    /// is not listed busy.
    TemplateChanged,
    /// The runner was never listed within the registration timeout.
    NeverRegistered,
    /// The runner stayed offline, not busy, past the registration timeout.
    StayedOffline,
    /// The pod template is stale and the runner container has crashed
    /// (`fixes.recreate_crashed_runner_with_stale_token`).
    CrashedWithStaleTemplate,
}

impl RestartReason {
    /// A stable label.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RestartReason::Stopped => "stopped",
            RestartReason::TemplateChanged => "template_changed",
            RestartReason::NeverRegistered => "never_registered",
            RestartReason::StayedOffline => "stayed_offline",
            RestartReason::CrashedWithStaleTemplate => "crashed_stale_template",
        }
    }
}

/// The inputs of one registration check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RegistrationCheck {
    /// What ListRunners said.
    pub registration: Registration,
    /// The running pod's `pod-template-hash` differs from the desired pod's.
    pub template_changed: bool,
    /// The pod was created more than the registration timeout ago.
    pub registration_timed_out: bool,
}

/// What a registration check decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CheckVerdict {
    /// Delete the pod (after unregistering, with #1125) so that it is recreated.
    Restart(RestartReason),
    /// The runner is not (yet) registered or online, within the timeout: record the check time and
    /// look again after the recheck interval.
    Recheck,
    /// Keep the pod as it is.
    Keep,
}

impl RegistrationCheck {
    /// ARC's decision: an outdated pod is replaced unless the runner is listed busy (the read a job
    /// can race with, §8.3); a runner not listed, or offline and idle, past the timeout is replaced;
    /// within the timeout it is rechecked; otherwise the pod stays.
    pub(crate) fn verdict(&self) -> CheckVerdict {
        let Self { registration, template_changed, registration_timed_out } = *self;
        if template_changed && !registration.is_busy() {
            return CheckVerdict::Restart(RestartReason::TemplateChanged);
        }
        match registration {
            Registration::NotFound if registration_timed_out => {
                CheckVerdict::Restart(RestartReason::NeverRegistered)
            }
            Registration::Offline { busy: false } if registration_timed_out => {
                CheckVerdict::Restart(RestartReason::StayedOffline)
            }
            Registration::NotFound | Registration::Offline { .. } if !registration_timed_out => {
                CheckVerdict::Recheck
            }
            _ => CheckVerdict::Keep,
        }
    }
}

/// How long to wait before the registration check may run again, when the last one (at
/// `last_check`) was less than `interval` ago. As ARC does, a remaining wait of a second or less
/// counts as due, because a requeue may fire slightly early.
pub(crate) fn deferred_check(
    last_check: Option<Timestamp>,
    interval: Duration,
    now: Timestamp,
) -> Option<Duration> {
    let last_check = last_check?;
    let due = last_check.checked_add(SignedDuration::try_from(interval).ok()?).ok()?;
    let remaining = due.duration_since(now).checked_sub(SignedDuration::from_secs(1))?;
    Duration::try_from(remaining).ok().filter(|wait| !wait.is_zero())
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{
        ContainerState, ContainerStateRunning, ContainerStateTerminated, ContainerStateWaiting,
        ContainerStatus, PodStatus,
    };

    use super::*;

    fn pod(phase: &str, containers: Vec<(&str, Option<i32>)>) -> Pod {
        let statuses = containers
            .into_iter()
            .map(|(name, exit)| ContainerStatus {
                name: name.into(),
                state: Some(match exit {
                    Some(exit_code) => ContainerState {
                        terminated: Some(ContainerStateTerminated { exit_code, ..Default::default() }),
                        ..Default::default()
                    },
                    None => ContainerState {
                        running: Some(ContainerStateRunning::default()),
                        ..Default::default()
                    },
                }),
                ..Default::default()
            })
            .collect();
        Pod {
            status: Some(PodStatus {
                phase: Some(phase.into()),
                container_statuses: Some(statuses),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_pod_is_stopped_when_it_succeeded_or_its_runner_exited_zero() {
        assert!(is_stopped(&pod("Succeeded", vec![])));
        assert!(is_stopped(&pod("Running", vec![("runner", Some(0)), ("docker", None)])));
        assert!(!is_stopped(&pod("Running", vec![("runner", Some(1))])), "a crash is not a stop");
        assert!(!is_stopped(&pod("Running", vec![("runner", None), ("docker", Some(0))])));
        assert!(!is_stopped(&pod("Failed", vec![("runner", Some(0))])));
        assert!(!is_stopped(&pod("Pending", vec![])));
        assert!(!is_stopped(&Pod::default()));
    }

    #[test]
    fn a_runner_container_has_crashed_when_it_exited_non_zero_or_backs_off() {
        assert!(runner_container_crashed(&pod("Running", vec![("runner", Some(1))])));
        assert!(!runner_container_crashed(&pod("Running", vec![("runner", Some(0))])), "a stop is no crash");
        assert!(!runner_container_crashed(&pod("Running", vec![("runner", None)])));
        assert!(!runner_container_crashed(&pod("Running", vec![("docker", Some(1))])));
        let mut backing_off = pod("Running", vec![("runner", None)]);
        let status = &mut backing_off.status.as_mut().unwrap().container_statuses.as_mut().unwrap()[0];
        status.state = Some(ContainerState {
            waiting: Some(ContainerStateWaiting {
                reason: Some("CrashLoopBackOff".into()),
                ..Default::default()
            }),
            ..Default::default()
        });
        assert!(runner_container_crashed(&backing_off));
        assert!(!runner_container_crashed(&Pod::default()));
    }

    fn listed(name: &str, status: &str, busy: bool) -> LegacyRunner {
        LegacyRunner {
            id: 1,
            name: name.into(),
            os: "linux".into(),
            status: status.into(),
            busy,
            labels: Vec::new(),
        }
    }

    #[test]
    fn the_list_entry_with_the_runners_name_decides_its_registration() {
        let list = [listed("a", "online", true), listed("b", "offline", true), listed("c", "online", false)];
        assert_eq!(Registration::of(&list, "a"), Registration::Online { busy: true });
        assert_eq!(Registration::of(&list, "b"), Registration::Offline { busy: true });
        assert_eq!(Registration::of(&list, "c"), Registration::Online { busy: false });
        assert_eq!(Registration::of(&list, "d"), Registration::NotFound);
        assert!(Registration::Offline { busy: true }.is_busy());
        assert!(!Registration::NotFound.is_busy());
    }

    fn verdict(registration: Registration, template_changed: bool, timed_out: bool) -> CheckVerdict {
        RegistrationCheck { registration, template_changed, registration_timed_out: timed_out }.verdict()
    }

    #[test]
    fn an_outdated_pod_is_restarted_only_when_the_runner_is_not_listed_busy() {
        use Registration::{NotFound, Offline, Online};
        let changed = CheckVerdict::Restart(RestartReason::TemplateChanged);
        assert_eq!(verdict(Online { busy: false }, true, false), changed);
        assert_eq!(verdict(NotFound, true, false), changed);
        assert_eq!(verdict(Offline { busy: false }, true, true), changed);
        assert_eq!(verdict(Online { busy: true }, true, false), CheckVerdict::Keep);
        assert_eq!(verdict(Offline { busy: true }, true, true), CheckVerdict::Keep);
        assert_eq!(verdict(Online { busy: false }, false, true), CheckVerdict::Keep);
    }

    #[test]
    fn an_unregistered_or_offline_runner_is_rechecked_then_restarted_after_the_timeout() {
        use Registration::{NotFound, Offline};
        assert_eq!(verdict(NotFound, false, false), CheckVerdict::Recheck);
        assert_eq!(verdict(Offline { busy: false }, false, false), CheckVerdict::Recheck);
        assert_eq!(verdict(Offline { busy: true }, false, false), CheckVerdict::Recheck);
        assert_eq!(verdict(NotFound, false, true), CheckVerdict::Restart(RestartReason::NeverRegistered));
        assert_eq!(
            verdict(Offline { busy: false }, false, true),
            CheckVerdict::Restart(RestartReason::StayedOffline)
        );
        assert_eq!(
            verdict(Offline { busy: true }, false, true),
            CheckVerdict::Keep,
            "busy while offline (#993)"
        );
    }

    #[test]
    fn the_check_is_deferred_until_the_interval_has_passed_less_one_second() {
        let at = |s: i64| Timestamp::from_second(1_767_225_600 + s).unwrap();
        let minute = Duration::from_secs(60);
        assert_eq!(deferred_check(None, minute, at(0)), None, "never checked");
        assert_eq!(deferred_check(Some(at(0)), minute, at(10)), Some(Duration::from_secs(49)));
        assert_eq!(deferred_check(Some(at(0)), minute, at(59)), None, "within a second counts as due");
        assert_eq!(deferred_check(Some(at(0)), minute, at(600)), None);
    }
}
