//! The container-failure probes (issue 42, item 8): an init container that failed to start
//! (`StartError`), a container the kernel's OOM killer ended (`OOMKilled`), a native sidecar that
//! crashed beside a running main container, and regular sidecars: a pod held Running by one after its
//! runner exited, and a pod Failed by one though its runner exited 0.

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
    let native = |e: &&arc_sim::kubelet::KubeletEvent| {
        matches!(e.kind, KubeletEventKind::SidecarCrashed { regular: false, .. })
    };
    run.kubelet_events().filter(native).count() as u32
}

/// Pods whose main container exited for good while a regular sidecar ran on (the pod still Running).
pub fn regular_sidecar_outlived_runner(run: &RunRecord) -> u32 {
    run.kubelet_events().filter(|e| matches!(e.kind, KubeletEventKind::SidecarsOutlivedMain { .. })).count()
        as u32
}

/// Pods that turned Failed though their main container exited 0 (a regular sidecar had failed).
pub fn pod_failed_beside_succeeded_runner(run: &RunRecord) -> u32 {
    let failed = |e: &&arc_sim::kubelet::KubeletEvent| {
        matches!(e.kind, KubeletEventKind::FailedBesideSucceededMain { .. })
    };
    run.kubelet_events().filter(failed).count() as u32
}
