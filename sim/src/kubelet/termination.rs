//! Graceful termination, as a kubelet's pod worker does it once it has seen the pod's deletion (or
//! the pod's object vanished): after a seeded delay (the worker's sync and the runtime's
//! StopContainer) SIGTERM reaches the main container, and the process has the grace period, counted
//! from SIGTERM, to exit; then SIGKILL. A repeated delete with a shorter grace takes effect at once; a
//! pod whose object is already gone gets the kubelet's 2 s minimum. Until it exits the process runs
//! on: a runner stays connected to GitHub, and may be handed a job. Then the kubelet writes the
//! terminal status (the container terminated with its exit code; Succeeded when it exited 0, Failed
//! otherwise, as kubelets since 1.27 give deleted pods a terminal phase), tears the sandbox down, and
//! deletes the pod with grace 0.

use std::time::Duration;

use tokio::time::Instant;

use super::container::EXIT_SIGKILL;
use super::events::{KubeletEventKind, StopCause};
use super::pod::{PodSignal, PodTask, Running};
use super::status::ContainerState;

/// The kubelet's minimum grace period (a force-deleted pod still gets it).
pub const MINIMUM_GRACE_SECONDS: i64 = 2;

/// Where a termination stands.
struct Ending {
    /// The pod's object is gone: no status to write, nothing to delete.
    gone: bool,
    /// The grace period, in seconds.
    grace_seconds: i64,
    /// SIGTERM has been sent.
    signalled: bool,
    /// When the current stage ends: SIGTERM, then SIGKILL.
    until: Instant,
    /// The node's machine died meanwhile.
    died: bool,
}

impl Ending {
    /// A repeated delete (or the object's removal) with `grace_seconds`: only ever shortens.
    fn shorten(&mut self, grace_seconds: i64) {
        self.grace_seconds = self.grace_seconds.min(grace_seconds);
        if self.signalled {
            self.until = self.until.min(Instant::now() + seconds(grace_seconds)); // allow-nondeterminism: tokio clock, paused in the sim
        }
    }

    fn hear(&mut self, signal: PodSignal) {
        match signal {
            PodSignal::Deleting { grace_seconds } => self.shorten(grace_seconds),
            PodSignal::Removed => {
                self.gone = true;
                self.shorten(MINIMUM_GRACE_SECONDS);
            }
            PodSignal::NodeDied => self.died = true,
            PodSignal::Evict { .. } | PodSignal::Crash { .. } => {}
        }
    }
}

fn seconds(s: i64) -> Duration {
    Duration::from_secs(u64::try_from(s).unwrap_or(0))
}

impl PodTask {
    /// Terminates the running process: `grace_seconds` from the deletion, `None` when the object is
    /// already gone.
    pub(crate) async fn terminate(&mut self, mut running: Running, grace_seconds: Option<i64>) {
        if let Some(grace_seconds) = grace_seconds {
            self.record(KubeletEventKind::Terminating { grace_seconds });
        }
        let delay = self.draw(self.kubelet.config.sigterm_delay);
        let mut ending = Ending {
            gone: grace_seconds.is_none(),
            grace_seconds: grace_seconds.unwrap_or(MINIMUM_GRACE_SECONDS),
            signalled: false,
            until: Instant::now() + delay, // allow-nondeterminism: tokio clock, paused in the sim
            died: false,
        };
        let code = match self.run_until(&mut running, &mut ending).await {
            Some(code) => code,
            None => self.signal(&mut running, &mut ending).await,
        };
        if ending.died {
            self.died(running).await;
            return;
        }
        let cause = if ending.gone { StopCause::PodRemoved } else { StopCause::PodDeleted };
        self.stopped(code, cause, &running.state);
        if ending.gone {
            return;
        }
        let finished = self.now();
        let started = running.started.clone();
        self.view.main_mut().state =
            ContainerState::Terminated { exit_code: code, started, finished, reason: None };
        self.stop_sidecars();
        self.view.terminal = true;
        self.write().await;
        let teardown = self.draw(self.kubelet.config.teardown_delay);
        tokio::time::sleep(teardown).await;
        self.view.sandbox_ready = false;
        self.write().await;
        self.remove().await;
    }

    /// SIGTERM, then SIGKILL if the process is still there when the grace period runs out.
    async fn signal(&mut self, running: &mut Running, ending: &mut Ending) -> i32 {
        running.sigterm.cancel();
        let container = self.view.main().name.clone();
        self.record(KubeletEventKind::Sigterm { container: container.clone() });
        ending.signalled = true;
        ending.until = Instant::now() + seconds(ending.grace_seconds); // allow-nondeterminism: tokio clock, paused in the sim
        if let Some(code) = self.run_until(running, ending).await {
            return code;
        }
        if ending.died {
            return EXIT_SIGKILL;
        }
        running.kill();
        self.record(KubeletEventKind::Sigkill { container });
        EXIT_SIGKILL
    }

    /// Lets the process run until the stage ends; its exit code if it exits first.
    async fn run_until(&mut self, running: &mut Running, ending: &mut Ending) -> Option<i32> {
        loop {
            tokio::select! {
                biased;
                signal = self.next_signal() => {
                    ending.hear(signal);
                    if ending.died {
                        return None;
                    }
                }
                code = &mut running.future => return Some(code),
                () = tokio::time::sleep_until(ending.until) => return None,
            }
        }
    }

    /// A deletion while no process runs: after the worker's sync, the terminal status (if it says
    /// anything new) and the grace-0 delete.
    pub(crate) async fn delete_stopped(&mut self, grace_seconds: i64) {
        self.record(KubeletEventKind::Terminating { grace_seconds });
        let delay = self.draw(self.kubelet.config.sigterm_delay);
        tokio::time::sleep(delay).await;
        let changed = self.stop_sidecars() | !self.view.terminal | self.view.sandbox_ready;
        self.view.terminal = true;
        self.view.sandbox_ready = false;
        if changed {
            self.write().await;
        }
        self.remove().await;
    }

    /// The kubelet's grace-0 delete, guarded by the uid.
    async fn remove(&self) {
        if self.writes.remove().await {
            self.record(KubeletEventKind::PodRemoved);
        }
    }
}
