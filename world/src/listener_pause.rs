//! [`ListenerGates`]: a gate ([`ProcessGate`]) for each running listener pod's process, so that a
//! disruption can stop the listener as one stops the controller: nothing of it runs meanwhile (its long
//! poll's answer, its timers and its Kubernetes watch wait), the requests it had sent are served, and
//! it goes on from a clock that jumped. The listener is one future (it spawns no task), so gating that
//! future stops all of it.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use arc_sim::record::{Recorder, WorldEvent};

use crate::pause::ProcessGate;

/// The running listener processes' gates. Clones share them.
#[derive(Clone, Default)]
pub struct ListenerGates(Arc<Mutex<Running>>);

#[derive(Default)]
struct Running {
    /// Launch number → the pod and its process's gate, while the process runs.
    gates: BTreeMap<u64, (String, ProcessGate)>,
    launched: u64,
}

/// Why no listener could be stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotPaused {
    /// No listener process was running.
    #[error("no listener process is running")]
    NoneRunning,
    /// The listener was already stopped.
    #[error("the listener is already stopped")]
    Paused,
}

impl ListenerGates {
    fn running(&self) -> MutexGuard<'_, Running> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `process`, the listener of pod `pod`, behind a gate of its own for as long as it runs.
    pub fn gated<F>(&self, pod: String, process: F) -> impl Future<Output = i32> + Send + 'static
    where
        F: Future<Output = i32> + Send + 'static,
    {
        let gate = ProcessGate::default();
        let launch = {
            let mut running = self.running();
            running.launched += 1;
            let launch = running.launched;
            running.gates.insert(launch, (pod, gate.clone()));
            launch
        };
        let registered = Registered { gates: self.clone(), launch };
        async move {
            let _registered = registered;
            gate.gated(process).await
        }
    }

    /// Stops every running listener process for `for_ms`, then lets each go on; both recorded. A
    /// process that ends meanwhile (its pod deleted or killed) is not recorded as resumed.
    pub fn pause(&self, for_ms: u64, record: &Recorder) -> Result<(), NotPaused> {
        let stopped: Vec<(u64, String, ProcessGate)> =
            self.running().gates.iter().map(|(n, (pod, gate))| (*n, pod.clone(), gate.clone())).collect();
        if stopped.is_empty() {
            return Err(NotPaused::NoneRunning);
        }
        if stopped.iter().any(|(_, _, gate)| gate.is_shut()) {
            return Err(NotPaused::Paused);
        }
        for (launch, pod, gate) in stopped {
            gate.shut();
            record.emit(WorldEvent::ListenerPaused { pod: pod.clone(), for_ms });
            let (gates, record) = (self.clone(), record.clone());
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(for_ms)).await;
                gate.open();
                if gates.running().gates.contains_key(&launch) {
                    record.emit(WorldEvent::ListenerResumed { pod });
                }
            });
        }
        Ok(())
    }
}

/// A running process's place in [`ListenerGates`], given up when the process ends or is dropped.
struct Registered {
    gates: ListenerGates,
    launch: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.gates.running().gates.remove(&self.launch);
    }
}
