//! The container-failure probes (issue 42, item 8): an init container that failed to start
//! (`StartError`), and a container the kernel's OOM killer ended (`OOMKilled`).

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
