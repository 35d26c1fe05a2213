//! Clocks per party (issue 42, item 5; docs/windows.md, "Clocks per party"): the draw of how far each
//! party's wall clock reads from true time — the API server's, the node's (its kubelet, and the
//! listeners and runners it runs) and each controller process's. The fake GitHub keeps true time:
//! only differences between clocks can be told apart, so GitHub's is the reference.
//!
//! Each party's clock is kept one of three ways, drawn independently: synced by NTP or chrony (within
//! 20 ms, 1 ppm), loosely (a node whose time service lost its sources, or a VM back from a pause:
//! within 3 s, 50 ppm) or not at all (within 90 s, 200 ppm; GitHub backdates an app JWT's `iat` by
//! 60 s "to protect against clock drift" and asks servers to run NTP, so skew of that order is one it
//! expects to meet).

use arc_sim::Seed;
use arc_sim::clock_skew::ClockSkew;
use arc_world::replica_actor;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::scenario::WorldPlan;

/// One party's clock: 60% synced, 30% loose, 10% unsynced.
fn party_skew(rng: &mut ChaCha8Rng) -> ClockSkew {
    let (offset_ms, drift_ppm) = match rng.random_range(0..10) {
        0..6 => (20, 1),
        6..9 => (3_000, 50),
        _ => (90_000, 200),
    };
    ClockSkew {
        offset_ms: rng.random_range(-offset_ms..=offset_ms),
        drift_ppm: rng.random_range(-drift_ppm..=drift_ppm),
    }
}

/// In a share `worlds` of seeds (from a stream of its own, so every other draw of a seed stays as it
/// was), gives every party of `plan`'s world a clock of its own.
pub fn draw_party_clocks(seed: Seed, plan: &mut WorldPlan, worlds: f64) {
    let mut rng = seed.named_rng("scenario/clocks");
    if !rng.random_bool(worlds) {
        return;
    }
    let config = &mut plan.config;
    config.apiserver.clock = party_skew(&mut rng);
    config.kubelet.clock = party_skew(&mut rng);
    let replicas = config.replicas.as_ref().map_or(0, |r| r.count);
    let actors = std::iter::once("controller".to_string()).chain((0..replicas).map(replica_actor));
    for actor in actors {
        config.controller_clocks.insert(actor, party_skew(&mut rng));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;
    use crate::scenarios::legacy_standard::LegacyStandard;
    use crate::variant::Variant;

    #[test]
    fn a_share_of_worlds_gets_a_clock_per_party_and_the_rest_stay_true() {
        let (mut skewed, mut unsynced) = (0, 0);
        for seed in 0..400 {
            let mut plan = LegacyStandard.world(Seed(seed), Variant::Fixed);
            let before = plan.config.clone();
            draw_party_clocks(Seed(seed), &mut plan, 0.5);
            let clocks = &plan.config.controller_clocks;
            if clocks.is_empty() {
                assert_eq!(plan.config, before, "seed {seed}: a world without skew is the world as it was");
                continue;
            }
            skewed += 1;
            let skews = [plan.config.apiserver.clock, plan.config.kubelet.clock, clocks["controller"]];
            assert!(skews.iter().all(|s| s.offset_ms.abs() <= 90_000 && s.drift_ppm.abs() <= 200));
            unsynced += skews.iter().filter(|s| s.offset_ms.abs() > 3_000).count();
        }
        assert!((160..240).contains(&skewed), "{skewed} of 400 worlds skewed");
        assert!(unsynced > 0, "some party runs unsynced");
    }

    #[test]
    fn only_the_swarms_and_the_token_worlds_ask_for_clocks_of_their_own() {
        let skewed = |name: &str| {
            let scenario = crate::scenarios::find(name).unwrap();
            (0..40)
                .filter(|s| !scenario.world(Seed(*s), Variant::Fixed).config.controller_clocks.is_empty())
                .count()
        };
        for name in ["standard", "watch-lag-duplicate-create", "assign-during-delete", "legacy-standard"] {
            assert_eq!(skewed(name), 0, "{name} keeps one clock");
        }
        for name in ["steady-state", "legacy-steady-state", "token-refresh-recreation", "standard-app-auth"] {
            assert!((8..32).contains(&skewed(name)), "{name} draws clocks in about half its worlds");
        }
    }
}
