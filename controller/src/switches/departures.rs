//! [`Departures`]: places where this project's controller deliberately departs from an upstream
//! quirk. On is this project's behaviour; off is ARC's, quirk included. No bug variant turns these
//! off (the suite has no race that needs them); the upstream profiles do.

use serde::{Deserialize, Serialize};

use super::SwitchDoc;

/// This project's departures from upstream quirks. `Default` is every departure taken.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(default, deny_unknown_fields)]
pub struct Departures {
    /// A pod failure is recorded under the pod's UID once, with the time it was first seen, so a
    /// stale cache showing the same dead pod again changes nothing. Off (ARC's `deletePodAsFailed`):
    /// `failures[uid] = now` on every sighting, so the backoff restarts from the latest one.
    pub failure_time_kept: bool,
    /// The legacy pod's `pod-template-hash` covers labels, annotations, spec, GitHub URL and (with
    /// #1087) the token. Off (ARC's `FNVHashStringObjects`, which resets the hasher per object):
    /// only the last part reaches the sum — the token with #1087, the GitHub URL without it.
    pub pod_hash_covers_every_part: bool,
    /// The ARS copies its runner set's counts into its status when any of the four differs. Off
    /// (ARC's `updateStatus`): only when `currentReplicas` differs, so a shift between buckets at a
    /// constant total is not mirrored.
    pub ars_status_on_any_count: bool,
    /// The ARS patches its runner set's metadata only when merging the desired labels and
    /// annotations in changes them. Off (ARC): it compares the current maps with the desired ones,
    /// so a runner set carrying a label of its own gets a no-op patch on every pass, and the pass
    /// ends there, before the listener and the status.
    pub ars_metadata_compare_merged: bool,
    /// The ARS compares the existing listener with one built with the configured pull secrets. Off
    /// (ARC: built with none): with pull secrets configured, the listener is deleted and recreated
    /// on every pass.
    pub listener_compare_with_pull_secrets: bool,
}

/// Every departure, with what it departs from, in declaration order.
pub(super) const DOCS: &[SwitchDoc] = &[
    SwitchDoc::new(
        "failure_time_kept",
        "ARC deletePodAsFailed",
        "a pod failure keeps the time it was first seen",
    ),
    SwitchDoc::new(
        "pod_hash_covers_every_part",
        "ARC hash/fnv.go (legacy)",
        "legacy pod hash covers every part, not the last",
    ),
    SwitchDoc::new(
        "ars_status_on_any_count",
        "ARC ARS updateStatus",
        "ARS mirrors the counts when any of them differs",
    ),
    SwitchDoc::new(
        "ars_metadata_compare_merged",
        "ARC ARS runner-set metadata",
        "compare merged metadata: no no-op patch stall",
    ),
    SwitchDoc::new(
        "listener_compare_with_pull_secrets",
        "ARC ARS listener compare",
        "desired listener built with its pull secrets",
    ),
];

impl Default for Departures {
    fn default() -> Self {
        Self::uniform(true)
    }
}

impl Departures {
    /// Every upstream quirk kept (no departure taken).
    pub const fn upstream() -> Self {
        Self::uniform(false)
    }

    const fn uniform(on: bool) -> Self {
        Departures {
            failure_time_kept: on,
            pod_hash_covers_every_part: on,
            ars_status_on_any_count: on,
            ars_metadata_compare_merged: on,
            listener_compare_with_pull_secrets: on,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switches::docs_match_fields;

    #[test]
    fn every_departure_is_taken_by_default_and_none_upstream() {
        let on = serde_json::to_value(Departures::default()).unwrap();
        assert!(on.as_object().unwrap().values().all(|v| v == &serde_json::Value::Bool(true)));
        let off = serde_json::to_value(Departures::upstream()).unwrap();
        assert!(off.as_object().unwrap().values().all(|v| v == &serde_json::Value::Bool(false)));
    }

    #[test]
    fn every_departure_is_documented_in_order() {
        docs_match_fields(&Departures::default(), DOCS);
    }
}
