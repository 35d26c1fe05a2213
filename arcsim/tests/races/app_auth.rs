//! `standard-app-auth`: the scale-set world end to end on GitHub App credentials.

use arc_controller::runtime::metrics::GITHUB_CALLS_TOTAL;
use arc_scenarios::scenarios::app_auth::StandardAppAuth;
use arc_scenarios::variant::Variant;
use arc_sim::{Seed, TraceMode};
use arcsim::runner::run_one;

use super::suite::fixed_passes;

#[test]
fn the_fixed_controller_passes_on_github_app_credentials() {
    fixed_passes(&StandardAppAuth, 1..=2);
}

#[test]
fn controller_and_listener_buy_installation_tokens_and_buy_them_again_after_expiry() {
    let (verdict, record) =
        run_one(&StandardAppAuth, Variant::Fixed, Seed(1), TraceMode::HashOnly).expect("the run completes");
    assert!(verdict.passed(), "{}: {:#?}", verdict.label(), verdict.violations);
    let bought = |metrics: &std::collections::BTreeMap<_, i64>| -> i64 {
        metrics
            .iter()
            .filter(|(k, _): &(&arc_controller::runtime::metrics::MetricKey, &i64)| {
                k.name == GITHUB_CALLS_TOTAL
                    && k.label("operation") == Some("installation-token")
                    && k.label("outcome") == Some("ok")
            })
            .map(|(_, v)| *v)
            .sum()
    };
    let controller = bought(&record.metrics);
    let listeners = bought(&record.listener_metrics);
    assert!(controller >= 2, "the controller bought {controller} installation tokens");
    assert!(listeners >= 1, "the listeners bought {listeners} installation tokens");
    let failed: i64 = record
        .metrics
        .iter()
        .chain(&record.listener_metrics)
        .filter(|(k, _)| k.name == GITHUB_CALLS_TOTAL && k.label("outcome") != Some("ok"))
        .filter(|(k, _)| matches!(k.label("operation"), Some("installation-token" | "registration-token")))
        .map(|(_, v)| *v)
        .sum();
    assert_eq!(failed, 0, "no token call was refused");
}
