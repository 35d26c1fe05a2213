//! The node-loss probes (issue 42, item 4): a pod the taint eviction deleted because its node stopped
//! answering; a runner process that ran on after its pod was deleted with grace 0 by pod GC or an
//! operator (the pod gone, the process not); and a pod started for a name while an earlier pod of the
//! same name still ran its process (the controller's replacement beside a runner that never stopped);
//! and a kubelet that stalled for less than the node monitor's grace and then heard a deletion it had
//! missed.

use std::collections::{BTreeMap, BTreeSet};

use arc_sim::kubelet::{KubeletEventKind, node_loss};
use arc_world::RunRecord;

/// Pods the taint eviction deleted (their node unreachable longer than they tolerate).
pub fn pod_taint_evicted(run: &RunRecord) -> u32 {
    run.kubelet_events().filter(|e| matches!(e.kind, KubeletEventKind::TaintEvicted { .. })).count() as u32
}

/// The uids whose process runs now, as the kubelet events tell, updated by `kind`.
fn track(live: &mut BTreeSet<String>, uid: &str, kind: &KubeletEventKind) {
    match kind {
        KubeletEventKind::ContainerStarted { .. } => {
            live.insert(uid.to_string());
        }
        KubeletEventKind::ContainerStopped { .. } => {
            live.remove(uid);
        }
        _ => {}
    }
}

/// Pods deleted with grace 0 while their node was lost (pod GC, an operator) whose process still ran.
pub fn process_outlived_force_delete(run: &RunRecord) -> u32 {
    let mut live = BTreeSet::new();
    let mut hits = 0;
    for event in run.kubelet_events() {
        if matches!(event.kind, KubeletEventKind::ForceDeleted { .. }) {
            hits += u32::from(live.contains(&event.uid));
        }
        track(&mut live, &event.uid, &event.kind);
    }
    hits
}

/// Container starts of a pod while another pod of the same name (an earlier uid) still ran its
/// process: a replacement beside a runner that never stopped.
pub fn pod_replaced_while_old_process_ran(run: &RunRecord) -> u32 {
    let mut live = BTreeSet::new();
    let mut uids_of: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let mut hits = 0;
    for event in run.kubelet_events() {
        if let KubeletEventKind::ContainerStarted { restart_count: 0, .. } = event.kind {
            let uids = uids_of.entry(event.pod.as_str()).or_default();
            hits += u32::from(uids.iter().any(|uid| *uid != event.uid && live.contains(uid)));
            uids.insert(event.uid.clone());
        }
        track(&mut live, &event.uid, &event.kind);
    }
    hits
}

/// Stalls of a kubelet (its node back before the node monitor's grace, so never marked NotReady)
/// after which it heard a pod's deletion it had missed: a runner ran on, online at GitHub, for as long
/// as its kubelet did not hear that its pod was being deleted.
pub fn kubelet_stall_held_a_deletion(run: &RunRecord) -> u32 {
    let mut lost_at = None;
    let mut hits = 0;
    for event in run.kubelet_events() {
        match event.kind {
            KubeletEventKind::NodeLost { died: false } => lost_at = Some(event.ms),
            KubeletEventKind::NodeReturned { deletions_heard } => {
                let short = lost_at.is_some_and(|at| event.ms - at < node_loss::MONITOR_GRACE_MS);
                hits += u32::from(short && deletions_heard > 0);
                lost_at = None;
            }
            _ => {}
        }
    }
    hits
}

#[cfg(test)]
mod tests {
    use arc_sim::kubelet::{KubeletEvent, StopCause};
    use arc_world::SyntheticRun;

    use super::*;

    fn at(ms: u64, uid: &str, kind: KubeletEventKind) -> KubeletEvent {
        KubeletEvent { ms, pod: "arc-runners/r".into(), uid: uid.into(), kind }
    }

    fn started() -> KubeletEventKind {
        KubeletEventKind::ContainerStarted { container: "runner".into(), restart_count: 0 }
    }

    fn stopped() -> KubeletEventKind {
        KubeletEventKind::ContainerStopped {
            container: "runner".into(),
            exit_code: 0,
            cause: StopCause::Exited,
            runner_id: Some(1),
            running_job: None,
        }
    }

    fn forced() -> KubeletEventKind {
        KubeletEventKind::ForceDeleted { node: "n".into(), by: "operator".into() }
    }

    fn run(events: Vec<KubeletEvent>) -> RunRecord {
        let mut run = SyntheticRun::new();
        for event in events {
            run = run.event(event.ms, event);
        }
        run.build()
    }

    #[test]
    fn a_replacement_counts_only_while_the_old_process_runs() {
        let beside = run(vec![at(1, "a", started()), at(2, "a", forced()), at(3, "b", started())]);
        assert_eq!(process_outlived_force_delete(&beside), 1);
        assert_eq!(pod_replaced_while_old_process_ran(&beside), 1);
        let after = run(vec![
            at(1, "a", started()),
            at(2, "a", stopped()),
            at(3, "a", forced()),
            at(4, "b", started()),
        ]);
        assert_eq!(process_outlived_force_delete(&after), 0);
        assert_eq!(pod_replaced_while_old_process_ran(&after), 0);
    }

    #[test]
    fn a_stall_counts_when_short_and_a_deletion_waited_for_its_end() {
        let lost = KubeletEventKind::NodeLost { died: false };
        let back = |deletions_heard| KubeletEventKind::NodeReturned { deletions_heard };
        let stall = |end, heard| run(vec![at(1_000, "", lost.clone()), at(end, "", back(heard))]);
        assert_eq!(kubelet_stall_held_a_deletion(&stall(20_000, 1)), 1);
        assert_eq!(kubelet_stall_held_a_deletion(&stall(20_000, 0)), 0, "nothing deleted meanwhile");
        let long = stall(1_000 + node_loss::MONITOR_GRACE_MS, 2);
        assert_eq!(kubelet_stall_held_a_deletion(&long), 0, "marked NotReady: a node loss");
    }

    #[test]
    fn a_restart_in_the_same_pod_is_no_replacement() {
        let restart = KubeletEventKind::ContainerStarted { container: "runner".into(), restart_count: 1 };
        let same = run(vec![at(1, "a", started()), at(2, "a", stopped()), at(3, "a", restart)]);
        assert_eq!(pod_replaced_while_old_process_ran(&same), 0);
    }
}
