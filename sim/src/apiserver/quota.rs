//! ResourceQuota object counts: the ResourceQuota admission plugin
//! (`plugin/pkg/admission/resourcequota`) and kube-controller-manager's resourcequota controller.
//!
//! A create is charged to `pods` / `count/pods` (pods that are not terminal), `secrets`,
//! `configmaps`, `resourcequotas` and `count/<plural>[.<group>]` of any served kind. Admission checks
//! every quota of the namespace that has a status (a new quota restricts nothing until the controller
//! has filled `status.hard`), refuses with kube-apiserver's 403 (`pods "x" is forbidden: exceeded
//! quota: q, requested: pods=1, used: pods=2, limited: pods=2`), and charges `status.used` in the same
//! request. The controller recalculates `status.hard` and `status.used` a seeded delay after any change
//! in a namespace with quotas (`ApiServerConfig::controller_delay`), trace actor
//! `resourcequota-controller`.
//!
//! Simplification: compute resources (`requests.cpu`, `limits.memory`…), scopes and scope selectors
//! are neither counted nor enforced; the controller writes straight to the store.

use crate::clock::sleep_until_some;
use crate::json_at::At;
use std::collections::BTreeMap;
use std::sync::Arc;

use futures::StreamExt;
use futures::channel::mpsc::UnboundedReceiver;
use jiff::{SignedDuration, Timestamp};
use serde_json::{Map, Value, json};

use super::admission::meta_str;
use super::commit::commit;
use super::delay_queue::DelayQueue;
use super::events::ControllerWrote;
use super::registry::{Registry, ResourceId, ResourceType};
use super::serviceaccount_admission::admission_name;
use super::status::{self, ApiError};
use super::store::{Change, StoreKey};
use super::{Shared, State};

/// The controller's name as the trace shows its actor.
pub const CONTROLLER: &str = "resourcequota-controller";

/// The quota resource names a create of `rt` is charged to.
pub fn resource_names(rt: &ResourceType) -> Vec<String> {
    let count = if rt.group.is_empty() {
        format!("count/{}", rt.plural)
    } else {
        format!("count/{}.{}", rt.plural, rt.group)
    };
    let short = rt.group.is_empty()
        && ["pods", "secrets", "configmaps", "resourcequotas"].contains(&rt.plural.as_str());
    let mut names = vec![count];
    if short {
        names.push(rt.plural.clone());
    }
    names.sort();
    names
}

/// The kind a quota resource name counts, if it is an object count the fake knows.
fn kind_counted(registry: &Registry, name: &str) -> Option<ResourceId> {
    let plural_group = name.strip_prefix("count/").unwrap_or(name);
    let (plural, group) = plural_group.split_once('.').unwrap_or((plural_group, ""));
    let id = registry.types().iter().position(|t| t.plural == plural && t.group == group)?;
    resource_names(registry.get(id)).contains(&name.to_string()).then_some(id)
}

/// Whether `object` counts against quota at `now`: everything does but terminal pods and pods past
/// their deletion grace period (`QuotaV1Pod`).
pub fn charged(rt: &ResourceType, object: &Value, now: Timestamp) -> bool {
    if !rt.is_pod() {
        return true;
    }
    let phase = object.at("/status/phase").and_then(Value::as_str).unwrap_or("");
    if phase == "Succeeded" || phase == "Failed" {
        return false;
    }
    let deleted_at = meta_str(object, "deletionTimestamp").and_then(|t| t.parse::<Timestamp>().ok());
    let grace = object.at("/metadata/deletionGracePeriodSeconds").and_then(Value::as_i64);
    match (deleted_at, grace) {
        (Some(at), Some(grace)) => now <= at + SignedDuration::from_secs(grace),
        _ => true,
    }
}

/// Objects of `resource` in `namespace` that count against quota now.
pub fn live_usage(sh: &Shared, st: &State, resource: ResourceId, namespace: &str) -> i64 {
    let rt = sh.registry.get(resource);
    let now = sh.wall_now();
    st.store.list(resource, Some(namespace)).into_iter().filter(|(_, o)| charged(rt, o, now)).count() as i64
}

/// A count quantity (`"10"`, `10`, `"1k"`); `None` for what is not a whole count.
fn parse_count(value: &Value) -> Option<i64> {
    if let Some(n) = value.as_i64() {
        return Some(n);
    }
    let text = value.as_str()?;
    let (digits, factor) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        None => (text, 1),
        Some((i, _)) => {
            let factor = match &text[i..] {
                "k" => 1_000,
                "M" => 1_000_000,
                "G" => 1_000_000_000,
                "Ki" => 1 << 10,
                "Mi" => 1 << 20,
                "Gi" => 1 << 30,
                _ => return None,
            };
            (&text[..i], factor)
        }
    };
    digits.parse::<i64>().ok().map(|n| n * factor)
}

/// A quota's `status.<part>` as counts.
fn status_counts(quota: &Value, part: &str) -> BTreeMap<String, i64> {
    let map = quota.at(&format!("/status/{part}")).and_then(Value::as_object);
    map.into_iter().flatten().filter_map(|(k, v)| Some((k.clone(), parse_count(v)?))).collect()
}

/// `prettyPrint`: `a=1,b=2` in key order.
fn pretty(items: &BTreeMap<String, i64>) -> String {
    items.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")
}

/// The quotas of `namespace`, by name.
fn quotas(sh: &Shared, st: &State, namespace: &str) -> Vec<(StoreKey, Arc<Value>)> {
    let Some(id) = sh.registry.find("", "v1", "resourcequotas") else { return Vec::new() };
    st.store.list(id, Some(namespace)).into_iter().map(|(k, o)| (k.clone(), o.clone())).collect()
}

/// Admits a create of `object` (kind `resource`) into `namespace`: 403 if a quota is exhausted, else
/// charges every quota that covers it.
pub fn admit_create(
    sh: &Shared,
    st: &mut State,
    resource: ResourceId,
    namespace: &str,
    object: &Value,
) -> Result<(), ApiError> {
    let rt = sh.registry.get(resource);
    if namespace.is_empty() || !charged(rt, object, sh.wall_now()) {
        return Ok(());
    }
    let names = resource_names(rt);
    let mut charges = Vec::new();
    for (key, quota) in quotas(sh, st, namespace) {
        let hard = status_counts(&quota, "hard");
        let covered: Vec<&String> = names.iter().filter(|n| hard.contains_key(*n)).collect();
        if covered.is_empty() {
            continue;
        }
        let used = status_counts(&quota, "used");
        if let Some(why) = refusal(&key.name, &covered, &hard, &used) {
            return Err(status::forbidden(rt, &admission_name(object), &why));
        }
        charges.push((key, quota, covered.iter().map(|n| (*n).clone()).collect::<Vec<_>>(), used));
    }
    for (key, quota, covered, used) in charges {
        let mut next = (*quota).clone();
        for name in covered {
            next["status"]["used"][&name] = json!((used.get(&name).copied().unwrap_or(0) + 1).to_string());
        }
        commit(st, &key, &quota, next);
    }
    Ok(())
}

/// Why one quota refuses a create charged to `covered`, if it does.
fn refusal(
    quota: &str,
    covered: &[&String],
    hard: &BTreeMap<String, i64>,
    used: &BTreeMap<String, i64>,
) -> Option<String> {
    let unknown: Vec<&str> = covered.iter().filter(|n| !used.contains_key(**n)).map(|n| n.as_str()).collect();
    if !unknown.is_empty() {
        return Some(format!("status unknown for quota: {quota}, resources: {}", unknown.join(",")));
    }
    let exceeded: Vec<&String> = covered.iter().copied().filter(|n| used[*n] + 1 > hard[*n]).collect();
    if exceeded.is_empty() {
        return None;
    }
    let pick = |from: &BTreeMap<String, i64>| exceeded.iter().map(|n| ((*n).clone(), from[*n])).collect();
    let requested: BTreeMap<String, i64> = exceeded.iter().map(|n| ((*n).clone(), 1)).collect();
    Some(format!(
        "exceeded quota: {quota}, requested: {}, used: {}, limited: {}",
        pretty(&requested),
        pretty(&pick(used)),
        pretty(&pick(hard))
    ))
}

/// What the controller makes of one quota: `status.hard` from `spec.hard`, `status.used` counted for
/// every hard resource that is an object count.
fn recalculated(sh: &Shared, st: &State, namespace: &str, quota: &Value) -> Value {
    let hard = quota.at("/spec/hard").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut used = Map::new();
    for name in hard.keys() {
        if let Some(id) = kind_counted(&sh.registry, name) {
            used.insert(name.clone(), json!(live_usage(sh, st, id, namespace).to_string()));
        }
    }
    let mut next = quota.clone();
    next["status"] = json!({"hard": hard, "used": used});
    next
}

/// Recalculates the status of every quota in `namespace`.
pub fn sync_namespace(sh: &Shared, st: &mut State, namespace: &str) {
    for (key, quota) in quotas(sh, st, namespace) {
        let next = recalculated(sh, st, namespace, &quota);
        if next != *quota {
            commit(st, &key, &quota, next);
            let key = key.display();
            sh.record.emit(ControllerWrote {
                controller: CONTROLLER,
                action: "update-status",
                resource: "resourcequotas".into(),
                key,
            });
        }
    }
}

struct Controller {
    shared: Arc<Shared>,
    changes: UnboundedReceiver<Arc<Change>>,
    queue: DelayQueue<String>,
}

/// Starts the controller on the current runtime; it follows every change.
pub fn spawn(shared: Arc<Shared>) {
    let (tx, changes) = futures::channel::mpsc::unbounded();
    shared.lock().store.subscribe(None, None, tx);
    let rng = shared.seed.named_rng("apiserver/resourcequota");
    let queue = DelayQueue::new(rng, shared.config.controller_delay);
    tokio::spawn(Controller { shared, changes, queue }.run());
}

impl Controller {
    async fn run(mut self) {
        loop {
            let next = self.queue.next_due();
            tokio::select! {
                biased;
                _ = sleep_until_some(next), if next.is_some() => {
                    if let Some(namespace) = self.queue.pop() {
                        let mut st = self.shared.lock();
                        sync_namespace(&self.shared, &mut st, &namespace);
                    }
                }
                change = self.changes.next() => match change {
                    Some(change) => self.observe(&change),
                    None => break,
                },
            }
        }
    }

    /// Any change in a namespace that has quotas calls for a recalculation there.
    fn observe(&mut self, change: &Change) {
        let namespace = &change.key.namespace;
        if namespace.is_empty() {
            return;
        }
        let has_quotas = !quotas(&self.shared, &self.shared.lock(), namespace).is_empty();
        if has_quotas {
            self.queue.enqueue(namespace.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::fixtures;

    #[test]
    fn creates_are_charged_to_their_count_names() {
        assert_eq!(resource_names(&fixtures::resource("pods")), ["count/pods", "pods"]);
        assert_eq!(resource_names(&fixtures::resource("serviceaccounts")), ["count/serviceaccounts"]);
        assert_eq!(resource_names(&fixtures::resource("widgets")), ["count/widgets.example.com"]);
        let registry = fixtures::registry();
        assert_eq!(kind_counted(&registry, "pods"), registry.find_plural("pods"));
        assert_eq!(kind_counted(&registry, "count/widgets.example.com"), registry.find_plural("widgets"));
        assert_eq!(kind_counted(&registry, "requests.cpu"), None);
        assert_eq!(kind_counted(&registry, "serviceaccounts"), None, "only count/serviceaccounts");
    }

    #[test]
    fn terminal_pods_and_pods_past_their_grace_are_not_charged() {
        let pods = fixtures::resource("pods");
        let now = Timestamp::from_second(1_000).unwrap();
        assert!(charged(&pods, &json!({"status": {"phase": "Running"}}), now));
        assert!(!charged(&pods, &json!({"status": {"phase": "Succeeded"}}), now));
        let deleting = json!({"metadata": {"deletionTimestamp": "1970-01-01T00:16:00Z", "deletionGracePeriodSeconds": 30}});
        assert!(!charged(&pods, &deleting, now), "960 s + 30 s is before 1000 s");
        assert!(charged(&pods, &deleting, Timestamp::from_second(980).unwrap()));
    }

    #[test]
    fn an_exhausted_quota_words_its_refusal_as_kube_apiserver_does() {
        let counts = |pairs: &[(&str, i64)]| pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let (pods, count) = ("pods".to_string(), "count/pods".to_string());
        let hard = counts(&[("pods", 2), ("count/pods", 5)]);
        let used = counts(&[("pods", 2), ("count/pods", 2)]);
        assert_eq!(
            refusal("q", &[&count, &pods], &hard, &used).unwrap(),
            "exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2"
        );
        assert_eq!(refusal("q", &[&count], &hard, &used), None);
        assert_eq!(
            refusal("q", &[&pods], &hard, &BTreeMap::new()).unwrap(),
            "status unknown for quota: q, resources: pods"
        );
        assert_eq!(parse_count(&json!("2k")), Some(2_000));
        assert_eq!(parse_count(&json!("1.5")), None);
    }
}
