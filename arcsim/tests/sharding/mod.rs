//! A sharded sweep is one sweep: `arcsim sweep --shard I/N` run as three separate processes and put
//! back together by `arcsim merge` prints the same table, writes the same JSON (apart from wall time)
//! and exits with the same status as the unsharded sweep of the same range. The range holds bug cells
//! that stop at their first seed, so the shards run seeds past the unsharded cut-off and the merge
//! must cut them off again. Plus the errors: a bad `--shard`, a missing shard, a file given twice.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::without_wall_time;

/// Seeds 1..=4 of the watch-lag scenario: the fixed controller on every seed, two bug variants the
/// kill table names there until their rows are met (at the first seed).
const RANGE: &[&str] = &[
    "--scenario",
    "watch-lag-duplicate-create",
    "--variant",
    "fixed,bug-4201,bug-4580-finalizer",
    "--from",
    "1",
    "--count",
    "4",
    "--jobs",
    "1",
];

fn arcsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arcsim")).args(args).output().expect("arcsim runs")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("arcsim-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

fn json(path: &Path) -> serde_json::Value {
    let text = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    without_wall_time(serde_json::from_slice(&text).expect("JSON"))
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

#[test]
fn three_shards_merged_give_the_unsharded_sweep() {
    let dir = scratch("shards");
    let whole = dir.join("whole.json");
    let unsharded = arcsim(&[&["sweep", "--json", path(&whole)], RANGE].concat());
    let shards: Vec<PathBuf> = (0..3).map(|i| dir.join(format!("shard-{i}.json"))).collect();
    for (i, file) in shards.iter().enumerate() {
        let shard = format!("{i}/3");
        let out = arcsim(&[&["sweep", "--shard", &shard, "--json", path(file)], RANGE].concat());
        assert!(out.status.success(), "shard {shard}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let merged_file = dir.join("merged.json");
    // Out of order on purpose: merge sorts the shards.
    let merged = arcsim(&[
        "merge",
        path(&shards[2]),
        path(&shards[0]),
        path(&shards[1]),
        "--json",
        path(&merged_file),
    ]);
    assert_eq!(json(&merged_file), json(&whole));
    assert_eq!(String::from_utf8_lossy(&merged.stdout), String::from_utf8_lossy(&unsharded.stdout));
    assert_eq!(merged.status.code(), unsharded.status.code(), "{}", String::from_utf8_lossy(&merged.stderr));
    let cells = json(&whole)["cells"].as_array().unwrap().clone();
    let stopped = cells.iter().filter(|c| c["variant"] != "Fixed" && c["runs"] == 1).count();
    assert!(stopped > 0, "some bug cell stops at its first seed: {cells:?}");
    for file in &shards {
        assert_eq!(
            json(file)["cells"].as_array().unwrap().len(),
            cells.len(),
            "every shard holds every cell"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_shards_and_incomplete_merges_are_clear_errors() {
    for (shard, says) in [("3/2", "below 2"), ("x", "expected I/N"), ("0/0", "at least 1")] {
        let out = arcsim(&["sweep", "--shard", shard, "--json", "/dev/null", "--seeds", "1"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(says), "--shard {shard}: {stderr}");
    }
    let dir = scratch("short-merge");
    let file = |i: u32| dir.join(format!("shard-{i}.json"));
    for i in 0..2 {
        let shard = format!("{i}/2");
        let args =
            ["sweep", "--scenario", "standard", "--variant", "fixed", "--seeds", "1", "--shard", &shard];
        let out = arcsim(&[&args[..], &["--json", path(&file(i))]].concat());
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    for (files, says) in [
        (vec![file(0)], "give each of the 2 shards once"),
        (vec![file(0), file(0)], "give each of the 2 shards once"),
        (vec![dir.join("none.json")], "cannot read"),
    ] {
        let args: Vec<&str> = files.iter().map(|f| path(f)).collect();
        let out = arcsim(&[&["merge"], &args[..]].concat());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(says), "{args:?}: {stderr}");
    }
    let merged = arcsim(&["merge", path(&file(1)), path(&file(0))]);
    assert!(merged.status.success(), "{}", String::from_utf8_lossy(&merged.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}
