//! The service's own timers: work it does a while after a change, with nobody calling it. A change
//! under the world lock asks for one with [`World::after`]; `Shared::mutate` hands what was asked to
//! [`spawn`], which sleeps in sim time and then runs [`World::fire`] under the lock.
//!
//! What is timed this way: noticing a runner process that died while idle (assumption
//! `dead-runner-detection`), a job on a dead runner failing as lost, a JIT registration that was
//! never connected expiring (assumption `registration-lifetime`), and an acquired job no runner took
//! offered again (assumption `unstarted-dispatch`). Under the default alternatives
//! none is ever asked for, so worlds that keep the defaults schedule nothing here.

use std::sync::Arc;
use std::time::Duration;

use super::super::Shared;
use super::super::events::EventKind;
use super::super::model::{RemovalReason, RunnerState};
use super::World;

/// Something the service does later on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Later {
    /// The service notices that the process on `connection` of `runner_id` died while idle.
    NoticeDeadRunner {
        /// The runner.
        runner_id: i64,
        /// The dead process's connection number.
        connection: u64,
    },
    /// The lost-runner timeout of a job assigned to a dead runner passes.
    ExpireLostRunner {
        /// The runner.
        runner_id: i64,
        /// Its job.
        request_id: i64,
    },
    /// A JIT registration's lifetime ends; if no process ever connected, it is removed.
    ExpireRegistration {
        /// The runner.
        runner_id: i64,
    },
    /// A runner session created over HTTP is still not taken up by a process: its runner is treated
    /// as one whose process died without a word.
    UnclaimedSession {
        /// The runner.
        runner_id: i64,
        /// The session's connection number.
        connection: u64,
    },
    /// A job acquired at `acquired_ms` is offered again unless a runner took it since.
    ReofferUnstarted {
        /// The job.
        request_id: i64,
        /// When it was acquired.
        acquired_ms: u64,
    },
}

impl World {
    /// Asks for `what` to happen `delay_ms` from now.
    pub(crate) fn after(&mut self, delay_ms: u64, what: Later) {
        self.later.push((Duration::from_millis(delay_ms), what));
    }

    /// The timers asked for since the last call.
    pub(crate) fn take_later(&mut self) -> Vec<(Duration, Later)> {
        std::mem::take(&mut self.later)
    }

    /// Does `what`, now that its time has come.
    pub(crate) fn fire(&mut self, what: Later) {
        match what {
            Later::NoticeDeadRunner { runner_id, connection } => {
                self.notice_dead_runner(runner_id, connection)
            }
            Later::ExpireLostRunner { runner_id, request_id } => {
                self.expire_lost_runner(runner_id, request_id)
            }
            Later::ExpireRegistration { runner_id } => self.expire_registration(runner_id),
            Later::ReofferUnstarted { request_id, acquired_ms } => {
                self.reoffer_unstarted(request_id, acquired_ms)
            }
            Later::UnclaimedSession { runner_id, connection } => {
                self.forget_unclaimed_session(runner_id, connection)
            }
        }
    }

    /// Starts the lost-runner timeout of job `request_id` on `runner_id`, whose process is gone.
    pub(crate) fn expire_lost_later(&mut self, runner_id: i64, request_id: i64) {
        self.after(self.cfg.lost_runner_timeout_ms, Later::ExpireLostRunner { runner_id, request_id });
    }

    /// The service notices a process that died while its runner was idle: an idle runner goes
    /// offline; one that was assigned a job since holds it lost until the lost-runner timeout.
    fn notice_dead_runner(&mut self, runner_id: i64, connection: u64) {
        if self.dead_processes.get(&runner_id) != Some(&connection) {
            return;
        }
        self.dead_processes.remove(&runner_id);
        let Some(state) = self.runners.get(&runner_id).map(|r| r.state) else { return };
        let lost_job = match state {
            RunnerState::Idle => {
                self.set_runner_state(runner_id, RunnerState::Offline);
                None
            }
            RunnerState::Busy { request_id } => {
                let since_ms = self.now_ms();
                self.set_runner_state(runner_id, RunnerState::Lost { request_id, since_ms });
                self.expire_lost_later(runner_id, request_id);
                Some(request_id)
            }
            _ => return,
        };
        self.record(EventKind::DeadRunnerNoticed { runner_id, lost_job });
    }

    /// A JIT registration's lifetime is over: removed unless a process ever connected with it.
    fn expire_registration(&mut self, runner_id: i64) {
        let unconnected = self
            .runners
            .get(&runner_id)
            .is_some_and(|r| r.connections == 0 && r.state == RunnerState::Offline);
        if unconnected {
            self.remove(runner_id, RemovalReason::Expired);
        }
    }
}

/// Starts the timers in `later` on the run's runtime.
pub(crate) fn spawn(shared: &Arc<Shared>, later: Vec<(Duration, Later)>) {
    for (delay, what) in later {
        let shared = Arc::clone(shared);
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            shared.mutate(|w| w.fire(what));
        });
    }
}
