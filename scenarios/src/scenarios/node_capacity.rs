//! Node capacity (issue 42, item 3; docs/windows.md): the steady-state swarm's draw of a cluster with
//! room for few runners. In a share of the worlds the runners' node pool runs 4–10 pods at once (the
//! set may ask for 10 runners; the listener runs in its own namespace on other nodes, as a system node
//! pool would run it: counted with the runners, idle runners could hold every place while the
//! listener, restarted, waits for one, and none would ever free), and a cluster autoscaler adds nodes
//! of 2–6 pods, each 30 s to 3 min after a pod found no room, until the pool has room for the set's
//! most. Without the autoscaler a pool too small for the set's backlog does not drain within the
//! swarm's 30 minutes of liveness (seed 22,100,283 with 4 places: still running jobs at the horizon),
//! which says nothing of the controller. Not healed: the nodes that joined stay.

use arc_sim::Seed;
use arc_sim::apiserver::LagRange;
use arc_sim::kubelet::{NodeCapacity, ScaleUp};
use rand::Rng;

use super::objects::RUNNER_NAMESPACE;
use crate::scenario::WorldPlan;

/// The most runners the swarm's set asks for (its `maxRunners`).
const MOST_RUNNERS: u32 = 10;

/// In a share `worlds` of seeds (from a stream of its own, so every other draw of a seed stays as it
/// was), the cluster has room for few pods.
pub fn draw_node_capacity(seed: Seed, plan: &mut WorldPlan, worlds: f64) {
    let mut rng = seed.named_rng("scenario/node-capacity");
    if !rng.random_bool(worlds) {
        return;
    }
    let pods = rng.random_range(4..=10);
    let per_node = rng.random_range(2..=6);
    let scale_up = Some(ScaleUp {
        delay: LagRange::between(30_000, 180_000),
        pods: per_node,
        max_nodes: (MOST_RUNNERS.saturating_sub(pods)).div_ceil(per_node).max(1),
    });
    let namespace = Some(RUNNER_NAMESPACE.to_string());
    plan.config.kubelet.node_capacity = Some(NodeCapacity { namespace, pods, scale_up });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_swarm_draws_it_in_some_worlds_and_the_race_worlds_never() {
        let scarce = |name| crate::scenarios::worlds_drawing(name, |c| c.kubelet.node_capacity.is_some());
        for name in crate::scenarios::RACE_WORLDS {
            assert_eq!(scarce(name), 0, "{name} has room for every pod");
        }
        assert!(
            (4..22).contains(&scarce("steady-state")),
            "steady-state draws it in about 30% of its worlds"
        );
    }

    #[test]
    fn the_autoscaler_can_always_make_room_for_the_sets_most() {
        for s in 0..200 {
            let plan = crate::scenarios::find("steady-state")
                .unwrap()
                .world(Seed(s), crate::variant::Variant::Fixed);
            let Some(capacity) = plan.config.kubelet.node_capacity else { continue };
            let scale_up = capacity.scale_up.as_ref().expect("an autoscaler in every drawn world");
            assert!(
                capacity.pods + scale_up.max_nodes * scale_up.pods >= MOST_RUNNERS,
                "seed {s}: {capacity:?}"
            );
        }
    }
}
