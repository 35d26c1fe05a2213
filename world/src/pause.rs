//! [`ProcessGate`]: stops and resumes every task of one controller process together, as an operating
//! system stops a process (a VM's steal, a long GC, SIGSTOP) and lets it go on.
//!
//! Each task of the process (the manager's informers and controllers, through the controller's
//! `TaskWrap` seam; a replica's election loop, wrapped by the world) is polled only while its gate is
//! open. While it is shut nothing of the process runs: its timers come due unheard, its watches' events
//! and its requests' answers wait, and its clock goes on. Once open, every timer past due fires at once
//! and the process reads a clock that jumped. Requests it had sent are served meanwhile (the world's
//! links serve them detached from their caller, `SentRequests`). Simplification: a process stops
//! between two polls of its tasks, never inside one.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use arc_controller::runtime::tasks::TaskWrap;
use futures::future::BoxFuture;

/// One process's gate. Clones share it.
#[derive(Clone, Default)]
pub struct ProcessGate(Arc<Mutex<GateState>>);

#[derive(Default)]
struct GateState {
    shut: bool,
    /// The tasks polled while shut, woken when it opens.
    waiting: Vec<Waker>,
}

impl ProcessGate {
    fn state(&self) -> MutexGuard<'_, GateState> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Stops the process: none of its tasks is polled until [`ProcessGate::open`].
    pub fn shut(&self) {
        self.state().shut = true;
    }

    /// Lets the process go on: every task polled while it was shut is woken.
    pub fn open(&self) {
        let waiting = {
            let mut state = self.state();
            state.shut = false;
            std::mem::take(&mut state.waiting)
        };
        waiting.into_iter().for_each(Waker::wake);
    }

    /// Whether the process is stopped.
    pub fn is_shut(&self) -> bool {
        self.state().shut
    }

    /// `task`, polled only while this gate is open.
    pub fn gated<T>(&self, task: impl Future<Output = T> + Send + 'static) -> Gated<T> {
        Gated { gate: self.clone(), task: Box::pin(task) }
    }
}

impl TaskWrap for ProcessGate {
    fn wrap(&self, task: BoxFuture<'static, ()>) -> BoxFuture<'static, ()> {
        Box::pin(self.gated(task))
    }
}

/// A task behind a [`ProcessGate`].
pub struct Gated<T> {
    gate: ProcessGate,
    task: Pin<Box<dyn Future<Output = T> + Send>>,
}

impl<T> Future for Gated<T> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        {
            let mut state = self.gate.state();
            if state.shut {
                if !state.waiting.iter().any(|w| w.will_wake(cx.waker())) {
                    state.waiting.push(cx.waker().clone());
                }
                return Poll::Pending;
            }
        }
        self.task.as_mut().poll(cx)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::Duration;

    use tokio::time::{Instant, sleep};

    use super::*;

    /// A task that ticks every second, stopped for ten: it does nothing while stopped, then its
    /// overdue timer fires once, at once, and it reads the time that passed.
    #[tokio::test(start_paused = true)]
    async fn a_shut_gate_stops_a_task_and_its_overdue_timer_fires_at_once_when_opened() {
        let gate = ProcessGate::default();
        let ticks = Arc::new(AtomicU32::new(0));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let start = Instant::now(); // allow-nondeterminism: tokio clock, paused in this test
        tokio::spawn(gate.gated({
            let (ticks, seen) = (Arc::clone(&ticks), Arc::clone(&seen));
            async move {
                loop {
                    sleep(Duration::from_secs(1)).await;
                    ticks.fetch_add(1, Ordering::SeqCst);
                    seen.lock().expect("not poisoned").push(start.elapsed().as_millis());
                }
            }
        }));
        sleep(Duration::from_millis(2_500)).await;
        assert_eq!(ticks.load(Ordering::SeqCst), 2);
        gate.shut();
        sleep(Duration::from_secs(10)).await;
        assert_eq!(ticks.load(Ordering::SeqCst), 2, "nothing runs while shut");
        gate.open();
        sleep(Duration::from_millis(1)).await;
        assert_eq!(ticks.load(Ordering::SeqCst), 3, "the overdue timer fired once");
        assert_eq!(seen.lock().expect("not poisoned").last(), Some(&12_500), "at the time the gate opened");
        sleep(Duration::from_secs(1)).await;
        assert_eq!(ticks.load(Ordering::SeqCst), 4, "and ticks on from there");
    }
}
