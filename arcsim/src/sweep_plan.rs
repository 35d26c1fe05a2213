//! [`SweepPlan`]: what a sweep runs — the profile, scenarios, variants and seeds, and the options
//! that shape each cell (its seeds, its early stop, its shard, its network and schedule, the
//! alternatives it assumes).

use arc_controller::Profile;
use arc_sim::Seed;
use arc_sim::github::Assumed;
use arc_sim::net::Network;
use arc_sim::schedule::Schedule;

use crate::shard::Shard;
use arc_scenarios::kill_table::{JudgedUnder, KillExpectation, cell_bound_in, expectations_under};
use arc_scenarios::scenario::Scenario;
use arc_scenarios::variant::Variant;

/// What to run.
pub struct SweepPlan<'a> {
    /// The profile every variant is a variant of.
    pub profile: Profile,
    /// The scenarios.
    pub scenarios: Vec<&'a dyn Scenario>,
    /// The variants, each run against every scenario.
    pub variants: Vec<Variant>,
    /// The seeds.
    pub seeds: Vec<Seed>,
    /// The fixed controller runs only the first this many of `seeds` (a preset's plan: its bug
    /// variants run further, up to their bounds); `None`: every seed.
    pub fixed_seeds: Option<u64>,
    /// Worker threads.
    pub jobs: usize,
    /// Run each seed twice and fail on any trace difference.
    pub check_determinism: bool,
    /// Run every seed of bug variants too, instead of stopping at the first failure (or the bound).
    pub exhaustive: bool,
    /// Run every variant in every scenario, not only where the kill table expects a kill.
    pub matrix: bool,
    /// The share of each cell's seeds to run ([`Shard::WHOLE`]: all of them).
    pub shard: Shard,
    /// Run every scenario at this many runners ([`Scaled`](arc_scenarios::scaled::Scaled)) instead of its own size.
    pub runners: Option<u32>,
    /// The network backend every run uses.
    pub network: Network,
    /// The order the sim's tasks take same-instant work in, in every run.
    pub schedule: Schedule,
    /// The alternatives assumed about GitHub in every run (`--assume`).
    pub assumed: Assumed,
    /// Draw the alternatives per seed instead ([`Assumed::drawn`], `--assumptions drawn`).
    pub draws_assumptions: bool,
    /// Stop a fixed-controller cell once every probe its scenario has a floor for has fired in this
    /// many seeds ([`crate::coverage`]).
    pub until_probes: Option<u32>,
}

impl<'a> SweepPlan<'a> {
    /// The alternatives the run of `seed` assumes.
    pub fn assumed_for(&self, seed: Seed) -> Assumed {
        if self.draws_assumptions { Assumed::drawn(seed) } else { self.assumed.clone() }
    }

    /// The alternatives kill rows are judged under: the plan's, or none when each seed draws its own.
    pub fn row_assumptions(&self) -> Option<&Assumed> {
        (!self.draws_assumptions).then_some(&self.assumed)
    }

    /// Where kill rows are judged: under [`Self::row_assumptions`], on the plan's network.
    pub fn judged_under(&self) -> JudgedUnder<'_> {
        JudgedUnder { assumed: self.row_assumptions(), network: self.network }
    }

    /// The largest bound of `variant`'s rows in `scenario` that hold under this plan's assumptions.
    fn bound(&self, variant: Variant, scenario: &dyn Scenario) -> Option<u32> {
        cell_bound_in(self.profile, variant, scenario.name(), self.judged_under())
    }

    /// Whether `variant` runs in `scenario` at all.
    fn runs(&self, scenario: &dyn Scenario, variant: Variant) -> bool {
        self.matrix || variant.is_fixed() || self.bound(variant, scenario).is_some()
    }

    /// The cells, in plan order.
    pub fn cells(&self) -> Vec<(&'a dyn Scenario, Variant)> {
        self.scenarios
            .iter()
            .flat_map(|s| self.variants.iter().filter(|v| self.runs(*s, **v)).map(move |v| (*s, *v)))
            .collect()
    }

    /// The seeds a cell runs (before sharding): all of them, a bug variant's first (its largest
    /// row bound), or the fixed controller's first [`Self::fixed_seeds`].
    pub fn seeds_of(&self, scenario: &dyn Scenario, variant: Variant) -> &[Seed] {
        let first = |n: u64| &self.seeds[..self.seeds.len().min(usize::try_from(n).unwrap_or(usize::MAX))];
        if variant.is_fixed() {
            return self.fixed_seeds.map_or(&self.seeds[..], first);
        }
        // An exhaustive plan (a measurement) asks for no bound: a row being measured has none yet.
        if self.exhaustive {
            return &self.seeds;
        }
        self.bound(variant, scenario).map_or(&self.seeds[..], |bound| first(u64::from(bound)))
    }

    /// The most seeds any bug-variant cell of this plan needs to judge its rows: its largest bound.
    pub fn widest_bound(&self) -> u64 {
        let cells = self.cells();
        let bounds = cells.iter().filter(|(_, v)| !v.is_fixed());
        bounds.filter_map(|(s, v)| self.bound(*v, *s)).map(u64::from).max().unwrap_or(0)
    }

    /// Whether a bug-variant cell stops early once its kill rows are met.
    pub fn stops_early(&self, variant: Variant) -> bool {
        !self.exhaustive && !variant.is_fixed()
    }

    /// The `--until-probes` count for a cell of `variant`: only the fixed controller stops on coverage.
    pub fn until_probes(&self, variant: Variant) -> Option<u32> {
        self.until_probes.filter(|_| variant.is_fixed())
    }

    /// The kill-table rows of a cell under this plan's profile.
    pub fn rows(&self, scenario: &dyn Scenario, variant: Variant) -> Vec<&'static KillExpectation> {
        expectations_under(self.profile, variant, scenario.name(), self.judged_under())
    }
}
