//! The probes of runners that create their sessions over HTTP (issue 42, item 3): a runner whose
//! session creation failed and that tried again as actions/runner does (30 s later), and a runner
//! whose try met another session of its own in the way (409: an earlier try committed and its answer
//! was lost, or a process before it had not let go).

use arc_sim::kubelet::KubeletEventKind;
use arc_world::RunRecord;

/// Session creations that failed and were tried again.
pub fn runner_session_retried(run: &RunRecord) -> u32 {
    let retried = run
        .kubelet_events()
        .filter(|e| matches!(e.kind, KubeletEventKind::SessionCreationFailed { retry_in_ms: Some(_), .. }));
    retried.count() as u32
}

/// Session creations answered 409 (a conflicting session), whether tried again or given up.
pub fn runner_session_conflicted(run: &RunRecord) -> u32 {
    let conflicts = run
        .kubelet_events()
        .filter(|e| matches!(e.kind, KubeletEventKind::SessionCreationFailed { status: Some(409), .. }));
    conflicts.count() as u32
}
