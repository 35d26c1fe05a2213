//! Pods of runners: each owned by the runner of its name, created a bounded number of times, and no
//! reconcile error caused by AlreadyExists (race 1, §8.1).

use std::collections::BTreeMap;

use arc_controller::runtime::metrics::RECONCILE_ERRORS_TOTAL;
use arc_sim::apiserver::EventType;
use arc_sim::apiserver::{AuditEntry, Committed};
use arc_sim::faults::ApiVerb;
use arc_sim::record::Interest;
use arc_sim::world::RunRecord;

use super::Oracle;
use super::view::{controller_uid, key_of, uid_of};
use crate::verdict::Violation;

/// Every runner pod is controlled by the live EphemeralRunner (or Runner) of the same name.
pub struct PodOwnedByItsRunner;

impl Oracle for PodOwnedByItsRunner {
    fn name(&self) -> &'static str {
        "pod-owned-by-its-runner"
    }

    fn describe(&self) -> &'static str {
        "a runner pod's controller ownerReference is the uid of the runner of the same name"
    }

    fn needs(&self) -> Interest {
        Interest::of_resources::<Committed>(&["ephemeralrunners", "runners", "pods"])
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let mut owners: BTreeMap<String, String> = BTreeMap::new();
        let mut out = Vec::new();
        for (ms, plural, change) in run.committed() {
            match (plural, change.kind) {
                ("ephemeralrunners" | "runners", EventType::Added) => {
                    owners.insert(key_of(&change.object), uid_of(&change.object).to_string());
                }
                ("ephemeralrunners" | "runners", EventType::Deleted) => {
                    owners.remove(&key_of(&change.object));
                }
                ("pods", EventType::Added) => {
                    let key = key_of(&change.object);
                    let (Some(owner), Some(expected)) = (controller_uid(&change.object), owners.get(&key))
                    else {
                        continue;
                    };
                    if owner != expected {
                        out.push(Violation {
                            oracle: self.name(),
                            at_ms: ms,
                            objects: vec![format!("pod {key}")],
                            message: format!(
                                "controlled by uid {owner}, but the live runner {key} is uid {expected}"
                            ),
                        });
                    }
                }
                _ => {}
            }
        }
        out
    }
}

/// No reconcile of the EphemeralRunner controller fails because a pod create met AlreadyExists (with
/// #4201 such a create is an info log and a 5 s requeue).
pub struct NoAlreadyExistsErrors;

impl Oracle for NoAlreadyExistsErrors {
    fn name(&self) -> &'static str {
        "no-already-exists-reconcile-errors"
    }

    fn describe(&self) -> &'static str {
        "zero EphemeralRunner reconcile errors caused by AlreadyExists"
    }

    fn needs(&self) -> Interest {
        Interest::none()
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let errors = run.metric(
            RECONCILE_ERRORS_TOTAL,
            &[("controller", "ephemeralrunner"), ("reason", "AlreadyExists")],
        );
        if errors == 0 {
            return Vec::new();
        }
        vec![Violation {
            oracle: self.name(),
            at_ms: run.end_ms,
            objects: vec!["controller ephemeralrunner".into()],
            message: format!("{errors} reconcile errors with reason AlreadyExists"),
        }]
    }
}

/// Duplicate runner-pod creates (answered AlreadyExists) stay within a small bound per pod incarnation:
/// with the fix each stale-cache reconcile makes one, and the 5 s requeue is longer than the watch lag.
/// Only EphemeralRunner pods are judged: the listener pod's controller never had #4201's handling, in
/// ARC or here, and retries its creates as reconcile errors.
pub struct BoundedPodCreates;

/// Duplicate creates allowed per pod incarnation.
pub const DUPLICATE_CREATES_PER_POD: usize = 3;

impl Oracle for BoundedPodCreates {
    fn name(&self) -> &'static str {
        "bounded-pod-creates"
    }

    fn describe(&self) -> &'static str {
        "at most 3 runner-pod creates answered AlreadyExists per pod incarnation"
    }

    fn needs(&self) -> Interest {
        Interest::of_resources::<AuditEntry>(&["pods"]).and_resources::<Committed>(&["pods"])
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let runner_pods: std::collections::BTreeSet<String> = run
            .changes_of("pods")
            .filter(|(_, c)| c.object.pointer("/metadata/labels/actions-ephemeral-runner").is_some())
            .map(|(_, c)| key_of(&c.object))
            .collect();
        let mut per_name: BTreeMap<(&str, &str), (usize, usize, u64)> = BTreeMap::new();
        let pod_creates = run.audit().filter(|a| a.resource == "pods" && a.verb == ApiVerb::Create);
        for a in pod_creates.filter(|a| runner_pods.contains(&format!("{}/{}", a.namespace, a.name))) {
            let entry = per_name.entry((a.namespace.as_str(), a.name.as_str())).or_insert((0, 0, 0));
            if a.took_effect() {
                entry.0 += 1;
            } else if a.code == 409 {
                entry.1 += 1;
                entry.2 = a.ms;
            }
        }
        per_name
            .into_iter()
            .filter(|(_, (made, dup, _))| *dup > DUPLICATE_CREATES_PER_POD * (*made).max(1))
            .map(|((ns, name), (made, dup, last))| Violation {
                oracle: self.name(),
                at_ms: last,
                objects: vec![format!("pod {ns}/{name}")],
                message: format!("{dup} creates answered AlreadyExists for {made} pod incarnation(s)"),
            })
            .collect()
    }
}
