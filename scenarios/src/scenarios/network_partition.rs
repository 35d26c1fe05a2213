//! `network-partition` (issue 17): the standard scale-set world on the turmoil network, with network
//! faults drawn from the seed — the controller partitioned from the API server for 45–150 s (one way
//! half the time), the listeners from GitHub for 150–240 s (longer than the GitHub client's retries), its watches of runners and pods cut after a few events, the listeners' message long
//! polls dropped, the controller's host crashed and bounced, the listener host crashed, the kubelet's
//! link slowed and the listeners' GitHub link held. The API server keeps a short history (10 changes a resource),
//! so a watch resumed after a long partition can meet 410 Expired and must relist. The controller must
//! come back from all of it as from nothing: every job runs, the world converges.

use arc_sim::Seed;
use arc_sim::faults::Window;
use arc_sim::net::{
    HOST_APISERVER, HOST_CONTROLLER, HOST_GITHUB, HOST_LISTENERS, HOST_NODE, NetFault, Network,
};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::control::Control;
use super::standard::{scale_set_oracles, scale_set_world};
use crate::scenario::{Scenario, WorldPlan};
use crate::variant::Variant;
use arc_judging::oracles::Oracle;
use arc_judging::probes::{self, ProbeGoal};
use arc_judging::rates::Rate;

/// The world must settle by 30 minutes (the fixed controller does by about 16; a zombie listener
/// never lets it).
const HORIZON_MS: u64 = 1_800_000;

/// Changes the API server keeps for watches to resume from.
const HISTORY: usize = 10;

/// Network faults on turmoil.
pub struct NetworkPartition;

impl Scenario for NetworkPartition {
    fn name(&self) -> &'static str {
        "network-partition"
    }

    fn describe(&self) -> &'static str {
        "turmoil network: controller partitioned, watches cut, long polls dropped, hosts crashed (issue 17)"
    }

    fn world(&self, seed: Seed, variant: Variant) -> WorldPlan {
        let mut plan = quiet_world(seed, variant);
        plan.config.faults.network = network_faults(&mut seed.named_rng("network-partition"));
        plan
    }

    fn oracles(&self) -> Vec<&'static dyn Oracle> {
        scale_set_oracles()
    }

    fn probe_goals(&self) -> &'static [ProbeGoal] {
        const GOALS: &[ProbeGoal] = &[
            ProbeGoal::floor(&probes::WATCH_RESUMED_FROM_RV, Rate::measured(74, 100, 2_000_000)),
            ProbeGoal::floor(&probes::RELIST_AFTER_410, Rate::measured(44, 100, 2_000_000)),
            ProbeGoal::floor(&probes::CONTROLLER_BOUNCED_MID_RECONCILE, Rate::measured(33, 100, 2_000_000)),
            ProbeGoal::floor(&probes::LISTENER_SESSION_LOST, Rate::measured(100, 100, 2_000_000)),
        ];
        GOALS
    }

    fn control(&self) -> Option<&'static dyn Scenario> {
        Some(&CONTROL)
    }
}

/// The world on turmoil with a short history and no faults.
fn quiet_world(seed: Seed, variant: Variant) -> WorldPlan {
    let mut plan = scale_set_world(seed, variant, 0, 10);
    plan.config.network = Network::Turmoil;
    plan.config.apiserver.history_capacity = HISTORY;
    plan.config.horizon_ms = HORIZON_MS;
    plan
}

fn window(rng: &mut ChaCha8Rng, earliest_ms: u64, latest_ms: u64, min_ms: u64, max_ms: u64) -> Window {
    let start_ms = rng.random_range(earliest_ms..latest_ms);
    Window { start_ms, end_ms: start_ms + rng.random_range(min_ms..max_ms) }
}

/// The seed's network faults, all within the workload's first 10 minutes.
pub fn network_faults(rng: &mut ChaCha8Rng) -> Vec<NetFault> {
    let host = |h: &str| h.to_string();
    let mut faults = vec![
        NetFault::Partition {
            a: host(HOST_CONTROLLER),
            b: host(HOST_APISERVER),
            window: window(rng, 60_000, 400_000, 45_000, 150_000),
            one_way: rng.random_bool(0.5),
        },
        NetFault::CutWatch {
            resources: vec!["ephemeralrunners".into(), "pods".into()],
            after_events: rng.random_range(3..20),
            window: window(rng, 30_000, 300_000, 60_000, 240_000),
        },
        NetFault::CrashController {
            at_ms: rng.random_range(60_000..500_000),
            down_ms: rng.random_range(1_000..10_000),
        },
        // Before the listeners' partition from GitHub, so the crash cannot rescue a listener the
        // partition left a zombie.
        NetFault::CrashListeners {
            at_ms: rng.random_range(30_000..120_000),
            down_ms: rng.random_range(1_000..10_000),
        },
        NetFault::Latency {
            a: host(HOST_NODE),
            b: host(HOST_APISERVER),
            window: window(rng, 0, 400_000, 30_000, 120_000),
            ms: rng.random_range(20..200),
        },
        NetFault::Hold {
            a: host(HOST_LISTENERS),
            b: host(HOST_GITHUB),
            window: window(rng, 0, 400_000, 1_000, 5_000),
        },
        NetFault::Partition {
            a: host(HOST_LISTENERS),
            b: host(HOST_GITHUB),
            window: window(rng, 150_000, 400_000, 150_000, 240_000),
            one_way: false,
        },
    ];
    for _ in 0..rng.random_range(1..3) {
        faults.push(NetFault::DropLongPoll { at_ms: rng.random_range(30_000..500_000) });
    }
    faults
}

/// `network-partition` without its ingredient: the same world on turmoil, no network faults.
pub static CONTROL: Control = Control {
    name: "network-partition-control",
    describe: "the network-partition world on turmoil with no network faults",
    race: &NetworkPartition,
    strip: quiet_world,
    goals: &[
        ProbeGoal::ceiling(&probes::WATCH_RESUMED_FROM_RV, Rate::measured(0, 100, 2_000_000)),
        ProbeGoal::ceiling(&probes::RELIST_AFTER_410, Rate::measured(0, 100, 2_000_000)),
        ProbeGoal::ceiling(&probes::CONTROLLER_BOUNCED_MID_RECONCILE, Rate::measured(0, 100, 2_000_000)),
        ProbeGoal::ceiling(&probes::LISTENER_SESSION_LOST, Rate::measured(0, 100, 2_000_000)),
    ],
};
