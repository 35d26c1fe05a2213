//! `arcsim list`: the scenarios, control worlds, variants, oracles, probes and kill rows, one line each.

use crate::kill_table::{CI_SEED_BUDGET, KILL_TABLE};
use crate::{oracles, probes, scenarios, variant::Variant};

/// Prints the catalogue.
pub fn run() -> anyhow::Result<()> {
    println!("scenarios:");
    for s in scenarios::all() {
        println!("  {:<30} {}", s.name(), s.describe());
    }
    println!("control worlds (run on request: the race without its ingredient):");
    for s in scenarios::controls() {
        println!("  {:<30} {}", s.name(), s.describe());
    }
    println!("variants:");
    for v in Variant::ALL {
        println!("  {:<30} {}", v.name(), v.describe());
    }
    println!("oracles:");
    for o in oracles::all() {
        println!("  {:<30} {}", o.name(), o.describe());
    }
    for o in oracles::all_twins() {
        println!("  {:<30} {} (twin runs)", o.name(), o.describe());
    }
    println!("probes:");
    for p in probes::all() {
        println!("  {:<30} {}", p.name, p.describe);
    }
    println!(
        "kill table (variant scenario oracle hits/seeds bound median; bounds over {CI_SEED_BUDGET} seeds are swept by scripts/kill-rows.sh):"
    );
    for row in KILL_TABLE {
        println!(
            "  {} {} {} {}/{} {} {}",
            row.variant,
            row.scenario.name(),
            row.oracle.name(),
            row.rate.hits,
            row.rate.seeds,
            row.within_seeds(),
            row.rate.median_seeds_to_kill().map_or("-".to_string(), |m| m.to_string())
        );
    }
    Ok(())
}
