//! Node loss (issue 42, item 4; docs/windows.md): the steady-state swarm's draw of a node of the
//! runners' pool that stops answering the control plane. In a share of the worlds the runners' pods
//! spread over 2–4 nodes and the first is lost 1–9 minutes in (while the swarm's jobs come); the
//! control plane answers as kube-controller-manager does (Ready False after 40 s, taint eviction 300 s
//! later). How it ends is drawn: the node returns 20 s to 15 minutes after the loss (two worlds in
//! six), its machine died and its Node object is deleted 1–10 minutes after the loss (one in six),
//! or an operator force-deletes its Terminating pods up to 5 minutes after the eviction (three in
//! six). In those last worlds and half the others jobs run up to 15 minutes (else 3): a runner on the lost node can then
//! still be busy when its pod is force-deleted and the controller replaces it, as with the hours-long
//! jobs of production; they come as much less often as they last longer, so the work stays the same.

use arc_sim::Seed;
use arc_sim::apiserver::LagRange;
use arc_sim::kubelet::{LossOutcome, NodeLoss, node_loss};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::objects::RUNNER_NAMESPACE;
use crate::scenario::WorldPlan;

/// The longest job of a world that draws long jobs.
const LONG_JOB_MS: u64 = 900_000;

/// In a share `worlds` of seeds (from a stream of its own, so every other draw of a seed stays as it
/// was), a node of the runners' pool is lost.
pub fn draw_node_loss(seed: Seed, plan: &mut WorldPlan, worlds: f64) {
    let mut rng = seed.named_rng("scenario/node-loss");
    if !rng.random_bool(worlds) {
        return;
    }
    let outcome = match rng.random_range(0..6) {
        0 | 1 => LossOutcome::Returns { after: LagRange::between(20_000, 900_000) },
        2 => LossOutcome::Died { node_deleted_after: LagRange::between(60_000, 600_000) },
        _ => LossOutcome::ForceDeleted { after: LagRange::between(0, 300_000) },
    };
    let forced = matches!(outcome, LossOutcome::ForceDeleted { .. });
    if rng.random_bool(0.5) || forced {
        let workload = &mut plan.config.workload;
        let mean = |max: u64| (workload.duration_ms_min + max) as f64 / 2.0;
        workload.arrivals_per_minute *= mean(workload.duration_ms_max) / mean(LONG_JOB_MS);
        workload.duration_ms_max = LONG_JOB_MS;
    }
    plan.config.kubelet.node_loss = Some(runner_pool_loss(&mut rng, outcome));
}

/// The first node of a pool of 2–4 that runs the runners' pods stops answering 1–9 minutes in (while
/// the swarm's jobs come) and ends as `outcome` says; the control plane keeps Kubernetes' defaults.
pub fn runner_pool_loss(rng: &mut ChaCha8Rng, outcome: LossOutcome) -> NodeLoss {
    NodeLoss {
        namespace: RUNNER_NAMESPACE.to_string(),
        nodes: rng.random_range(2..=4),
        lost_after: LagRange::between(60_000, 540_000),
        monitor_grace_ms: node_loss::MONITOR_GRACE_MS,
        toleration_seconds: node_loss::TOLERATION_SECONDS,
        outcome,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_swarm_draws_it_in_some_worlds_and_the_race_worlds_never() {
        use crate::scenarios::kubelet_stalls::LONGEST_STALL_MS;
        use arc_sim::kubelet::LossOutcome;
        // A loss that returns within a stall's length is a kubelet stall (`super::kubelet_stalls`).
        let lost = |c: &arc_world::WorldConfig| {
            c.kubelet.node_loss.as_ref().is_some_and(|loss| {
                !matches!(loss.outcome, LossOutcome::Returns { after } if after.max_ms <= LONGEST_STALL_MS)
            })
        };
        let lossy = |name| crate::scenarios::worlds_drawing(name, lost);
        for name in crate::scenarios::RACE_WORLDS {
            assert_eq!(lossy(name), 0, "{name} loses no node");
        }
        assert!((3..20).contains(&lossy("steady-state")), "steady-state draws it in about 25% of its worlds");
    }
}
