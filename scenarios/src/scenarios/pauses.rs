//! Process pauses (issue 42, item 6; docs/windows.md): the steady-state swarm's draw of a controller
//! process that stops and goes on, as a VM's steal time, a node under memory pressure or a long
//! garbage collection stops one. In a share of the worlds the controller is stopped 1–3 times while
//! the swarm's jobs come, for a long-tailed time: half a second to 10 s (six in ten), 10 s to a
//! minute (three in ten), one to three minutes (one in ten). Nothing of it runs meanwhile; its
//! timers, watch events and answers wait, and it goes on from a clock that jumped. A watch whose
//! client leaves 10–80 events unread is closed, as kube-apiserver closes an unresponsive watcher
//! (its channel of about ten events, then what the connection's buffers hold). In another share, drawn
//! apart, the listener pod's process is stopped 1–2 times the same way: its long poll's answer waits,
//! and a session idle past the service's expiry is gone when it goes on.

use arc_sim::Seed;
use arc_world::Disruption;
use rand::Rng;

use crate::scenario::WorldPlan;

/// How long one pause lasts, drawn long-tailed.
fn pause_ms(rng: &mut impl Rng) -> u64 {
    match rng.random_range(0..10) {
        0..=5 => rng.random_range(500..10_000),
        6..=8 => rng.random_range(10_000..60_000),
        _ => rng.random_range(60_000..180_000),
    }
}

/// In a share `worlds` of seeds (from a stream of its own, so every other draw of a seed stays as it
/// was), the controller process is stopped 1–3 times before `until_ms`.
pub fn draw_pauses(seed: Seed, plan: &mut WorldPlan, worlds: f64, until_ms: u64) {
    let mut rng = seed.named_rng("scenario/pauses");
    if !rng.random_bool(worlds) {
        return;
    }
    for _ in 0..rng.random_range(1..=3) {
        let for_ms = pause_ms(&mut rng);
        let at_ms = rng.random_range(10_000..until_ms);
        plan.config.disruptions.push(Disruption::PauseController { at_ms, for_ms });
    }
    plan.config.apiserver.unread_watch_events = Some(rng.random_range(10..=80));
}

/// In a share `worlds` of seeds (a stream of its own), the listener pod's process is stopped 1–2
/// times before `until_ms`, for the same long-tailed times.
pub fn draw_listener_pauses(seed: Seed, plan: &mut WorldPlan, worlds: f64, until_ms: u64) {
    let mut rng = seed.named_rng("scenario/listener-pauses");
    if !rng.random_bool(worlds) {
        return;
    }
    for _ in 0..rng.random_range(1..=2) {
        let for_ms = pause_ms(&mut rng);
        let at_ms = rng.random_range(10_000..until_ms);
        plan.config.disruptions.push(Disruption::PauseListener { at_ms, for_ms });
    }
}

#[cfg(test)]
mod tests {
    use arc_world::Disruption;

    #[test]
    fn the_swarm_draws_it_in_some_worlds_and_the_race_worlds_never() {
        let paused = |name| {
            crate::scenarios::worlds_drawing(name, |c| {
                c.disruptions.iter().any(|d| matches!(d, Disruption::PauseController { .. }))
            })
        };
        for name in crate::scenarios::RACE_WORLDS {
            assert_eq!(paused(name), 0, "{name} pauses no process");
        }
        assert!(
            (3..20).contains(&paused("steady-state")),
            "steady-state draws it in about 25% of its worlds"
        );
    }

    #[test]
    fn the_swarm_stops_its_listener_in_some_worlds_and_the_race_worlds_never() {
        let paused = |name| {
            crate::scenarios::worlds_drawing(name, |c| {
                c.disruptions.iter().any(|d| matches!(d, Disruption::PauseListener { .. }))
            })
        };
        for name in crate::scenarios::RACE_WORLDS {
            assert_eq!(paused(name), 0, "{name} stops no listener");
        }
        assert!(
            (3..20).contains(&paused("steady-state")),
            "steady-state draws it in about 25% of its worlds"
        );
    }
}
