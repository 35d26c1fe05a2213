//! The sweep's deployment (`deploy/sweep/`): every Kubernetes manifest is an object of a known kind
//! with no field that kind lacks (each document is decoded into its k8s-openapi type, encoded again,
//! and must equal the document: k8s-openapi types keep no unknown field, so a misspelt or misplaced
//! field makes the two differ); the Indexed Job, the merge Job and the GitHub Actions workflow agree
//! on the shard count and the files; and their `arcsim` command lines run, as written, on one seed.

use std::path::{Path, PathBuf};
use std::process::Command;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Namespace, PersistentVolumeClaim};
use serde_json::Value;

#[path = "../../../controller/tests/manifests/typed_yaml.rs"]
mod typed_yaml;
use typed_yaml::{differences, documents, round_trip};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/sweep")
}

/// The document round-tripped through the k8s-openapi type its apiVersion and kind name.
fn typed_round_trip(document: &Value) -> Result<Value, String> {
    let api_version = document["apiVersion"].as_str().unwrap_or_default();
    let kind = document["kind"].as_str().unwrap_or_default();
    match (api_version, kind) {
        ("v1", "Namespace") => round_trip::<Namespace>(document),
        ("v1", "PersistentVolumeClaim") => round_trip::<PersistentVolumeClaim>(document),
        ("batch/v1", "Job") => round_trip::<Job>(document),
        _ => Err(format!("unknown apiVersion/kind {api_version}/{kind}")),
    }
}

/// Every Kubernetes manifest: the directory's `.yaml` files (the workflow is `.yml`).
fn manifests() -> Vec<(String, Value)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir())
        .expect("deploy/sweep")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
        .iter()
        .flat_map(|file| {
            documents(file)
                .into_iter()
                .enumerate()
                .map(move |(i, d)| (format!("{} #{}", file.display(), i + 1), d))
        })
        .collect()
}

fn object<'a>(kind: &str, name: &str, all: &'a [(String, Value)]) -> &'a Value {
    let found = all.iter().find(|(_, d)| d["kind"] == kind && d["metadata"]["name"] == name);
    &found.unwrap_or_else(|| panic!("no {kind}/{name} in deploy/sweep")).1
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().expect("a list").iter().map(|v| v.as_str().expect("a string").to_string()).collect()
}

#[test]
fn every_sweep_manifest_decodes_into_its_kubernetes_type_with_no_unknown_field() {
    let all = manifests();
    for (name, document) in &all {
        let again = typed_round_trip(document).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut found = Vec::new();
        differences("$", document, &again, &mut found);
        assert!(found.is_empty(), "{name}:\n{}", found.join("\n"));
        assert!(
            document["kind"] == "Namespace" || document["metadata"]["namespace"] == "arcsim-sweep",
            "{name}"
        );
    }
    object("Namespace", "arcsim-sweep", &all);
    object("PersistentVolumeClaim", "arcsim-results", &all);
    let mut misspelt = object("Job", "arcsim-sweep", &all).clone();
    misspelt["spec"]["completionMod"] = "Indexed".into();
    let mut found = Vec::new();
    differences("$", &misspelt, &typed_round_trip(&misspelt).unwrap(), &mut found);
    assert_eq!(found, ["$.spec.completionMod: unknown field (dropped by the typed decode)"]);
}

/// The sweep Job's shard count, and the args of its container and of the merge Job's.
fn jobs() -> (usize, Vec<String>, Vec<String>) {
    let all = manifests();
    let sweep = &object("Job", "arcsim-sweep", &all)["spec"];
    assert_eq!(sweep["completionMode"], "Indexed");
    let shards = sweep["completions"].as_u64().expect("completions") as usize;
    assert_eq!(sweep["parallelism"].as_u64(), Some(shards as u64), "every shard at once");
    let container = &sweep["template"]["spec"]["containers"][0];
    let index = &container["env"][0];
    assert_eq!(index["name"], "JOB_COMPLETION_INDEX");
    assert_eq!(
        index["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    );
    let merge = &object("Job", "arcsim-merge", &all)["spec"]["template"]["spec"]["containers"][0];
    for c in [container, merge] {
        assert_eq!(c["volumeMounts"][0]["mountPath"], "/results", "{c}");
    }
    (shards, strings(&container["args"]), strings(&merge["args"]))
}

/// `args` with Kubernetes' `$(VAR)` expanded for completion index `index` and `/results` moved to `results`.
fn expand(args: &[String], index: usize, results: &Path) -> Vec<String> {
    let results = results.to_str().expect("a UTF-8 path");
    args.iter()
        .map(|a| a.replace("$(JOB_COMPLETION_INDEX)", &index.to_string()).replace("/results", results))
        .map(|a| if a.starts_with("--count=") { "--count=2".to_string() } else { a })
        .collect()
}

/// One seed of one scenario, so that the manifests' command lines run in a test's time.
const SMALL: [&str; 4] = ["--scenario", "watch-lag-duplicate-create", "--variant", "fixed"];

#[test]
fn the_indexed_job_and_the_merge_job_run_as_written_and_agree_on_the_shards() {
    let (shards, sweep, merge) = jobs();
    assert!(sweep.contains(&format!("--shard=$(JOB_COMPLETION_INDEX)/{shards}")), "{sweep:?}");
    assert!(sweep.contains(&"--json=/results/shard-$(JOB_COMPLETION_INDEX).json".to_string()), "{sweep:?}");
    let files: Vec<String> = (0..shards).map(|i| format!("/results/shard-{i}.json")).collect();
    assert_eq!(merge[1..=shards], files[..], "the merge reads every shard's file");
    let results = std::env::temp_dir().join(format!("arcsim-indexed-job-{}", std::process::id()));
    std::fs::create_dir_all(&results).expect("a scratch directory");
    for index in 0..shards {
        let out = Command::new(env!("CARGO_BIN_EXE_arcsim"))
            .args(expand(&sweep, index, &results))
            .args(SMALL)
            .output()
            .expect("arcsim runs");
        assert!(out.status.success(), "index {index}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let out = Command::new(env!("CARGO_BIN_EXE_arcsim")).args(expand(&merge, 0, &results)).output().unwrap();
    assert!(out.status.success(), "merge: {}", String::from_utf8_lossy(&out.stderr));
    assert!(results.join("merged.json").exists());
    let _ = std::fs::remove_dir_all(&results);
}

#[test]
fn the_workflow_runs_the_same_shards_as_a_matrix_and_merges_them() {
    let workflow = &documents(&dir().join("github-workflow.yml"))[0];
    let shards = workflow["env"]["SHARDS"].as_u64().expect("SHARDS") as usize;
    assert_eq!(shards, jobs().0, "the workflow and the Indexed Job split the sweep alike");
    let matrix: Vec<u64> = workflow["jobs"]["shard"]["strategy"]["matrix"]["shard"]
        .as_array()
        .expect("a shard list")
        .iter()
        .map(|v| v.as_u64().expect("a number"))
        .collect();
    assert_eq!(matrix, (0..shards as u64).collect::<Vec<_>>());
    assert_eq!(workflow["jobs"]["merge"]["needs"], "shard");
    let run = |job: &str| -> String {
        let steps = workflow["jobs"][job]["steps"].as_array().expect("steps");
        let found = steps.iter().filter_map(|s| s["run"].as_str()).find(|r| r.contains("./arcsim "));
        found.unwrap_or_else(|| panic!("no arcsim step in {job}")).trim().to_string()
    };
    let work = std::env::temp_dir().join(format!("arcsim-workflow-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("a scratch directory");
    let arcsim = work.join("arcsim");
    let _ = std::fs::remove_file(&arcsim);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_arcsim"), &arcsim).expect("a link to arcsim");
    let sh = |line: &str| {
        let out = Command::new("sh").arg("-c").arg(line).current_dir(&work).output().expect("sh runs");
        assert!(out.status.success(), "{line}: {}", String::from_utf8_lossy(&out.stderr));
    };
    for index in 0..shards {
        let line = run("shard")
            .replace("${{ needs.build.outputs.from }}", "1")
            .replace("${{ needs.build.outputs.count }}", "2")
            .replace("${{ matrix.shard }}", &index.to_string())
            .replace("${{ env.SHARDS }}", &shards.to_string());
        assert!(!line.contains("${{"), "{line}");
        sh(&format!("{line} {}", SMALL.join(" ")));
    }
    sh(&run("merge"));
    assert!(work.join("merged.json").exists());
    let _ = std::fs::remove_dir_all(&work);
}

/// The slow test tier's command: README's, the Job's, the test image's default and the workflow's
/// agree (the workflow's and the Job's add `--locked`, the Job's `--offline` too).
#[test]
fn the_slow_tier_is_the_same_command_in_readme_the_job_the_image_and_the_workflow() {
    let readme = std::fs::read_to_string(dir().join("../../README.md")).expect("README");
    assert!(readme.contains("cargo test --workspace -- --ignored slow::"), "README names the slow tier");
    let all = manifests();
    let job = &object("Job", "arcsim-slow-tests", &all)["spec"]["template"]["spec"]["containers"][0];
    let command = strings(&job["command"]).join(" ");
    let expected = "cargo test --workspace --locked --offline -- --ignored slow::";
    assert_eq!(command, expected);
    let dockerfile = std::fs::read_to_string(dir().join("Dockerfile")).expect("Dockerfile");
    let cmd = r#"CMD ["cargo", "test", "--workspace", "--locked", "--offline", "--", "--ignored", "slow::"]"#;
    assert!(dockerfile.contains(cmd), "the test image runs the tier by default");
    let workflow = &documents(&dir().join("github-workflow.yml"))[0];
    let steps = workflow["jobs"]["slow-tests"]["steps"].as_array().expect("steps");
    let runs: Vec<&str> = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    assert!(runs.contains(&"cargo test --workspace --locked -- --ignored slow::"), "{runs:?}");
}
