//! The command line's manners: bad names are refused alike (an unknown scenario, variant or profile, in
//! every command that takes one, exits 2 before any run with clap's message naming the flag and listing
//! the valid values), a bad `--oracle` or output path is named before any run, and replay lines name
//! the program that was run.

use std::process::Command;

fn refused(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_arcsim")).args(args).output().expect("arcsim runs");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(output.stdout.is_empty(), "{args:?} ran nothing");
    stderr
}

#[test]
fn unknown_scenarios_variants_and_profiles_are_refused_alike() {
    for command in ["run", "sweep", "shrink", "explore", "serve", "measure"] {
        let seed: &[&str] = match command {
            "sweep" => &["--seeds", "1"],
            "measure" => &["kills", "--from", "1", "--count", "1"],
            _ => &["--seed", "1"],
        };
        let stderr = refused(&[&[command, "--scenario", "nope"], seed].concat());
        assert!(stderr.contains("invalid value 'nope' for '--scenario <SCENARIO>'"), "{command}: {stderr}");
        assert!(stderr.contains("valid: standard,"), "{command}: {stderr}");
    }
    let variant = refused(&["run", "--scenario", "standard", "--variant", "nope", "--seed", "1"]);
    assert!(
        variant.contains("invalid value 'nope' for '--variant <VARIANT>'")
            && variant.contains("valid: fixed,")
    );
    let profile = refused(&["run", "--scenario", "standard", "--profile", "nope", "--seed", "1"]);
    assert!(profile.contains("invalid value 'nope' for '--profile <PROFILE>'"), "{profile}");
}

/// What `arcsim ARGS` wrote to stdout and stderr, once it ended with status 2 (a usage error found
/// after parsing, in clap's format).
fn failed(args: &[&str]) -> (String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_arcsim")).args(args).output().expect("arcsim runs");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    (String::from_utf8_lossy(&output.stdout).into_owned(), stderr)
}

#[test]
fn shrink_names_the_oracle_flag_when_the_scenario_runs_no_such_oracle() {
    let (_, stderr) = failed(&["shrink", "--scenario", "standard", "--seed", "1", "--oracle", "nope"]);
    assert!(stderr.contains("--oracle: scenario standard runs no oracle \"nope\""), "{stderr}");
    assert!(!stderr.contains("capsule"), "no capsule was given: {stderr}");
}

#[test]
fn an_output_file_in_a_missing_directory_is_refused_before_the_run() {
    let (stdout, stderr) =
        failed(&["run", "--scenario", "standard", "--seed", "1", "--html", "/nonexistent-dir/page.html"]);
    assert!(
        stderr.contains("--html /nonexistent-dir/page.html: directory /nonexistent-dir does not exist"),
        "{stderr}"
    );
    assert!(stdout.is_empty(), "refused before the run: {stdout}");
}

#[test]
fn replay_lines_name_the_binary_when_cargo_did_not_run_it() {
    let program = env!("CARGO_BIN_EXE_arcsim");
    let output = Command::new(program)
        .env_remove("CARGO")
        .args(["run", "--scenario", "standard", "--seed", "1"])
        .output()
        .expect("arcsim runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    let expected = format!("replay: {program} run --scenario standard --variant fixed --seed 1");
    assert!(stdout.contains(&expected), "{stdout}");
    assert!(!stdout.contains("cargo run"), "{stdout}");
}

#[test]
fn shrink_says_what_it_is_doing_while_it_reruns() {
    let out = std::env::temp_dir().join("arcsim-progress-capsule.json");
    let output = Command::new(env!("CARGO_BIN_EXE_arcsim"))
        .args(["shrink", "--scenario", "watch-lag-duplicate-create", "--variant", "bug-4201", "--seed", "1"])
        .args(["--budget", "3", "--out", out.to_str().unwrap()])
        .output()
        .expect("arcsim runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("shrink: running the seed, then up to 3 reruns of it"), "{stderr}");
    assert!(stderr.contains("shrink: rerun 1 of at most 3"), "{stderr}");
    let _ = std::fs::remove_file(out);
}
