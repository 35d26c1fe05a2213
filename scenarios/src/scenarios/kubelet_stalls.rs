//! Kubelet stalls (issue 42's pauses, for the kubelet; docs/windows.md): the steady-state swarm's
//! draw of a runners' node whose kubelet stops for a few seconds while its containers run on, as a
//! kubelet restart (an upgrade, a crash), a PLEG stall or a hung runtime call does. To the control
//! plane that is a node that stops answering and comes back before the node monitor's grace (40 s),
//! so it is drawn as node loss's `returns` outcome, 3–35 s long, 1–9 minutes in: the kubelet neither
//! hears of its pods (deletions included) nor writes their status meanwhile, and no Ready False or
//! taint follows. A kubelet restarts at every node upgrade, so the swarm draws it often. In worlds that already lose a node it is not drawn (the model loses one node at most).

use arc_sim::Seed;
use arc_sim::apiserver::LagRange;
use arc_sim::kubelet::{LossOutcome, node_loss};
use rand::Rng;

use super::node_loss::runner_pool_loss;
use crate::scenario::WorldPlan;

/// The longest stall: shorter than the node monitor's grace, so the node is never marked NotReady.
pub const LONGEST_STALL_MS: u64 = 35_000;
const _: () = assert!(LONGEST_STALL_MS < node_loss::MONITOR_GRACE_MS, "a stall ends before NotReady");

/// In a share `worlds` of seeds (from a stream of its own, so every other draw of a seed stays as it
/// was) without a node loss, a runners' node's kubelet stalls once.
pub fn draw_kubelet_stalls(seed: Seed, plan: &mut WorldPlan, worlds: f64) {
    let mut rng = seed.named_rng("scenario/kubelet-stalls");
    if !rng.random_bool(worlds) || plan.config.kubelet.node_loss.is_some() {
        return;
    }
    let outcome = LossOutcome::Returns { after: LagRange::between(3_000, LONGEST_STALL_MS) };
    plan.config.kubelet.node_loss = Some(runner_pool_loss(&mut rng, outcome));
}

#[cfg(test)]
mod tests {
    use arc_sim::kubelet::LossOutcome;

    use super::LONGEST_STALL_MS;

    #[test]
    fn stalls_end_before_the_monitor_grace_and_the_race_worlds_never_stall() {
        let stalled = |name| {
            crate::scenarios::worlds_drawing(name, |c| {
                c.kubelet.node_loss.as_ref().is_some_and(|loss| {
                    matches!(loss.outcome, LossOutcome::Returns { after } if after.max_ms <= LONGEST_STALL_MS)
                })
            })
        };
        for name in crate::scenarios::RACE_WORLDS {
            assert_eq!(stalled(name), 0, "{name} never stalls its kubelet");
        }
        assert!((10..30).contains(&stalled("steady-state")), "steady-state in about half of its worlds");
    }
}
