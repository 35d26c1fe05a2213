//! `arcsim measure kills|reports --write`: a measurement lands in the rates file the kill table (or the
//! field-report table) reads, only for the rows it measured, and a file that does not read is a usage
//! error.

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

const SHIPPED_REPORTS: &str = include_str!("../../../scenarios/report-rates.tsv");

/// `arcsim measure reports --write`: one line per (report, profile, symptom) it ran, the other reports'
/// lines kept; a world that is no field report's is refused.
#[test]
fn a_report_measurement_is_written_for_every_profile_of_the_report_it_ran() {
    let dir = std::env::temp_dir().join(format!("arcsim-report-rates-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("report-rates.tsv");
    std::fs::write(&file, SHIPPED_REPORTS).unwrap();
    let args = ["measure", "reports", "--scenario", "report-4285", "--from", "5000000", "--count", "1"];
    let out = arcsim(&[&args[..], &["--write", file.to_str().unwrap()]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("wrote 8 measured lines"), "two symptoms under four profiles: {stdout}");
    let table = kill_rates::Table::Reports;
    let before = kill_rates::parse_table(table, SHIPPED_REPORTS).unwrap();
    let after = kill_rates::parse_table(table, &std::fs::read_to_string(&file).unwrap()).unwrap();
    let measured = RateKey::of("report-4285", "arc-0.13.1", "no-listener-exit-on-session-conflict");
    assert_eq!((after[&measured].seeds, after[&measured].from), (1, 5_000_000));
    let others = |rates: &kill_rates::Rates| {
        rates
            .iter()
            .filter(|(k, _)| k.scenario != "report-4285")
            .map(|(k, r)| (k.clone(), *r))
            .collect::<Vec<_>>()
    };
    assert_eq!(others(&after), others(&before), "the other reports keep their rates");
    let refused = arcsim(&["measure", "reports", "--scenario", "standard", "--from", "1", "--count", "1"]);
    assert_eq!(refused.status.code(), Some(2), "{}", String::from_utf8_lossy(&refused.stderr));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not a field report"));
    std::fs::remove_dir_all(&dir).ok();
}
