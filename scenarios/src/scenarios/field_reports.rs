//! Field reports as worlds: each is a world in which the trigger of an ARC issue users filed occurs,
//! judged only by the oracle that sees its symptom (`oracles::symptoms`). They are run on request
//! (`arcsim sweep --scenario report-NNNN --profile P`), not by a default sweep: upstream is expected to
//! fail them, and so may `arcsim` where it has no fix. The table in docs/field-reports.md holds the verdict
//! per profile.

use arc_sim::Seed;
use arc_sim::apiserver::LagRange;
use arc_sim::faults::{GitHubFault, GitHubFaultAction};
use arc_world::Disruption;
use rand::Rng;

use arc_sim::github::Assumed;

use super::assign_during_delete::AssignDuringDelete;
use super::kubectl_delete::KubectlDeleteRunners;
use super::objects::{CONTROLLER_NAMESPACE, RUNNER_NAMESPACE, RUNNER_SET};
use super::standard::scale_set_world;
use crate::scenario::{Scenario, WorldPlan};
use crate::variant::{Build, Variant};
use arc_judging::oracles::{Oracle, convergence, symptoms};

/// One field report's world and symptom.
pub struct FieldReport {
    /// The command-line name (`report-NNNN`).
    pub name: &'static str,
    /// The report and its trigger, one line.
    pub describe: &'static str,
    /// The world, for a build.
    pub world: fn(Seed, Build) -> WorldPlan,
    /// The oracles that see the symptom.
    pub symptoms: fn() -> Vec<&'static dyn Oracle>,
}

impl Scenario for FieldReport {
    fn name(&self) -> &'static str {
        self.name
    }

    fn describe(&self) -> &'static str {
        self.describe
    }

    fn world(&self, seed: Seed, variant: Variant) -> WorldPlan {
        (self.world)(seed, Build::arcsim(variant))
    }

    fn world_for(&self, seed: Seed, build: Build) -> WorldPlan {
        (self.world)(seed, build)
    }

    fn oracles(&self) -> Vec<&'static dyn Oracle> {
        (self.symptoms)()
    }
}

/// #4000: race 3's world (scale-down while short jobs arrive), judged by whether an idle runner is
/// removed while a job its scale set acquired still waits.
pub static REPORT_4000: FieldReport = FieldReport {
    name: "report-4000",
    describe: "#4000 idle runner removed before its job could be assigned (race 3's world)",
    world: |seed, build| AssignDuringDelete.world_for(seed, build),
    symptoms: || vec![&symptoms::NoIdleRunnerRemovedWhileAJobWaits],
};

/// GitHub's lost-runner timeout in the #4585 world: long enough that a runner killed mid-job keeps
/// answering JobStillRunning past #4585's 10 minutes (the fake's default is 5 minutes).
const LOST_RUNNER_TIMEOUT_MS: u64 = 1_800_000;

/// #4585: runner pods evicted mid-job (long jobs, so the pods evicted are busy); the controller
/// deletes each such runner and keeps asking RemoveRunner, which answers JobStillRunning until GitHub
/// gives the job up.
pub static REPORT_4585: FieldReport = FieldReport {
    name: "report-4585",
    describe: "#4585 runner pods evicted mid-job; RemoveRunner answers JobStillRunning for 30 min",
    world: runner_lost_mid_job,
    symptoms: || vec![&symptoms::DeletingRunnerGoneWithin],
};

fn runner_lost_mid_job(seed: Seed, build: Build) -> WorldPlan {
    let mut plan = scale_set_world(seed, build.variant, 0, 10);
    plan.config.switches = build.switches();
    plan.config.github.lost_runner_timeout_ms = LOST_RUNNER_TIMEOUT_MS;
    let workload = &mut plan.config.workload;
    workload.duration_ms_min = 120_000;
    workload.duration_ms_max = 300_000;
    workload.cancel_probability = 0.0;
    workload.horizon_ms = 300_000;
    let mut rng = seed.named_rng("scenario/report-4585");
    for _ in 0..3 {
        plan.config.disruptions.push(Disruption::EvictPod {
            at_ms: rng.random_range(60_000..300_000),
            namespace: RUNNER_NAMESPACE.to_string(),
            prefix: format!("{RUNNER_SET}-runner-"),
            reason: "Evicted".to_string(),
        });
    }
    plan
}

/// #4285 (and #4027): the listener process crashes twice while jobs arrive, leaving its message
/// session open at GitHub; its successor's CreateMessageSession answers 409 until GitHub expires the
/// session (2 minutes unpolled). Judged by whether a listener exits on that 409 (the crash loop of
/// #4285) and whether any job then waits more than 10 minutes (#4027).
pub static REPORT_4285: FieldReport = FieldReport {
    name: "report-4285",
    describe: "#4285/#4027 listener crashes mid-workload; its successor meets the open session (409)",
    world: listener_crashes,
    symptoms: || vec![&symptoms::NoListenerExitOnSessionConflict, &symptoms::JobStartedWithin],
};

fn listener_crashes(seed: Seed, build: Build) -> WorldPlan {
    let mut plan = scale_set_world(seed, build.variant, 0, 10);
    plan.config.switches = build.switches();
    // A crashed process cannot close its session: every DeleteMessageSession fails, so the session a
    // crashed listener held stays open until GitHub expires it.
    plan.config.faults.github.push(GitHubFault {
        operations: vec!["delete-session".to_string()],
        probability: 1.0,
        window: None,
        action: GitHubFaultAction::Error { code: 503 },
    });
    let mut rng = seed.named_rng("scenario/report-4285");
    for window in [(60_000, 200_000), (300_000, 500_000)] {
        plan.config.disruptions.push(Disruption::CrashPod {
            at_ms: rng.random_range(window.0..window.1),
            namespace: CONTROLLER_NAMESPACE.to_string(),
            prefix: format!("{RUNNER_SET}-"),
            exit_code: 1,
        });
    }
    plan
}

/// #4027 (jobs queued for hours after a listener restart), as the suite found it can happen: GitHub's
/// broker is degraded and answers 60% of AcquireJobs calls 503, so now and then a call fails past the
/// listener's four retries and the listener exits (ARC-MODEL §4.1: any error ends it; it closes its
/// session, and its successor starts at once). The `actions/scaleset` listener acknowledges a message
/// before it acquires its jobs, so those jobs are acknowledged, never acquired and never offered
/// again; the next listener's statistics count only assigned jobs (`fixes.acquire_before_ack`).
/// Judged by whether any job waits more than 10 minutes.
pub static REPORT_4027: FieldReport = FieldReport {
    name: "report-4027",
    describe: "#4027 AcquireJobs answers 503 60% of the time; a listener that exits after acking loses the jobs",
    world: acquire_jobs_degraded,
    symptoms: || vec![&symptoms::JobStartedWithin],
};

/// The share of AcquireJobs calls the degraded broker of [`REPORT_4027`] answers 503.
const ACQUIRE_FAILURE_SHARE: f64 = 0.6;

fn acquire_jobs_degraded(seed: Seed, build: Build) -> WorldPlan {
    let mut plan = scale_set_world(seed, build.variant, 0, 10);
    plan.config.switches = build.switches();
    plan.config.faults.github.push(GitHubFault {
        operations: vec!["acquire-jobs".to_string()],
        probability: ACQUIRE_FAILURE_SHARE,
        window: None,
        action: GitHubFaultAction::Error { code: 503 },
    });
    plan
}

/// #4603, #4136 and #4203 (runners stuck after their job ended): a share of the runner processes hang
/// once their job ends, as users saw (a job reported, a process that never exits). Judged by whether
/// the EphemeralRunner that ran a job is gone within 10 minutes of the job's end, and whether every
/// job still starts within 10 minutes while hung runners hold the scale set's slots.
pub static REPORT_4603: FieldReport = FieldReport {
    name: "report-4603",
    describe: "#4603/#4136/#4203 runner processes hang after their job; hung runners hold the scale set's slots",
    world: runners_hang_after_their_job,
    symptoms: || vec![&symptoms::RunnerGoneAfterItsJob, &symptoms::JobStartedWithin],
};

/// The share of runner processes that hang after their job in [`REPORT_4603`], in percent.
const HANG_PERCENT: u8 = 20;

fn runners_hang_after_their_job(seed: Seed, build: Build) -> WorldPlan {
    let mut plan = scale_set_world(seed, build.variant, 0, 10);
    plan.config.switches = build.switches();
    plan.config.kubelet.runner_hang_percent = HANG_PERCENT;
    plan
}

/// #4370 (the scale set vanished at GitHub; the listener crash-loops on
/// `RunnerScaleSetNotFoundException`): the scale set is deleted at GitHub behind the controller's
/// back while jobs arrive. Judged by whether every job still starts within 10 minutes.
pub static REPORT_4370: FieldReport = FieldReport {
    name: "report-4370",
    describe: "#4370 the scale set vanishes at GitHub mid-workload; the listener meets RunnerScaleSetNotFound",
    world: scale_set_vanishes,
    symptoms: || vec![&symptoms::JobStartedWithin],
};

fn scale_set_vanishes(seed: Seed, build: Build) -> WorldPlan {
    let mut plan = scale_set_world(seed, build.variant, 0, 10);
    plan.config.switches = build.switches();
    let mut rng = seed.named_rng("scenario/report-4370");
    plan.config.disruptions.push(Disruption::DeleteScaleSet {
        at_ms: rng.random_range(120_000..300_000),
        name: RUNNER_SET.to_string(),
    });
    plan
}

/// #4370 with #4571's remedy (the scale set vanished; then an operator deletes the crash-looping
/// AutoscalingListener, as #4571's description says to): report-4370's world, and one to three minutes
/// after the scale set goes, `kubectl delete autoscalinglisteners --all -n arc-systems`. A controller
/// with #4571 checks the scale set before it builds the new listener, registers it again and heals;
/// one without builds the new listener on the dead id. Judged by whether every job still starts
/// within 10 minutes.
pub static REPORT_4571: FieldReport = FieldReport {
    name: "report-4571",
    describe: "#4370, then the crash-looping listener is deleted by hand (#4571's remedy): healed only where the scale set is checked",
    world: scale_set_vanishes_then_listener_deleted,
    symptoms: || vec![&symptoms::JobStartedWithin],
};

fn scale_set_vanishes_then_listener_deleted(seed: Seed, build: Build) -> WorldPlan {
    let mut plan = scale_set_vanishes(seed, build);
    let vanished_at = plan.config.disruptions.iter().map(Disruption::at_ms).max().unwrap_or(0);
    let mut rng = seed.named_rng("scenario/report-4571");
    plan.config.disruptions.push(Disruption::DeleteAll {
        at_ms: vanished_at + rng.random_range(60_000..180_000),
        plural: "autoscalinglisteners".to_string(),
        namespace: CONTROLLER_NAMESPACE.to_string(),
    });
    plan
}

/// #4653 (a runner that never registered stays deleting forever): kubectl-delete-runners' world (users
/// delete runners, some of them before they register) under the assumption that RemoveRunner refuses
/// id 0 (`unregistered-runner-removal=refuse-id-zero`; ids once registered still answer 204), as the
/// maintainer's answer on #4653 says the real service does. A controller that asks RemoveRunner(0)
/// for such a runner gets 404 on every try and never lets it go. Judged by whether a deleting runner is
/// gone within 10 minutes.
pub static REPORT_4653: FieldReport = FieldReport {
    name: "report-4653",
    describe: "#4653 runners deleted before they register, RemoveRunner(0) refused: deleting forever",
    world: unregistered_runners_deleted,
    symptoms: || vec![&symptoms::DeletingRunnerGoneWithin],
};

fn unregistered_runners_deleted(seed: Seed, build: Build) -> WorldPlan {
    let mut plan = KubectlDeleteRunners.world_for(seed, build);
    let refused =
        Assumed::parse(["unregistered-runner-removal=refuse-id-zero"]).expect("a known alternative");
    refused.apply(&mut plan.config.github);
    plan
}

/// #4602 (a runner's containers took 9 minutes to start on a node past its disk's IOPS; the job was
/// offered to the scale set three times at 5-minute intervals and waited 54 minutes): image pulls and
/// starts take from half a second to 7 minutes. Opens the windows of the assumptions
/// `registration-lifetime` (a JIT registration unconnected for 5 minutes) and `unstarted-dispatch` (a
/// job acquired with no runner for 5 minutes). Judged by whether the world still settles (every job
/// run, no runner left over) and deleting runners go: with starts this slow jobs queue behind the
/// scale set's ten slots for more than 10 minutes whatever the controller does, so the wait itself is
/// not the symptom.
pub static REPORT_4602: FieldReport = FieldReport {
    name: "report-4602",
    describe: "#4602 runner pods take up to 7 minutes to start (slow image pulls); registrations and dispatches wait",
    world: slow_runner_starts,
    symptoms: || vec![&convergence::ConvergesAfterHeal, &symptoms::DeletingRunnerGoneWithin],
};

/// The longest image pull and start in [`REPORT_4602`], in ms.
const SLOWEST_START_MS: u64 = 420_000;

fn slow_runner_starts(seed: Seed, build: Build) -> WorldPlan {
    let mut plan = scale_set_world(seed, build.variant, 0, 10);
    plan.config.switches = build.switches();
    plan.config.kubelet.start_delay = LagRange::between(500, SLOWEST_START_MS);
    plan
}

/// #4307 and #4183 (runners loop on "Registration … was not found"): report-4602's slow starts under
/// the assumption that a JIT registration no process connected with expires after 5 minutes
/// (`registration-lifetime=unconnected-5-min`, actions/runner #4726). A pod that starts later than
/// that is refused; a controller that gives the runner a new pod with the same JIT config is refused
/// again and again. Judged by whether the world still settles.
pub static REPORT_4307: FieldReport = FieldReport {
    name: "report-4307",
    describe: "#4307 slow runner starts outlive their JIT registration (5 min unconnected): \"Registration was not found\"",
    world: registrations_expire_before_start,
    symptoms: || vec![&convergence::ConvergesAfterHeal, &symptoms::DeletingRunnerGoneWithin],
};

fn registrations_expire_before_start(seed: Seed, build: Build) -> WorldPlan {
    let mut plan = slow_runner_starts(seed, build);
    let expiring = Assumed::parse(["registration-lifetime=unconnected-5-min"]).expect("a known alternative");
    expiring.apply(&mut plan.config.github);
    plan
}

/// Every field-report world, in report order.
pub fn all() -> Vec<&'static dyn Scenario> {
    vec![
        &REPORT_4000,
        &REPORT_4027,
        &REPORT_4307,
        &REPORT_4285,
        &REPORT_4370,
        &REPORT_4571,
        &REPORT_4585,
        &REPORT_4602,
        &REPORT_4603,
        &REPORT_4653,
    ]
}
