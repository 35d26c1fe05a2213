//! The scale-downs of a run (ARC-MODEL §9 item 5, #3371): each removal of a registered idle runner that
//! only the scaling path explains, with the versions of its EphemeralRunnerSet the controller's cache
//! could have held when it decided. The reconcile that removed runner `x` read its set after its cache
//! first held `x` and before it called RemoveRunner for `x`; the read log bounds which versions of the
//! set the cache held in that window. Removals a set being deleted, an Outdated set or a set applying a
//! new runner spec explain are left out. The gate oracle (`scale-down-only-on-patch-zero`) judges these;
//! the `idle-runner-scaled-down` probe counts those whose window held a non-zero patch ID.

use std::collections::BTreeMap;
use std::sync::Arc;

use arc_sim::apiserver::reads::{ReadEntry, ReadVia};
use arc_sim::apiserver::{AuditEntry, Committed};
use arc_sim::faults::ApiVerb;
use arc_sim::github::GitHubEvent;
use arc_sim::github::{EventKind, RemoveOutcome};
use arc_sim::json_at::At;
use arc_sim::record::Interest;
use arc_world::RunRecord;
use serde_json::Value;

use super::runner_states::{RunnerState, RunnerStates};
use super::runner_times::RunnerTimes;
use crate::view::{is_deleting, is_terminal, key_of, key_parts, str_at, uid_of};

/// What [`judged`] reads.
pub fn needs() -> Interest {
    Interest::of_resources::<AuditEntry>(&["ephemeralrunners", "ephemeralrunnersets"])
        .and_resources::<Committed>(&["ephemeralrunners", "ephemeralrunnersets"])
        .and_resources::<ReadEntry>(&["ephemeralrunners", "ephemeralrunnersets"])
        .and::<GitHubEvent>()
}

/// How many scale-downs the oracle judged in `run` (its coverage probe).
pub fn judged_count(run: &RunRecord) -> u32 {
    u32::try_from(judged(run).len()).unwrap_or(u32::MAX)
}

/// How many judged scale-downs came while the controller's cache could also hold its set at a
/// non-zero patch ID: the window in which the gate decides (the `idle-runner-scaled-down` probe).
pub fn with_nonzero_patch_held(run: &RunRecord) -> u32 {
    let scale_downs = judged(run);
    let contested = scale_downs.iter().filter(|s| s.patch_ids.iter().any(|p| *p != 0));
    u32::try_from(contested.count()).unwrap_or(u32::MAX)
}

/// One judged scale-down.
pub struct ScaleDown {
    /// Sim ms of the delete.
    pub ms: u64,
    /// The runner's `namespace/name`.
    pub runner: String,
    /// Its set's `namespace/name`.
    pub set: String,
    /// When the deciding reconcile could have read the set: from the first cache read of the runner to
    /// the RemoveRunner answer.
    pub window: (u64, u64),
    /// `spec.patchID` of each version of the set the cache may have held then.
    pub patch_ids: Vec<i64>,
}

/// The controller's removals that only the scaling path can explain, judged once per record (the gate
/// oracle and two probes read them).
pub fn judged(run: &RunRecord) -> Arc<Vec<ScaleDown>> {
    run.derived("", judge)
}

fn judge(run: &RunRecord) -> Vec<ScaleDown> {
    let sets = SetHistory::of(run);
    let states = RunnerStates::of(run);
    let runners = runner_versions(&states);
    let cache = CacheReads::of(run);
    let removals = removals(run);
    let deletes = run.audit().filter(|a| {
        a.resource == "ephemeralrunners"
            && a.verb == ApiVerb::Delete
            && crate::view::is_controller(&a.actor)
            && a.took_effect()
            && !a.status_subresource
    });
    let mut out = Vec::new();
    for a in deletes {
        let Some(versions) = runners.get(&(a.namespace.as_str(), a.name.as_str())) else { continue };
        let key = format!("{}/{}", a.namespace, a.name);
        let Some(victim) = idle_before(versions, a.served_ms) else { continue };
        let Some(set) = sets.key_by_uid.get(&victim.owner_uid) else { continue };
        let Some(removed_at) = removals.last_at_or_before(victim.runner_id, a.served_ms) else { continue };
        if recorded_at(versions, victim.runner_id).is_none_or(|at| at > removed_at) {
            continue;
        }
        let Some(from) = cache.first_read(&key) else { continue };
        let held: Vec<&Value> = cache
            .versions_held(set, (from, removed_at))
            .iter()
            .filter_map(|rv| sets.version(set, *rv))
            .collect();
        if held.is_empty() || held.iter().any(|v| other_path_allowed(&sets, v)) {
            continue;
        }
        let patch_ids = held.iter().map(|v| patch_id(v)).collect();
        out.push(ScaleDown {
            ms: a.served_ms,
            runner: key,
            set: set.clone(),
            window: (from, removed_at),
            patch_ids,
        });
    }
    out
}

/// Whether a set in this state removes idle runners by a path other than scaling: it is being
/// deleted, it is Outdated, or it has a runner spec to apply (a revision above the applied one, or,
/// for a controller without the revision step, an `integrity-hash` annotation that no longer stands
/// for its runner spec).
fn other_path_allowed(sets: &SetHistory<'_>, set: &Value) -> bool {
    let number = |ptr: &str| set.at(ptr).and_then(Value::as_i64).unwrap_or(0);
    is_deleting(set)
        || str_at(set, "/status/phase") == Some("Outdated")
        || number("/spec/actionableRevision") > number("/status/appliedActionableRevision")
        || integrity_hash_stale(sets, set)
}

/// Whether the set's `integrity-hash` annotation no longer stands for its runner spec, as a controller
/// without the revision step tells (it compares the annotation with its own hash of the spec): the
/// value was first written by someone other than the controller (a user forcing a refresh), or the
/// spec has changed since the controller first wrote it. The controller stamps the hash of the spec it
/// writes, so both are what a hash comparison would find. Read from the set's history and its writers,
/// not recomputed: the judge shares no code with the controller.
fn integrity_hash_stale(sets: &SetHistory<'_>, set: &Value) -> bool {
    let Some(hash) = str_at(set, INTEGRITY_HASH) else { return false };
    let key = key_of(set);
    let Some((rv, first)) = sets.first_with_hash(&key, uid_of(set), hash) else { return false };
    sets.written_by_someone_else(&key, rv) || first.at(RUNNER_SPEC) != set.at(RUNNER_SPEC)
}

/// The annotation the controller stamps a set's runner-spec hash into.
const INTEGRITY_HASH: &str = "/metadata/annotations/actions.github.com~1integrity-hash";
/// The set's runner spec.
const RUNNER_SPEC: &str = "/spec/ephemeralRunnerSpec";

fn patch_id(set: &Value) -> i64 {
    set.at("/spec/patchID").and_then(Value::as_i64).unwrap_or(0)
}

/// Per EphemeralRunner (namespace, name): each version, in order.
type RunnerVersions<'a> = BTreeMap<(&'a str, &'a str), Vec<&'a RunnerState>>;

fn runner_versions(states: &RunnerStates) -> RunnerVersions<'_> {
    let mut versions: RunnerVersions<'_> = BTreeMap::new();
    for state in states.iter() {
        let key = (state.change.key.namespace.as_str(), state.change.key.name.as_str());
        versions.entry(key).or_default().push(state);
    }
    versions
}

/// A runner as the store had it just before the controller deleted it.
struct Victim {
    owner_uid: String,
    runner_id: i64,
}

/// The runner before `ms`, if it was registered and had never had a job, finished or begun deleting.
fn idle_before(versions: &[&RunnerState], ms: u64) -> Option<Victim> {
    let mut last: Option<&RunnerState> = None;
    for v in versions.iter().take_while(|v| v.ms <= ms) {
        if v.deleting && v.ms == ms {
            break;
        }
        if v.deleting || v.job_id.is_some() || is_terminal(&v.phase) {
            return None;
        }
        last = Some(v);
    }
    let v = last?;
    let owner_uid = v.owner_uid.as_deref()?.to_string();
    (v.runner_id != 0).then_some(Victim { owner_uid, runner_id: v.runner_id })
}

/// When the store first held the runner with `runner_id` in its status. A scale-down takes the id it
/// removes from the runner it walks, so a removal before it is another path's: a registration
/// conflict's removal of the id a killed process registered, whose JIT secret then still gave the
/// runner that id (seed 28,200,626: the runner, refused, was then replaced, not scaled down).
fn recorded_at(versions: &[&RunnerState], id: i64) -> Option<u64> {
    versions.iter().find(|v| v.runner_id == id).map(|v| v.ms)
}

/// The RemoveRunner calls answered 204 (removed, or unknown), by runner id, in the order GitHub
/// answered them. A busy answer does not count: the removing path keeps the runner, and a later delete
/// of it comes from elsewhere (its pod succeeded, say).
fn removals(run: &RunRecord) -> RunnerTimes {
    RunnerTimes::of(run.github_events().filter_map(|e| match e.kind {
        EventKind::RemoveRunner { runner_id, outcome: RemoveOutcome::Removed | RemoveOutcome::Unknown } => {
            Some((e.at_ms, runner_id))
        }
        _ => None,
    }))
}

/// Every committed version of every EphemeralRunnerSet.
struct SetHistory<'a> {
    /// `namespace/name` by uid.
    key_by_uid: BTreeMap<String, String>,
    /// Per `namespace/name`: resourceVersion → object.
    versions: BTreeMap<String, BTreeMap<u64, &'a Value>>,
    /// Per (`namespace/name`, resourceVersion) written with a known answer: whether the controller
    /// wrote it.
    by_controller: BTreeMap<(String, u64), bool>,
}

impl<'a> SetHistory<'a> {
    fn of(run: &'a RunRecord) -> Self {
        let mut history = SetHistory {
            key_by_uid: BTreeMap::new(),
            versions: BTreeMap::new(),
            by_controller: BTreeMap::new(),
        };
        // A set has many versions: its key and uid are copied only the first time they are seen.
        let mut key = String::new();
        for (_, change) in run.changes_of("ephemeralrunnersets") {
            let (namespace, name) = key_parts(&change.object);
            key.clear();
            key.extend([namespace, "/", name]);
            let uid = uid_of(&change.object);
            if history.key_by_uid.get(uid) != Some(&key) {
                history.key_by_uid.insert(uid.to_string(), key.clone());
            }
            match history.versions.get_mut(key.as_str()) {
                Some(versions) => drop(versions.insert(change.rv, &*change.object)),
                None => {
                    drop(history.versions.insert(key.clone(), BTreeMap::from([(change.rv, &*change.object)])))
                }
            }
        }
        for a in run.audit().filter(|a| a.resource == "ephemeralrunnersets" && a.took_effect()) {
            let Ok(rv) = a.resource_version.parse::<u64>() else { continue };
            let key = (format!("{}/{}", a.namespace, a.name), rv);
            history.by_controller.insert(key, crate::view::is_controller(&a.actor));
        }
        history
    }

    /// `set` at resourceVersion `rv`.
    fn version(&self, set: &str, rv: u64) -> Option<&'a Value> {
        self.versions.get(set)?.get(&rv).copied()
    }

    /// The first version of `set` (the object `uid`) whose integrity-hash annotation is `hash`, with
    /// its resourceVersion.
    fn first_with_hash(&self, set: &str, uid: &str, hash: &str) -> Option<(u64, &'a Value)> {
        let mut versions = self.versions.get(set)?.iter().map(|(rv, v)| (*rv, *v));
        versions.find(|(_, v)| uid_of(v) == uid && str_at(v, INTEGRITY_HASH) == Some(hash))
    }

    /// Whether version `rv` of `set` is known to have been written by someone other than the
    /// controller (a write whose answer was lost is not known).
    fn written_by_someone_else(&self, set: &str, rv: u64) -> bool {
        self.by_controller.get(&(set.to_string(), rv)) == Some(&false)
    }
}

/// What the controller's informers were handed of EphemeralRunners and their sets: watch events and
/// list items (its gets bypass the cache, so they do not count), per object key, in order.
struct CacheReads<'a> {
    runners: BTreeMap<&'a str, Vec<&'a ReadEntry>>,
    sets: BTreeMap<&'a str, Vec<&'a ReadEntry>>,
}

impl<'a> CacheReads<'a> {
    fn of(run: &'a RunRecord) -> Self {
        let (mut runners, mut sets) = (BTreeMap::new(), BTreeMap::new());
        for read in run.reads().filter(|r| crate::view::is_controller(&r.actor) && r.via != ReadVia::Get) {
            let by_key: &mut BTreeMap<&'a str, Vec<&'a ReadEntry>> = match read.resource.as_str() {
                "ephemeralrunners" => &mut runners,
                "ephemeralrunnersets" => &mut sets,
                _ => continue,
            };
            by_key.entry(read.key.as_str()).or_default().push(read);
        }
        CacheReads { runners, sets }
    }

    /// The sim ms of the first read of the EphemeralRunner `key`.
    fn first_read(&self, key: &str) -> Option<u64> {
        self.runners.get(key)?.first().map(|r| r.ms)
    }

    /// The versions of `set` the cache may have held at some instant in `window`: the last one read
    /// before it and every one read within it (a version read at an instant may not be applied yet
    /// when a reconcile reads the cache at that same instant).
    fn versions_held(&self, set: &str, (from, to): (u64, u64)) -> Vec<u64> {
        // The reads of a set are in record order, so by ms: the window is found by bisection.
        let reads = self.sets.get(set).map(Vec::as_slice).unwrap_or(&[]);
        let start = reads.partition_point(|r| r.ms < from);
        let end = start + reads[start..].partition_point(|r| r.ms <= to);
        let before = start.checked_sub(1).map(|i| reads[i].rv);
        before.into_iter().chain(reads[start..end].iter().map(|r| r.rv)).collect()
    }
}
