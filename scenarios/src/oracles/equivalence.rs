//! Equivalence (§5.1, §5.3): with an optimisation switched off, the same seed makes the same
//! successful mutating API calls, object by object, and ends in the same state. Only the number of
//! no-op reconciles may differ. A reconciler that reads a field its update predicate ignores breaks
//! this (the §5.1 mutation test), and so does a lazy copy whose patch is not the diff.

use std::collections::BTreeMap;

use arc_sim::world::RunRecord;
use serde_json::Value;

use super::TwinOracle;
use crate::verdict::Violation;

/// Per object, the successful mutating calls of the controller and listeners: `(verb, /status?, body hash)`.
type CallsByObject = BTreeMap<(String, String), Vec<(String, bool, u64)>>;

fn calls(run: &RunRecord) -> CallsByObject {
    let mut out: CallsByObject = BTreeMap::new();
    for a in
        run.audit.iter().filter(|a| a.code < 300 && matches!(a.actor.as_str(), "controller" | "listener"))
    {
        let key = (a.resource.clone(), format!("{}/{}", a.namespace, a.name));
        out.entry(key).or_default().push((a.verb.to_string(), a.status_subresource, a.body_hash));
    }
    out
}

/// Objects at the end, without their resourceVersion.
fn final_state(run: &RunRecord) -> BTreeMap<(String, String), Value> {
    let mut out = BTreeMap::new();
    for plural in [
        "autoscalingrunnersets",
        "ephemeralrunnersets",
        "ephemeralrunners",
        "autoscalinglisteners",
        "pods",
        "secrets",
    ] {
        for object in run.objects_of(plural) {
            let mut object = object.clone();
            if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("resourceVersion");
            }
            out.insert((plural.to_string(), super::view::key_of(&object)), object);
        }
    }
    out
}

/// The twin makes the same successful mutating calls per object and ends in the same state.
pub struct SameCallsAndFinalState;

impl TwinOracle for SameCallsAndFinalState {
    fn name(&self) -> &'static str {
        "same-mutating-calls-and-final-state"
    }

    fn describe(&self) -> &'static str {
        "with an optimisation off, the same seed makes the same mutating calls and ends in the same state"
    }

    fn compare(&self, base: &RunRecord, twin: &RunRecord) -> Vec<Violation> {
        let (a, b) = (calls(base), calls(twin));
        let mut out = Vec::new();
        for key in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
            let (x, y) =
                (a.get(key).map(Vec::as_slice).unwrap_or(&[]), b.get(key).map(Vec::as_slice).unwrap_or(&[]));
            if x != y {
                let first = x.iter().zip(y).position(|(p, q)| p != q).unwrap_or(x.len().min(y.len()));
                out.push(Violation {
                    oracle: self.name(),
                    at_ms: base.end_ms.min(twin.end_ms),
                    objects: vec![format!("{} {}", key.0, key.1)],
                    message: format!(
                        "{} vs {} successful mutating calls, first difference at call #{}",
                        x.len(),
                        y.len(),
                        first + 1
                    ),
                });
            }
        }
        let (s, t) = (final_state(base), final_state(twin));
        if out.is_empty() && s != t {
            let differing: Vec<String> = s
                .keys()
                .chain(t.keys())
                .filter(|k| s.get(*k) != t.get(*k))
                .map(|k| format!("{} {}", k.0, k.1))
                .collect();
            out.push(Violation {
                oracle: self.name(),
                at_ms: base.end_ms,
                objects: differing.into_iter().take(5).collect(),
                message: "the same calls but a different final state".into(),
            });
        }
        out
    }
}
