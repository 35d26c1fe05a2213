//! Running a whole world on the turmoil network (see [`arc_sim::net`]): the world is built and run as
//! the simulation's node host, its hosts fed through a fresh [`Hosting`].

use std::sync::Arc;

use arc_controller::Families;

use super::{EarlyAnswer, RunRecord, Settled, World, WorldConfig, WorldError};
use arc_sim::net::sim::{Hosting, run_on_turmoil};
use arc_sim::record::Interest;
use arc_sim::trace::TraceMode;

/// Simulated time a turmoil run may take past its horizon (shutting down) before it is an error.
const SHUTDOWN_MS: u64 = 3_600_000;

/// Builds and runs the world of `config` (whose network is turmoil) on its own turmoil simulation,
/// stopped early if `answer` says so.
pub fn run_world_on_turmoil(
    config: WorldConfig,
    families: Families,
    trace_mode: TraceMode,
    keep: Interest,
    settled: Settled,
    answer: Option<EarlyAnswer>,
) -> Result<RunRecord, WorldError> {
    let hosting = Arc::new(Hosting::default());
    let seed = config.seed;
    let limit_ms = config.horizon_ms.saturating_add(SHUTDOWN_MS);
    let hosts = Arc::clone(&hosting);
    let node = async move {
        let world = World::build_hosted(config, families, trace_mode, keep, Some(hosts))?.answering(answer);
        world.run(settled).await
    };
    run_on_turmoil(seed, limit_ms, &hosting, node).map_err(|e| WorldError::Network(e.to_string()))?
}
