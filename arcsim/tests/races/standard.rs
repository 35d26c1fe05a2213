//! `standard`: the quiet world (no faults, the default watch lag). Its kill rows are the plausible bugs
//! that need no race to show, such as a runner pod its runner does not control.

use arc_scenarios::scenarios::standard::Standard;

use super::suite::kill_rows_met;

/// Every kill row of this scenario within the CI budget (the kill table's rows, found there):
/// - `bug-pod-owner-not-controller`: every runner pod names its runner as owner only, so
///   `pod-owned-by-its-runner` fires on the first pod.
#[test]
fn every_kill_row_of_this_scenario_is_met() {
    kill_rows_met(&Standard);
}
