//! One exit-status scheme across the subcommands (0 passed, 1 failures found, 2 usage error, 3 could
//! not run), stated in every `--help` and kept: each subcommand is tried with what it cannot use, and
//! the verbs that judge with a pass and a failure.

use std::process::{Command, Output};

use arcsim::commands::exit::SCHEME;

const SUBCOMMANDS: [&str; 10] =
    ["sweep", "merge", "run", "explore", "shrink", "list", "measure", "apiserver", "stage", "serve"];

fn arcsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arcsim")).args(args).output().expect("arcsim runs")
}

fn status(args: &[&str]) -> (Option<i32>, String) {
    let output = arcsim(args);
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn every_help_states_the_scheme() {
    let top = arcsim(&["--help"]);
    assert!(top.status.success());
    let flat = |text: &[u8]| String::from_utf8_lossy(text).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat(&top.stdout).contains(SCHEME), "{}", flat(&top.stdout));
    for command in SUBCOMMANDS {
        let help = arcsim(&[command, "--help"]);
        assert!(help.status.success(), "{command} --help");
        assert!(flat(&help.stdout).contains("0 passed; 1 failures found"), "{command} --help");
    }
}

#[test]
fn every_subcommand_exits_2_on_an_argument_it_does_not_take() {
    for command in SUBCOMMANDS {
        let (code, stderr) = status(&[command, "--no-such-flag"]);
        assert_eq!(code, Some(2), "{command}: {stderr}");
        assert!(stderr.starts_with("error: "), "{command}: {stderr}");
    }
}

#[test]
fn input_that_cannot_be_used_exits_2_in_one_format() {
    let missing = std::env::temp_dir().join("arcsim-no-such-file.json");
    let missing = missing.to_str().unwrap();
    let cases: [&[&str]; 8] = [
        &["run", "--capsule", missing],
        &["run", "--scenario", "standard", "--seed", "1", "--assume", "nope=x"],
        &["run", "--scenario", "standard"],
        &["shrink", "--scenario", "standard"],
        &["merge", missing],
        &["measure", "kills", "--from", "1", "--count", "0"],
        &["sweep", "--scenario", "standard", "--seeds", "1", "--shard", "5/2"],
        &["serve", "--scenario", "standard", "--seed", "1", "--until", "1s", "--listen", "0.0.0.0:0"],
    ];
    for args in cases {
        let (code, stderr) = status(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    }
}

#[test]
fn a_run_exits_0_when_it_passes_and_1_when_it_finds_a_failure() {
    assert_eq!(status(&["run", "--scenario", "watch-lag-duplicate-create", "--seed", "1"]).0, Some(0));
    let (code, stderr) =
        status(&["run", "--scenario", "watch-lag-duplicate-create", "--variant", "bug-4201", "--seed", "1"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.starts_with("error: ") && stderr.contains("violation(s); replay with:"), "{stderr}");
    assert_eq!(status(&["list", "kill-table"]).0, Some(0));
}
