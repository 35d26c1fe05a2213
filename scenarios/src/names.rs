//! The catalog's oracles and probes by name, and names read back from a sweep's JSON. An oracle is
//! registered by being given to a scenario ([`all_oracles`]), so there is no second list to keep.
//! Oracles and probes are named by `&'static str` in the types a sweep writes; reading a file back
//! maps each name to the static name of the oracle or probe it names, so `arcsim merge` rebuilds the
//! same types, and a name this build does not know is a clear error (the file was written by a
//! different arcsim).

use serde::Serialize;
use serde::de::{Deserialize, Deserializer, Error};

use arc_judging::oracles::{Oracle, TwinOracle};
use arc_judging::probes;
use arc_judging::violation::Violation;

/// Every oracle some scenario runs, each once, in the order the scenarios name them: an oracle is
/// registered by being given to a scenario, so there is no second list to keep.
pub fn all_oracles() -> Vec<&'static dyn Oracle> {
    let mut all: Vec<&'static dyn Oracle> = Vec::new();
    let scenarios = crate::scenarios::all().into_iter().chain(crate::scenarios::field_reports::all());
    for oracle in scenarios.flat_map(|s| s.oracles()) {
        if !all.iter().any(|known| known.name() == oracle.name()) {
            all.push(oracle);
        }
    }
    all
}

/// The names of every oracle and twin oracle some scenario runs, each once.
pub fn all_oracle_names() -> Vec<&'static str> {
    let runs = all_oracles().into_iter().map(|o| o.name());
    runs.chain(all_twins().into_iter().map(|o| o.name())).collect()
}

/// Every twin oracle some scenario runs (judged on seed 1 of the fixed controller), each once.
pub fn all_twins() -> Vec<&'static dyn TwinOracle> {
    let mut all: Vec<&'static dyn TwinOracle> = Vec::new();
    let twins = crate::scenarios::all()
        .into_iter()
        .flat_map(|s| s.twins(arc_sim::Seed(1), crate::variant::Variant::Fixed))
        .flat_map(|twin| twin.oracles);
    for oracle in twins {
        if !all.iter().any(|known| known.name() == oracle.name()) {
            all.push(oracle);
        }
    }
    all
}

/// The static name of the oracle or twin oracle called `name`.
pub fn oracle(name: &str) -> Option<&'static str> {
    let single = all_oracles().into_iter().map(|o| o.name());
    let twins = all_twins().into_iter().map(|o| o.name());
    single.chain(twins).find(|known| *known == name)
}

/// The static name of the probe called `name`.
pub fn probe(name: &str) -> Option<&'static str> {
    probes::all().iter().map(|p| p.name).find(|known| *known == name)
}

/// Oracle names, as a seed's result lists the oracles that failed it; read back by [`oracle`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct OracleNames(pub Vec<&'static str>);

/// Probe names, as a seed's result lists the probes that fired; read back by [`probe`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct ProbeNames(pub Vec<&'static str>);

impl<'de> Deserialize<'de> for OracleNames {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        read(d, oracle, "oracle").map(OracleNames)
    }
}

impl<'de> Deserialize<'de> for ProbeNames {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        read(d, probe, "probe").map(ProbeNames)
    }
}

/// A list of names, each looked up by `known`.
fn read<'de, D: Deserializer<'de>>(
    d: D,
    known: fn(&str) -> Option<&'static str>,
    kind: &str,
) -> Result<Vec<&'static str>, D::Error> {
    let names = Vec::<String>::deserialize(d)?;
    let look_up = |name: &String| {
        known(name)
            .ok_or_else(|| D::Error::custom(format!("unknown {kind} {name:?} (written by another arcsim?)")))
    };
    names.iter().map(look_up).collect()
}

/// A violation as a sweep's JSON holds it: read back into a [`Violation`] if its oracle is known.
#[derive(serde::Deserialize)]
struct ViolationRecord {
    oracle: String,
    at_ms: u64,
    objects: Vec<String>,
    message: String,
}

/// Violations read back from a sweep's JSON (`#[serde(deserialize_with = "violations")]`): each
/// oracle's name must be one of this build's.
pub fn violations<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Violation>, D::Error> {
    let records = Vec::<ViolationRecord>::deserialize(d)?;
    let known = |r: ViolationRecord| {
        let oracle = oracle(&r.oracle).ok_or_else(|| {
            D::Error::custom(format!("unknown oracle {:?} (written by another arcsim?)", r.oracle))
        })?;
        Ok(Violation { oracle, at_ms: r.at_ms, objects: r.objects, message: r.message })
    };
    records.into_iter().map(known).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_oracle_and_probe_name_reads_back_and_others_do_not() {
        for o in all_oracles() {
            assert_eq!(oracle(o.name()), Some(o.name()));
        }
        for o in all_twins() {
            assert_eq!(oracle(o.name()), Some(o.name()));
        }
        for p in probes::all() {
            assert_eq!(probe(p.name), Some(p.name));
        }
        assert_eq!(oracle("no-such-oracle"), None);
        assert_eq!(probe("no-such-probe"), None);
    }
}
