//! The mirror controller in a seeded arcsim world, the way a kube-rs controller author would test
//! theirs: the world is a [`ClusterBuilder`] (the fake API server learning the Mirror kind from
//! `crd.yaml`, watch lag per resource, a seeded fault plan), the controller starts through its own
//! `run` over a client the world hands it, a seeded user creates and edits Mirrors, and two oracles
//! written for this controller judge the record: no Mirror ever owns two ConfigMaps, and every Mirror
//! ends with one ConfigMap holding its data and a status that says so.
//!
//! The first version (`ChildNames::Generated`) duplicates a ConfigMap when its ConfigMap watch trails
//! its Mirror watch; the oracle catches it within a bound derived from its measured rate, the failing
//! seed replays byte for byte, and the fix passes the same seeds.

use std::collections::BTreeMap;
use std::time::Duration;

use arc_sim::apiserver::{ApiServerConfig, Committed, CrdSet, EventType, LagRange, WatchLag};
use arc_sim::faults::{ApiFault, ApiFaultAction, ApiVerb, FaultPlan};
use arc_sim::json_at::At;
use arc_sim::{Seed, TraceMode};
use arc_world::ClusterBuilder;
use arc_world::runtime::run_seeded;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use mirror_controller::crd::{Mirror, MirrorSpec};
use mirror_controller::{ChildNames, Config};
use rand::Rng as _;
use serde_json::{Value, json};

/// The namespace the user works in.
const NS: &str = "demo";
/// How many Mirrors the user creates.
const MIRRORS: usize = 6;
/// How long the world runs after the user's last edit.
const SETTLE: Duration = Duration::from_secs(60);

/// What one run found.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    trace_hash: u64,
    violations: Vec<String>,
}

/// Which world a run takes place in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum World {
    /// The race's world: a ConfigMap watch that can trail the Mirror watch by up to 1.5 s, and
    /// [`faults`].
    Lagging,
    /// The control world: every watch event delivered the moment it commits, no faults. The race
    /// window stays shut, so the first version must pass here: the oracle fires for the race, not
    /// for something else.
    Prompt,
}

/// The API server of `world`, serving the user's namespace.
fn apiserver(world: World) -> ApiServerConfig {
    let mut config = ApiServerConfig::default();
    config.namespaces.push(NS.into());
    config.watch_lag = match world {
        World::Lagging => WatchLag {
            default: LagRange::between(1, 300),
            per_resource: BTreeMap::from([("configmaps".to_string(), LagRange::between(1, 1500))]),
        },
        World::Prompt => WatchLag { default: LagRange::fixed(0), per_resource: BTreeMap::new() },
    };
    if world == World::Prompt {
        config.watch_cache_lag = WatchLag { default: LagRange::fixed(0), per_resource: BTreeMap::new() };
    }
    config
}

/// 2% of writes refused with a 500, and 2% of creates committed and then answered 500 (the client
/// cannot tell the two apart).
fn faults() -> FaultPlan {
    let fault = |verbs: Vec<ApiVerb>, action| ApiFault {
        verbs,
        resources: Vec::new(),
        probability: 0.02,
        window: None,
        action,
    };
    let refused = fault(vec![ApiVerb::Create, ApiVerb::Patch], ApiFaultAction::Error { code: 500 });
    let committed = fault(vec![ApiVerb::Create], ApiFaultAction::CommitThenError { code: 500 });
    FaultPlan { api: vec![refused, committed], ..FaultPlan::none() }
}

/// Runs the race's world of `seed` with the controller configured as `config`, and judges it.
fn run(seed: u64, config: Config) -> Outcome {
    run_in(World::Lagging, seed, config)
}

/// Runs `world` of `seed` with the controller configured as `config`, and judges it.
fn run_in(world: World, seed: u64, config: Config) -> Outcome {
    let seed = Seed(seed);
    run_seeded(seed, async move {
        let crds = CrdSet::from_manifests("crd.yaml", include_str!("../crd.yaml")).expect("the Mirror CRD");
        let faults = if world == World::Lagging { faults() } else { FaultPlan::none() };
        let cluster = ClusterBuilder::new(seed)
            .crds(&crds)
            .apiserver(apiserver(world))
            .faults(&faults)
            .trace(TraceMode::HashOnly)
            .build();
        let controller = cluster
            .start_controller("controller", move |client, _clock| mirror_controller::run(client, config));
        user(seed, cluster.client("user")).await;
        tokio::time::sleep(SETTLE).await;
        let mut violations = one_config_map_per_mirror(&cluster.record().events_of::<Committed>());
        violations.extend(mirrors_converged(cluster.client("judge")).await);
        controller.abort();
        Outcome { trace_hash: cluster.record().trace().hash(), violations }
    })
    .expect("a runtime")
}

/// The user: creates [`MIRRORS`] Mirrors and edits some, at seeded moments.
async fn user(seed: Seed, client: kube::Client) {
    let mut rng = seed.named_rng("example/user");
    let mirrors = Api::<Mirror>::namespaced(client, NS);
    for i in 0..MIRRORS {
        tokio::time::sleep(Duration::from_millis(rng.random_range(0..3000))).await;
        let spec = MirrorSpec { data: BTreeMap::from([("v".to_string(), "0".to_string())]) };
        let _ = mirrors.create(&PostParams::default(), &Mirror::new(&format!("m{i}"), spec)).await;
    }
    for edit in 1..=MIRRORS {
        tokio::time::sleep(Duration::from_millis(rng.random_range(0..3000))).await;
        let name = format!("m{}", rng.random_range(0..MIRRORS));
        let patch = Patch::Merge(json!({ "spec": { "data": { "v": edit.to_string() } } }));
        let _ = mirrors.patch(&name, &PatchParams::default(), &patch).await;
    }
}

/// Oracle `one-config-map-per-mirror`: at no moment does a Mirror own two ConfigMaps.
fn one_config_map_per_mirror(commits: &[(u64, Committed)]) -> Vec<String> {
    let mut live: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut violations = Vec::new();
    for (ms, commit) in commits.iter().filter(|(_, c)| c.resource == "configmaps") {
        let object: &Value = &commit.change.object;
        let Some(owner) = object.at("/metadata/ownerReferences/0/name").and_then(Value::as_str) else {
            continue;
        };
        let name = object.at("/metadata/name").and_then(Value::as_str).unwrap_or_default().to_string();
        let children = live.entry(owner.to_string()).or_default();
        match commit.change.kind {
            EventType::Added => children.push(name),
            EventType::Deleted => children.retain(|c| *c != name),
            EventType::Modified => {}
        }
        if children.len() > 1 {
            violations
                .push(format!("one-config-map-per-mirror: at {ms} ms mirror {owner} owns {children:?}"));
        }
    }
    violations
}

/// Oracle `mirrors-converged`: at the end every Mirror owns one ConfigMap with its data, and its
/// status names it at its generation.
async fn mirrors_converged(client: kube::Client) -> Vec<String> {
    let mirrors = Api::<Mirror>::namespaced(client.clone(), NS).list(&ListParams::default()).await;
    let maps = Api::<ConfigMap>::namespaced(client, NS).list(&ListParams::default()).await;
    let (Ok(mirrors), Ok(maps)) = (mirrors, maps) else {
        return vec!["mirrors-converged: cannot list".into()];
    };
    let mut violations = Vec::new();
    for mirror in &mirrors.items {
        let uid = mirror.metadata.uid.clone().unwrap_or_default();
        let owned: Vec<&ConfigMap> = maps
            .items
            .iter()
            .filter(|m| m.metadata.owner_references.iter().flatten().any(|o| o.uid == uid))
            .collect();
        let name = mirror.metadata.name.clone().unwrap_or_default();
        let status = mirror.status.clone().unwrap_or_default();
        let ok = owned.len() == 1
            && owned[0].data.clone().unwrap_or_default() == mirror.spec.data
            && status.config_map == owned[0].metadata.name
            && status.observed_generation == mirror.metadata.generation;
        if !ok {
            violations.push(format!(
                "mirrors-converged: mirror {name} ends with {} ConfigMaps, status {status:?}",
                owned.len()
            ));
        }
    }
    violations
}

fn fixed() -> Config {
    Config::default()
}

fn first_version() -> Config {
    Config { child_names: ChildNames::Generated, ..Config::default() }
}

/// Seeds no other test here uses for the kill rate (see the bound below).
const MEASURE_FROM: u64 = 1_000_000;

/// The seeds the fixed controller and the control world must pass.
const SEEDS: u64 = 20;

/// How many seeds the first version may take to fail: it failed 200 of 200 seeds from
/// [`MEASURE_FROM`] (`measure_the_first_versions_kill_rate`, 2026-12-05), a rate above 0.985 at 95%
/// confidence; at a rate of even 0.9, six seeds all pass with chance 1e-6.
const KILL_BOUND: u64 = 6;

#[test]
fn the_fixed_controller_keeps_one_config_map_per_mirror_on_every_seed() {
    for seed in 1..=SEEDS {
        let outcome = run(seed, fixed());
        assert!(outcome.violations.is_empty(), "seed {seed} (mirror, fixed): {:?}", outcome.violations);
    }
}

#[test]
fn the_first_version_duplicates_a_config_map_and_the_failing_seed_replays() {
    let failing = (1..=KILL_BOUND)
        .map(|seed| (seed, run(seed, first_version())))
        .find(|(_, o)| !o.violations.is_empty());
    let (seed, outcome) =
        failing.unwrap_or_else(|| panic!("the first version survived seeds 1..={KILL_BOUND}"));
    assert!(
        outcome.violations.iter().any(|v| v.starts_with("one-config-map-per-mirror")),
        "seed {seed}: {:?}",
        outcome.violations
    );
    assert_eq!(run(seed, first_version()), outcome, "seed {seed} (mirror, first version) replays");
    assert!(run(seed, fixed()).violations.is_empty(), "seed {seed}: the fix holds on the seed that failed");
}

#[test]
fn in_the_control_world_the_first_version_passes_too() {
    for seed in 1..=SEEDS {
        let outcome = run_in(World::Prompt, seed, first_version());
        assert!(
            outcome.violations.is_empty(),
            "seed {seed} (mirror, first version, control): {:?}",
            outcome.violations
        );
    }
}

#[test]
fn the_same_seed_gives_the_same_trace() {
    assert_eq!(run(7, fixed()), run(7, fixed()));
    assert_ne!(run(7, fixed()).trace_hash, run(8, fixed()).trace_hash, "the seed decides the world");
}

/// Not a check: measures how often the first version fails, on seeds no other test uses, to derive
/// [`KILL_BOUND`]. `cargo test -p mirror-controller --release --test race -- --ignored --nocapture`.
#[test]
#[ignore = "measurement"]
fn measure_the_first_versions_kill_rate() {
    let n = 200;
    let killed =
        (MEASURE_FROM..MEASURE_FROM + n).filter(|s| !run(*s, first_version()).violations.is_empty()).count();
    let fixed_failed =
        (MEASURE_FROM..MEASURE_FROM + n).filter(|s| !run(*s, fixed()).violations.is_empty()).count();
    println!(
        "first version failed {killed}/{n} seeds from {MEASURE_FROM}; the fix failed {fixed_failed}/{n}"
    );
    let control = (MEASURE_FROM..MEASURE_FROM + n)
        .filter(|s| !run_in(World::Prompt, *s, first_version()).violations.is_empty())
        .count();
    println!("in the control world the first version failed {control}/{n}");
}
