//! Leader election: with several controller replicas, only the one holding the Lease acts.

use arc_sim::apiserver::{AuditEntry, Committed};
use arc_sim::record::Interest;
use arc_sim::world::RunRecord;

use super::Oracle;
use super::view::str_at;
use crate::verdict::Violation;

/// Every successful write a controller replica makes (other than to the Lease) comes while the
/// Lease's committed holder is that replica (identity `controller#<i>.<incarnation>`, actor
/// `controller#<i>`).
pub struct OneLeaderAtATime;

impl Oracle for OneLeaderAtATime {
    fn name(&self) -> &'static str {
        "one-leader-at-a-time"
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
            let leading = holder.split('.').next() == Some(a.actor.as_str());
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
