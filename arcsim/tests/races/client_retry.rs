//! The world's controller reaches the API server through its binary's client layers
//! (`arc_controller::runtime::kube_client`): a 429 that carries `Retry-After` is sent again after that
//! wait, as client-go sends it, and never reaches a reconcile. Without the layers in the world's seam
//! the throttled creates come back as reconcile errors and this test fails.

use arc_scenarios::scenarios;
use arc_scenarios::variant::Variant;
use arc_sim::apiserver::AuditEntry;
use arc_sim::faults::{ApiFault, ApiFaultAction, ApiVerb};
use arc_sim::record::Interest;
use arc_sim::{Seed, TraceMode};
use arcsim::runner::{headline_counters, run_world};

#[test]
fn a_throttled_pod_create_is_sent_again_after_its_retry_after_and_no_reconcile_sees_it() {
    let mut plan = scenarios::find("standard").expect("a scenario").world(Seed(1), Variant::Fixed);
    plan.config.faults.api.push(ApiFault {
        verbs: vec![ApiVerb::Create],
        resources: vec!["pods".into()],
        probability: 0.5,
        window: None,
        action: ApiFaultAction::Throttle { retry_after_seconds: 2 },
    });
    let record = run_world(plan, TraceMode::HashOnly, Interest::everything()).expect("the world runs");
    let creates: Vec<&AuditEntry> = record
        .events
        .iter()
        .filter_map(|e| e.get::<AuditEntry>())
        .filter(|a| a.actor == "controller" && a.verb == ApiVerb::Create && a.resource == "pods")
        .collect();
    let throttled: Vec<&&AuditEntry> = creates.iter().filter(|a| a.code == 429).collect();
    assert!(throttled.len() >= 5, "the rule throttled creates: {}", throttled.len());
    for refused in &throttled {
        let again = creates.iter().find(|a| a.body_hash == refused.body_hash && a.served_ms > refused.ms);
        let waited = again.map(|a| a.served_ms - refused.ms);
        assert!(
            waited.is_some_and(|w| (2_000..2_010).contains(&w)),
            "the create refused at {} ms was sent again 2 s later: {waited:?}",
            refused.ms
        );
    }
    let counters = headline_counters(&record);
    let seen = counters.iter().filter(|(k, v)| k.contains("TooManyRequests") && **v > 0).count();
    assert_eq!(seen, 0, "no reconcile saw a 429: {counters:?}");
}

/// Finding 05 under ARC's own client limit (findings/05): kubectl-delete-runners seed 11 under
/// `arc-0.13.1` passes with the world's default, ARC's 20/30 limit, the controller reaching the
/// deletion after its cache has the runner's id, and leaks a registration with the limit off
/// (`arcsim run --unlimited-clients`).
#[test]
fn finding_05s_seed_leaks_without_the_client_limit_and_not_with_it() {
    use arc_scenarios::client_limits::WithoutClientLimits;
    use arc_scenarios::variant::Build;
    use arcsim::runner::run_build;

    let scenario = scenarios::find("kubectl-delete-runners").expect("a scenario");
    let build = Build::new(arc_controller::Profile::Arc0131, Variant::Fixed);
    let (limited, _) = run_build(scenario, build, Seed(11), TraceMode::HashOnly).expect("runs");
    assert!(limited.passed(), "{:?}", limited.violations);
    let unlimited = WithoutClientLimits { inner: scenario };
    let (plain, _) = run_build(&unlimited, build, Seed(11), TraceMode::HashOnly).expect("runs");
    assert!(plain.violations.iter().any(|v| v.oracle == "no-orphan-registration"), "{:?}", plain.violations);
}
