//! The field-report worlds (`scenarios::field_reports`): each shows its symptom under the upstream
//! profile the table of `docs/field-reports.md` names, and the profile that lacks the trigger's code
//! path stays quiet.

use arc_controller::Profile;
use arc_scenarios::scenario::Scenario;
use arc_scenarios::scenarios::field_reports::{
    FieldReport, REPORT_4000, REPORT_4027, REPORT_4285, REPORT_4370, REPORT_4571, REPORT_4585, REPORT_4603,
    REPORT_4653,
};
use arc_scenarios::variant::{Build, Variant};
use arc_scenarios::verdict::Verdict;
use arc_sim::{Seed, TraceMode};
use arcsim::runner::run_build;

use super::suite::kill_rows_met;

fn fixed(scenario: &dyn Scenario, profile: Profile, seed: u64) -> Verdict {
    let build = Build::new(profile, Variant::Fixed);
    run_build(scenario, build, Seed(seed), TraceMode::HashOnly).expect("the run completes").0
}

fn shows(verdict: &Verdict, oracle: &str) -> bool {
    verdict.violations.iter().any(|v| v.oracle == oracle)
}

#[test]
fn report_4000_an_idle_runner_is_removed_while_a_job_waits_in_every_profile() {
    for profile in [Profile::Arc0131, Profile::Arcsim] {
        let v = fixed(&REPORT_4000, profile, 1);
        assert!(shows(&v, "no-idle-runner-removed-while-a-job-waits"), "{}: {:#?}", v.label(), v.violations);
    }
}

#[test]
fn report_4285_the_scaleset_listener_exits_on_a_session_conflict_and_0_13_retries() {
    let v = fixed(&REPORT_4285, Profile::Arc0150, 1);
    assert!(shows(&v, "no-listener-exit-on-session-conflict"), "{}: {:#?}", v.label(), v.violations);
    let v = fixed(&REPORT_4285, Profile::Arc0131, 1);
    assert!(v.passed(), "{}: 0.13's listener retries the 409 in process: {:#?}", v.label(), v.violations);
}

#[test]
fn report_4585_a_runner_killed_mid_job_stays_deleting_past_ten_minutes() {
    let v = fixed(&REPORT_4585, Profile::Arcsim, 1);
    assert!(shows(&v, "deleting-runner-gone-within-10-min"), "{}: {:#?}", v.label(), v.violations);
}

#[test]
fn report_4027_jobs_acked_before_acquisition_wait_in_0_15_and_not_where_acquisition_comes_first() {
    let v = fixed(&REPORT_4027, Profile::Arc0150, 1);
    assert!(shows(&v, "job-started-within-10-min"), "{}: {:#?}", v.label(), v.violations);
    for profile in [Profile::Arc0131, Profile::Arcsim] {
        let v = fixed(&REPORT_4027, profile, 1);
        assert!(v.passed(), "{}: {profile} acquires before it acknowledges: {:#?}", v.label(), v.violations);
    }
}

/// `bug-ack-before-acquire`'s row (#4027 as the suite found it) is met on its own seed range.
#[test]
fn every_kill_row_of_report_4027_is_met() {
    kill_rows_met(&REPORT_4027);
}

/// #4653: where RemoveRunner refuses id 0, 0.13.1 (which asks it for a runner with no id) keeps a
/// runner that never registered deleting forever; the fixed controller does not ask, and lets it go.
#[test]
fn report_4653_a_runner_deleted_before_it_registers_deletes_forever_in_0_13_and_not_when_id_0_is_never_removed()
 {
    let v = fixed(&REPORT_4653, Profile::Arc0131, 1);
    assert!(shows(&v, "deleting-runner-gone-within-10-min"), "{}: {:#?}", v.label(), v.violations);
    for seed in [1, 2] {
        let v = fixed(&REPORT_4653, Profile::Arcsim, seed);
        assert!(v.passed(), "{}: {:#?}", v.label(), v.violations);
    }
}

/// `bug-4653-remove-zero`'s row is met on its own seed range.
#[test]
fn every_kill_row_of_report_4653_is_met() {
    kill_rows_met(&REPORT_4653);
}

#[test]
fn report_4603_a_runner_that_hangs_after_its_job_is_never_removed_in_any_profile() {
    for profile in [Profile::Arc0131, Profile::Arc0150, Profile::Arcsim] {
        let v = fixed(&REPORT_4603, profile, 1);
        assert!(shows(&v, "runner-gone-within-10-min-of-its-job"), "{}: {:#?}", v.label(), v.violations);
    }
}

/// The same world with no runner hanging: the symptoms stay quiet, so they see the hang, not the world.
static REPORT_4603_CONTROL: FieldReport = FieldReport {
    name: "report-4603-control",
    describe: "report-4603's world with no runner hanging",
    world: |seed, build| {
        let mut plan = REPORT_4603.world_for(seed, build);
        plan.config.kubelet.runner_hang_percent = 0;
        plan
    },
    symptoms: REPORT_4603.symptoms,
};

#[test]
fn report_4603_without_hung_runners_shows_nothing() {
    for seed in 1..=3 {
        let v = fixed(&REPORT_4603_CONTROL, Profile::Arcsim, seed);
        assert!(v.passed(), "{}: {:#?}", v.label(), v.violations);
    }
}

/// report-4370's world with the scale set left alone.
static REPORT_4370_CONTROL: FieldReport = FieldReport {
    name: "report-4370-control",
    describe: "report-4370's world with the scale set left alone",
    world: |seed, build| {
        let mut plan = REPORT_4370.world_for(seed, build);
        plan.config.disruptions.clear();
        plan
    },
    symptoms: REPORT_4370.symptoms,
};

/// The slow tier (`cargo test --workspace -- --ignored slow::`).
mod slow {
    use arc_sim::github::EventKind;
    use arc_sim::record::Interest;
    use arcsim::runner::run_build_keeping;

    use super::*;

    /// How many times GitHub registered a scale set in `profile`'s run of report-4571, and its verdict.
    fn registrations(profile: Profile, seed: u64) -> (usize, Verdict) {
        let build = Build::new(profile, Variant::Fixed);
        let keep = Some(Interest::everything());
        let (verdict, record) =
            run_build_keeping(&REPORT_4571, build, Seed(seed), TraceMode::HashOnly, keep).unwrap();
        let created =
            record.github_events().filter(|e| matches!(e.kind, EventKind::ScaleSetCreated { .. })).count();
        (created, verdict)
    }

    #[test]
    #[ignore = "slow tier: a 2-hour world"]
    fn report_4571_0_15_0_registers_the_vanished_scale_set_again_and_its_jobs_still_wait() {
        let (created, v) = registrations(Profile::Arc0150, 1);
        assert_eq!(created, 2, "#4571: the listener deleted by hand, the scale set is registered again");
        assert!(
            shows(&v, "job-started-within-10-min"),
            "{}: runners made for the dead id block the drain",
            v.label()
        );
        let (created, v) = registrations(Profile::Arc0131, 1);
        assert_eq!(created, 1, "0.13.1 trusts the recorded id");
        assert!(shows(&v, "job-started-within-10-min"), "{}", v.label());
    }

    #[test]
    #[ignore = "slow tier: a 2-hour world"]
    fn report_4370_jobs_wait_forever_once_the_scale_set_vanishes_and_not_before() {
        let v = fixed(&REPORT_4370, Profile::Arcsim, 1);
        assert!(shows(&v, "job-started-within-10-min"), "{}: {:#?}", v.label(), v.violations);
        let v = fixed(&REPORT_4370_CONTROL, Profile::Arcsim, 1);
        assert!(
            v.passed(),
            "{}: the same world with the scale set left alone: {:#?}",
            v.label(),
            v.violations
        );
    }
}
