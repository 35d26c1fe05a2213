//! Leader election: with several controller replicas, only the one holding the Lease acts.

use arc_sim::apiserver::{AuditEntry, Committed};
use arc_sim::record::Interest;
use arc_world::RunRecord;

use super::Oracle;
use crate::view::{holder_actor, str_at};
use crate::violation::Violation;

/// Every successful write a controller replica makes (other than to the Lease) comes while the
/// Lease's committed holder is that replica (identity `controller#<i>.<incarnation>`, actor
/// `controller#<i>`).
pub struct OneLeaderAtATime;

impl Oracle for OneLeaderAtATime {
    fn name(&self) -> &'static str {
        "one-leader-at-a-time"
    }

    /// Judges a record so far: each write is judged against the lease committed before it.
    fn judges_so_far(&self) -> bool {
        true
    }

    fn describe(&self) -> &'static str {
        "a controller replica writes only while the Lease names it as holder"
    }

    fn needs(&self) -> Interest {
        Interest::of::<AuditEntry>().and_resources::<Committed>(&["leases"])
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let mut holder = String::new();
        let mut out = Vec::new();
        for event in &run.events {
            if let Some(committed) = event.get::<Committed>().filter(|c| c.resource == "leases") {
                holder = str_at(&committed.change.object, "/spec/holderIdentity").unwrap_or("").to_string();
                continue;
            }
            let Some(a) = event.get::<AuditEntry>() else { continue };
            if !a.actor.starts_with("controller#")
                || a.resource == "leases"
                || a.code >= 300
                || !a.verb.is_mutating()
            {
                continue;
            }
            let leading = holder_actor(&holder) == a.actor;
            if !leading {
                out.push(Violation {
                    oracle: self.name(),
                    at_ms: a.ms,
                    objects: vec![format!("{} {}/{}", a.resource, a.namespace, a.name), a.actor.clone()],
                    message: format!("{} wrote ({}) while the Lease was held by {holder:?}", a.actor, a.verb),
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use arc_sim::apiserver::EventType;
    use arc_sim::faults::ApiVerb;
    use arc_world::SyntheticRun;
    use serde_json::{Value, json};

    use super::*;
    use crate::oracles::fixtures::{NS, request};

    fn lease(holder: &str) -> Value {
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "arc-controller", "namespace": NS, "uid": "lease"},
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15}})
    }

    fn patch(ms: u64, actor: &str, code: u16) -> AuditEntry {
        request(ms, actor, ApiVerb::Patch, "ephemeralrunners", "r", code)
    }

    #[test]
    fn writes_of_the_holder_and_failed_or_read_only_requests_of_a_standby_are_clean() {
        let run = SyntheticRun::new()
            .committed(1, "leases", EventType::Added, lease("controller#0.0"))
            .event(2, patch(2, "controller#0", 200))
            .event(3, patch(3, "controller#1", 409))
            .event(4, request(4, "controller#1", ApiVerb::Get, "ephemeralrunners", "r", 200))
            .event(5, request(5, "controller#1", ApiVerb::Update, "leases", "arc-controller", 200))
            .committed(5, "leases", EventType::Modified, lease("controller#1.0"))
            .event(6, patch(6, "controller#1", 200))
            .event(7, patch(7, "listener", 200))
            .build();
        assert!(OneLeaderAtATime.check(&run).is_empty(), "{:?}", OneLeaderAtATime.check(&run));
    }

    #[test]
    fn a_write_by_a_replica_the_lease_does_not_name_is_a_violation() {
        let run = SyntheticRun::new()
            .committed(1, "leases", EventType::Added, lease("controller#0.0"))
            .event(2, patch(2, "controller#1", 200))
            .committed(3, "leases", EventType::Modified, lease("controller#1.0"))
            .event(4, patch(4, "controller#0", 201))
            .build();
        let found = OneLeaderAtATime.check(&run);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!((found[0].at_ms, found[1].at_ms), (2, 4));
        assert!(found[0].message.contains("controller#1 wrote"), "{}", found[0].message);
        assert!(found[1].message.contains("held by \"controller#1.0\""), "{}", found[1].message);
    }

    #[test]
    fn a_write_before_any_lease_exists_is_a_violation() {
        let run = SyntheticRun::new().event(1, patch(1, "controller#0", 200)).build();
        assert_eq!(OneLeaderAtATime.check(&run).len(), 1);
    }
}
