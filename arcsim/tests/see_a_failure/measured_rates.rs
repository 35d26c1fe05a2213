//! `arcsim measure kills --write`: a measurement lands in the rates file the kill table reads, only
//! for the rows it measured, and a file that does not read is a usage error.

use std::process::Command;

use arc_scenarios::kill_rates::{self, RateKey};

const SHIPPED: &str = include_str!("../../../scenarios/kill-rates.tsv");

fn arcsim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_arcsim")).args(args).output().expect("arcsim runs")
}

#[test]
fn a_measurement_is_written_into_the_rates_file_for_the_rows_it_measured() {
    let dir = std::env::temp_dir().join(format!("arcsim-rates-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("kill-rates.tsv");
    std::fs::write(&file, SHIPPED).unwrap();
    let args = ["measure", "kills", "--scenario", "standard", "--variant", "bug-pod-owner-not-controller"];
    let out = arcsim(
        &[&args[..], &["--from", "5000000", "--count", "2", "--write", file.to_str().unwrap()]].concat(),
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("wrote 2 measured rows"));
    let before = kill_rates::parse(SHIPPED).unwrap();
    let after = kill_rates::parse(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let measured = RateKey::of("standard", "bug-pod-owner-not-controller", "pod-owned-by-its-runner");
    assert_eq!((after[&measured].seeds, after[&measured].from), (2, 5_000_000));
    let others = |rates: &kill_rates::Rates| {
        rates
            .iter()
            .filter(|(k, _)| k.variant != "bug-pod-owner-not-controller")
            .map(|(k, r)| (k.clone(), *r))
            .collect::<Vec<_>>()
    };
    assert_eq!(others(&after), others(&before), "the other rows keep their rates");
    std::fs::write(&file, "not a rates file\n").unwrap();
    let refused = arcsim(
        &[&args[..], &["--from", "5000000", "--count", "1", "--write", file.to_str().unwrap()]].concat(),
    );
    assert_eq!(refused.status.code(), Some(2), "{}", String::from_utf8_lossy(&refused.stderr));
    std::fs::remove_dir_all(&dir).ok();
}
