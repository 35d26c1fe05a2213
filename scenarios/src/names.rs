//! Names read back from a sweep's JSON. Oracles and probes are named by `&'static str` in the types a
//! sweep writes; reading a file back maps each name to the static name of the oracle or probe it names,
//! so `arcsim merge` rebuilds the same types, and a name this build does not know is a clear error
//! (the file was written by a different arcsim).

use serde::Serialize;
use serde::de::{Deserialize, Deserializer, Error};

use crate::{oracles, probes};

/// The static name of the oracle or twin oracle called `name`.
pub fn oracle(name: &str) -> Option<&'static str> {
    let single = oracles::all().into_iter().map(|o| o.name());
    let twins = oracles::all_twins().into_iter().map(|o| o.name());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_oracle_and_probe_name_reads_back_and_others_do_not() {
        for o in oracles::all() {
            assert_eq!(oracle(o.name()), Some(o.name()));
        }
        for o in oracles::all_twins() {
            assert_eq!(oracle(o.name()), Some(o.name()));
        }
        for p in probes::all() {
            assert_eq!(probe(p.name), Some(p.name));
        }
        assert_eq!(oracle("no-such-oracle"), None);
        assert_eq!(probe("no-such-probe"), None);
    }
}
