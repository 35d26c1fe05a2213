//! `arcsim list`: the scenarios, control worlds, variants, oracles and probes, one line each.

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
    Ok(())
}
