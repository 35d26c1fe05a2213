//! Seeds and the named random streams drawn from them.
//!
//! A run has one [`Seed`]. Each component of the world draws from its own ChaCha8 stream, selected by
//! the FNV-1a hash of the component's name, so extra draws in one component (say the fake GitHub)
//! never perturb another (say the API server's watch lag). Nothing in the world uses any other source
//! of randomness.

use std::fmt;
use std::str::FromStr;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::fnv::fnv1a64;

/// The one number a run is reproduced from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Seed(pub u64);

/// The components that own a random stream. Each name is part of the reproduction contract: renaming
/// one changes every trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Component {
    /// The fake API server: uids, generated names, watch lag, GC delay.
    ApiServer,
    /// The API server's fault layer.
    ApiFaults,
    /// The kubelet model: scheduling and start delays, exits.
    Kubelet,
    /// The fake GitHub service: assignment order and latency.
    GitHub,
    /// The fake GitHub's fault layer.
    GitHubFaults,
    /// The workload generator: job arrivals, durations, cancellations.
    Workload,
    /// Scenario-level choices (swarm fault mixes, scripted schedules).
    Scenario,
    /// Schedule exploration (`--schedule random|pct:D`): how often a task defers itself at a point.
    Schedule,
}

impl Component {
    /// The stream's stable name.
    pub fn name(self) -> &'static str {
        match self {
            Component::ApiServer => "apiserver",
            Component::ApiFaults => "apiserver-faults",
            Component::Kubelet => "kubelet",
            Component::GitHub => "github",
            Component::GitHubFaults => "github-faults",
            Component::Workload => "workload",
            Component::Scenario => "scenario",
            Component::Schedule => "schedule",
        }
    }
}

impl Seed {
    /// The random stream of `component` under this seed.
    pub fn rng(self, component: Component) -> ChaCha8Rng {
        self.named_rng(component.name())
    }

    /// The random stream for an arbitrary stable name (for sub-streams such as one per watch).
    pub fn named_rng(self, name: &str) -> ChaCha8Rng {
        let mut rng = ChaCha8Rng::seed_from_u64(self.0);
        rng.set_stream(fnv1a64(name.as_bytes()));
        rng
    }
}

impl fmt::Display for Seed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Why a string is not a seed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid seed {input:?}: expected an unsigned 64-bit integer, decimal (8877673959163467592) or hex (0x7b2a…)"
)]
pub struct SeedParseError {
    /// The rejected input.
    pub input: String,
}

impl FromStr for Seed {
    type Err = SeedParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let trimmed = s.trim();
        let parsed = match trimmed.strip_prefix("0x").or_else(|| trimmed.strip_prefix("0X")) {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => trimmed.parse::<u64>(),
        };
        parsed.map(Seed).map_err(|_| SeedParseError { input: s.to_string() })
    }
}

#[cfg(test)]
mod tests {
    use rand::RngCore;

    use super::*;

    #[test]
    fn same_seed_and_component_give_the_same_stream() {
        let a: Vec<u64> = (0..4).map(|_| Seed(7).rng(Component::GitHub).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut x = Seed(7).rng(Component::GitHub);
        let mut y = Seed(7).rng(Component::GitHub);
        assert_eq!((x.next_u64(), x.next_u64()), (y.next_u64(), y.next_u64()));
    }

    #[test]
    fn components_draw_independent_streams() {
        let mut api = Seed(7).rng(Component::ApiServer);
        let mut gh = Seed(7).rng(Component::GitHub);
        assert_ne!(api.next_u64(), gh.next_u64());
    }

    #[test]
    fn seeds_parse_in_decimal_and_hex_and_reject_garbage() {
        assert_eq!("8877673959163467592".parse::<Seed>(), Ok(Seed(8877673959163467592)));
        assert_eq!("0xff".parse::<Seed>(), Ok(Seed(255)));
        let err = "-3".parse::<Seed>().unwrap_err();
        assert!(err.to_string().contains("unsigned 64-bit"));
        assert!("18446744073709551616".parse::<Seed>().is_err());
        assert!("".parse::<Seed>().is_err());
    }
}
