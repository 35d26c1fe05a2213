//! The container-failure probes (issue 42, item 8): an init container that failed to start
//! (`StartError`), a container the kernel's OOM killer ended (`OOMKilled`), and a native sidecar that
//! crashed beside a running main container.

use arc_sim::kubelet::KubeletEventKind;
use arc_world::RunRecord;

/// Init containers that failed to start.
pub fn init_container_failed(run: &RunRecord) -> u32 {
    run.kubelet_events().filter(|e| matches!(e.kind, KubeletEventKind::InitContainerFailed { .. })).count()
        as u32
}

/// Containers the OOM killer ended.
pub fn container_oom_killed(run: &RunRecord) -> u32 {
    run.kubelet_events().filter(|e| matches!(e.kind, KubeletEventKind::OomKilled { .. })).count() as u32
}

/// Native sidecars that crashed while their pod's main container ran.
pub fn sidecar_crashed(run: &RunRecord) -> u32 {
    run.kubelet_events().filter(|e| matches!(e.kind, KubeletEventKind::SidecarCrashed { .. })).count() as u32
}
