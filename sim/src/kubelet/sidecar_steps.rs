//! [`Sidecars`]: what each of a pod's sidecars (native, or regular containers beside the main one)
//! does next (a crash, the kubelet's next sync, a restart) and when, kept by the pod's worker;
//! [`super::sidecars`] takes the steps.

use std::time::Duration;

use rand_chacha::ChaCha8Rng;
use tokio::time::Instant;

/// Where a sidecar stands in the pod's spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Slot {
    /// A native sidecar: init container `i` (with `restartPolicy: Always`).
    Native(usize),
    /// A regular sidecar: container `i` of `spec.containers`, not the main one.
    Regular(usize),
}

/// What comes next for one sidecar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Its process exits with this code (OOM-killed when 137).
    Crash(i32),
    /// The kubelet's next sync after a crash: the first restart at once, later ones back off.
    Sync,
    /// CrashLoopBackOff is over: started again.
    Restart,
}

/// The pod's sidecars: which init containers they are, what each does next, and their stream.
#[derive(Debug, Default)]
pub(crate) struct Sidecars {
    /// `(which, when, what)` of each sidecar with a step to come.
    due: Vec<(Slot, Instant, Step)>,
    /// The pod's stream for its sidecars' crashes (`kubelet/pod/<uid>/sidecar`), opened at the first draw.
    pub(crate) rng: Option<ChaCha8Rng>,
}

impl Sidecars {
    /// The earliest step to come.
    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.due.iter().map(|(_, at, _)| *at).min()
    }

    /// Takes the earliest step (the first set's on a tie).
    pub(crate) fn take_due(&mut self) -> Option<(Slot, Step)> {
        let at = self.next_due()?;
        let position = self.due.iter().position(|(_, when, _)| *when == at)?;
        let (index, _, step) = self.due.remove(position);
        Some((index, step))
    }

    pub(crate) fn set(&mut self, slot: Slot, after: Duration, step: Step) {
        self.due.retain(|(s, _, _)| *s != slot);
        self.due.push((slot, Instant::now() + after, step)); // allow-nondeterminism: tokio's paused clock is the sim clock
    }

    /// Forgets every step to come (the main container has stopped).
    pub(crate) fn clear(&mut self) {
        self.due.clear();
    }
}
