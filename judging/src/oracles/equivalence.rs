//! Equivalence (§5.1, §5.3): with an optimisation switched off, the same seed makes the same
//! successful mutating API calls, object by object, and ends in the same state. Only the number of
//! no-op reconciles may differ. A reconciler that reads a field its update predicate ignores breaks
//! this (the §5.1 mutation test), and so does a lazy copy whose patch is not the diff.
//!
//! Status writes are compared per simulated instant, by the last one of the instant: the equivalence
//! world serves requests in zero simulated time, so many reconciles share an instant, and the order
//! in which the runtime polls zero-time tasks there is one a no-op reconcile can shift (a status
//! report written mid-instant may count a runner whose own write lands later in the same instant).
//! What another instant can observe is the status at the instant's end; every other write is
//! compared call by call.

use std::collections::BTreeMap;

use arc_sim::apiserver::{AuditEntry, BodyHashes};
use arc_sim::record::Interest;
use arc_world::RunRecord;
use serde_json::Value;

use super::TwinOracle;
use crate::violation::Violation;

/// One successful mutating call as the comparison sees it: `(verb, /status?, body hash)`.
type Call = (String, bool, u64);

/// Per object (status writes as a stream of their own, keyed `…/status`), the successful mutating calls
/// of the controller and listeners, each with its actor and sim ms (reported, not compared); of the
/// status writes one actor made to one object in one instant, only the last.
type CallsByObject = BTreeMap<(String, String), Vec<(Call, String, u64)>>;

fn calls(run: &RunRecord) -> CallsByObject {
    let mut out: CallsByObject = BTreeMap::new();
    let judged = |actor: &str| actor == "listener" || crate::view::is_controller(actor);
    for a in run.audit().filter(|a| a.code < 300 && judged(&a.actor)) {
        let stream = if a.status_subresource { "/status" } else { "" };
        let key = (a.resource.clone(), format!("{}/{}{stream}", a.namespace, a.name));
        let body = a.body_hash.expect("the server hashes bodies for a judge that keeps BodyHashes (needs)");
        let call = (a.verb.to_string(), a.status_subresource, body);
        let calls = out.entry(key).or_default();
        let same_instant = calls.last().is_some_and(|(_, actor, ms)| *ms == a.ms && *actor == a.actor);
        if a.status_subresource && same_instant {
            calls.pop();
        }
        calls.push((call, a.actor.clone(), a.ms));
    }
    out
}

/// `patch/status by controller at 1234 ms`, or `none`.
fn describe_call(call: Option<&(Call, String, u64)>) -> String {
    match call {
        Some(((verb, status, _), actor, ms)) => {
            format!("{verb}{} by {actor} at {ms} ms", if *status { "/status" } else { "" })
        }
        None => "none".into(),
    }
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
            out.insert((plural.to_string(), crate::view::key_of(&object)), object);
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

    fn needs(&self) -> Interest {
        Interest::of::<AuditEntry>().and::<BodyHashes>()
    }

    fn compare(&self, base: &RunRecord, twin: &RunRecord) -> Vec<Violation> {
        let (a, b) = (calls(base), calls(twin));
        let mut out = Vec::new();
        for key in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
            let (x, y) =
                (a.get(key).map(Vec::as_slice).unwrap_or(&[]), b.get(key).map(Vec::as_slice).unwrap_or(&[]));
            let same = x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.0 == q.0);
            if !same {
                let first = x.iter().zip(y).position(|(p, q)| p.0 != q.0).unwrap_or(x.len().min(y.len()));
                let at_ms = x.get(first).or(y.get(first)).map_or(base.end_ms.min(twin.end_ms), |c| c.2);
                out.push(Violation {
                    oracle: self.name(),
                    at_ms,
                    objects: vec![format!("{} {}", key.0, key.1)],
                    message: format!(
                        "{} vs {} successful mutating calls, first difference at call #{}: {} vs {}",
                        x.len(),
                        y.len(),
                        first + 1,
                        describe_call(x.get(first)),
                        describe_call(y.get(first)),
                    ),
                });
            }
        }
        let (s, t) = (final_state(base), final_state(twin));
        if out.is_empty() && s != t {
            let differing: Vec<String> = s
                .keys()
                .chain(t.keys().filter(|k| !s.contains_key(*k)))
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

#[cfg(test)]
mod tests {
    use arc_sim::faults::ApiVerb;
    use arc_world::SyntheticRun;

    use super::*;
    use crate::oracles::fixtures::{NS, er, request};

    /// A successful write of `actor` to EphemeralRunner `r` at `ms` (to its status when `status`),
    /// whose body hashes to `body`.
    fn write(ms: u64, actor: &str, status: bool, body: u64) -> AuditEntry {
        let mut entry = request(ms, actor, ApiVerb::Patch, "ephemeralrunners", "r", 200);
        entry.status_subresource = status;
        entry.body_hash = Some(body);
        entry
    }

    /// A run making `writes` and ending with runner `r` in `phase`.
    fn run(writes: Vec<AuditEntry>, phase: &str) -> RunRecord {
        let mut synthetic = SyntheticRun::new();
        for w in writes {
            synthetic = synthetic.event(w.ms, w);
        }
        synthetic.objects("ephemeralrunners", vec![er("r", "u1", Some(phase), 41, None)]).build()
    }

    #[test]
    fn the_same_calls_and_final_state_are_clean() {
        let calls = || vec![write(1, "controller", false, 10), write(2, "controller", true, 20)];
        assert!(
            SameCallsAndFinalState.compare(&run(calls(), "Running"), &run(calls(), "Running")).is_empty()
        );
    }

    #[test]
    fn a_write_with_another_body_is_a_violation() {
        let base = run(vec![write(1, "controller", false, 10), write(2, "controller", false, 11)], "Running");
        let twin = run(vec![write(1, "controller", false, 10), write(2, "controller", false, 12)], "Running");
        let found = SameCallsAndFinalState.compare(&base, &twin);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].at_ms, 2);
        assert_eq!(found[0].objects, vec![format!("ephemeralrunners {NS}/r")]);
        assert!(found[0].message.contains("2 vs 2 successful mutating calls, first difference at call #2"));
    }

    #[test]
    fn an_extra_write_in_the_twin_is_a_violation() {
        let base = run(vec![write(1, "controller", false, 10)], "Running");
        let twin = run(vec![write(1, "controller", false, 10), write(3, "listener", false, 10)], "Running");
        let found = SameCallsAndFinalState.compare(&base, &twin);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].message.contains("1 vs 2 successful mutating calls"), "{}", found[0].message);
        assert!(found[0].message.contains("none vs patch by listener at 3 ms"), "{}", found[0].message);
    }

    #[test]
    fn only_the_last_status_write_of_an_instant_is_compared() {
        let base = run(vec![write(5, "controller", true, 1), write(5, "controller", true, 2)], "Running");
        let twin = run(vec![write(5, "controller", true, 2)], "Running");
        assert!(SameCallsAndFinalState.compare(&base, &twin).is_empty());
        let spread = run(vec![write(4, "controller", true, 1), write(5, "controller", true, 2)], "Running");
        assert_eq!(SameCallsAndFinalState.compare(&spread, &twin).len(), 1, "two instants, two writes");
    }

    #[test]
    fn failed_calls_and_other_actors_are_not_compared() {
        let mut refused = write(2, "controller", false, 99);
        refused.code = 409;
        let base =
            run(vec![write(1, "controller", false, 10), refused, write(3, "kubelet", false, 7)], "Running");
        let twin = run(vec![write(1, "controller", false, 10)], "Running");
        assert!(SameCallsAndFinalState.compare(&base, &twin).is_empty());
    }

    #[test]
    fn the_same_calls_with_another_final_state_is_a_violation() {
        let calls = || vec![write(1, "controller", false, 10)];
        let found = SameCallsAndFinalState.compare(&run(calls(), "Running"), &run(calls(), "Succeeded"));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].objects, vec![format!("ephemeralrunners {NS}/r")]);
        assert_eq!(found[0].message, "the same calls but a different final state");
        let mut moved_on = run(calls(), "Running");
        moved_on.objects.get_mut("ephemeralrunners").expect("set")[0]["metadata"]["resourceVersion"] =
            "77".into();
        let same = SameCallsAndFinalState.compare(&run(calls(), "Running"), &moved_on);
        assert!(same.is_empty(), "resourceVersions may differ: {same:?}");
    }
}
