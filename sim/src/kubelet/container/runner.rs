//! The runner processes: a scale-set runner (JIT config) and a legacy runner (`config.sh` with a
//! registration token), both `actions/runner` serving jobs through a session at the fake GitHub, and
//! what they do on SIGTERM.
//!
//! The shutdown model, from `actions/runner`: the images run `run.sh`, which turns SIGTERM into SIGINT
//! for `Runner.Listener` (`RUNNER_MANUALLY_TRAP_SIG`); the listener then stops polling for jobs at once,
//! cancels a running job (the worker interrupts its steps and reports the job canceled: "The runner has
//! received a shutdown signal"), deletes its session and exits 0. Until the session is deleted the
//! runner is online, so GitHub can still assign it a job, which it never acquires: that job fails as
//! runner-lost. A SIGKILL (the grace period ran out) drops the connection where it stands.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::super::events::KubeletEventKind;
use super::config_sh::{self, ConfigArgs};
use super::lost_registration::retrying_for;
use super::session;
use super::{EXIT_OUTDATED, ProcessContext};
use crate::github::{ConnectRefused, JobResult, RunnerSession, SessionEnded};

/// How long a runner takes to shut down after SIGTERM (drawn by the kubelet per container start).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shutdown {
    /// From SIGTERM (or the end of a canceled job) to the session deleted and the process gone.
    pub stop: Duration,
    /// From SIGTERM to a running job's steps interrupted and the job reported canceled.
    pub job_cancel: Duration,
}

/// A JIT runner: connect; take one job; report it; exit 0. Refused: exit 1 (7 when outdated).
pub async fn scale_set_runner(ctx: &ProcessContext, jit: &str, sigterm: &CancellationToken) -> i32 {
    if !booted(ctx, sigterm).await {
        return 0;
    }
    let session = match connect(ctx, jit, sigterm).await {
        Ok(session) => session,
        Err(exit_code) => return exit_code,
    };
    connected(ctx, &session);
    serve_jobs(ctx, &session, sigterm, true).await
}

/// A legacy runner: `config.sh` with the token (over HTTP as `startup.sh` runs it, [`config_sh`], when
/// the world asks for it, else one direct call that exits 1 when refused), then serve jobs; an
/// ephemeral one exits 0 after its job, a persistent one keeps serving.
pub async fn legacy_runner(ctx: &ProcessContext, args: &ConfigArgs, sigterm: &CancellationToken) -> i32 {
    if !booted(ctx, sigterm).await {
        return 0;
    }
    let credential = if ctx.sessions_over_http {
        match config_sh::configure(ctx, args, sigterm).await {
            Ok(configured) => configured.credential,
            Err(exit_code) => return exit_code,
        }
    } else {
        match ctx.github.legacy_configure(&args.token, &args.name, &args.labels, args.ephemeral) {
            Ok(registered) => registered.config,
            Err(e) => {
                (ctx.record)(KubeletEventKind::RegistrationFailed {
                    token: args.token.clone(),
                    reason: e.to_string(),
                });
                return 1;
            }
        }
    };
    let session = match connect(ctx, &credential, sigterm).await {
        Ok(session) => session,
        Err(exit_code) => return exit_code,
    };
    connected(ctx, &session);
    serve_jobs(ctx, &session, sigterm, args.ephemeral).await
}

/// The runner's boot before it reaches GitHub ([`ProcessContext::boot`]; none unless the node starts
/// slowly): its container runs, its runner is not yet online. False when SIGTERM came first: the
/// listener, with no session yet, stops and the process exits 0.
async fn booted(ctx: &ProcessContext, sigterm: &CancellationToken) -> bool {
    if ctx.boot.is_zero() {
        return true;
    }
    tokio::select! {
        biased;
        () = sigterm.cancelled() => {
            tokio::time::sleep(ctx.shutdown.stop).await;
            false
        }
        () = tokio::time::sleep(ctx.boot) => true,
    }
}

/// The listener's session at GitHub with `credential`: over HTTP with actions/runner's retries when the
/// world asks for it ([`session::create`]), else a direct call. `Err` is the exit code.
async fn connect(
    ctx: &ProcessContext,
    credential: &str,
    sigterm: &CancellationToken,
) -> Result<RunnerSession, i32> {
    if ctx.sessions_over_http {
        return session::create(ctx, credential, sigterm).await;
    }
    ctx.github.connect_runner(credential).map_err(|refused| match refused {
        ConnectRefused::VersionDeprecated => EXIT_OUTDATED,
        _ => 1,
    })
}

fn connected(ctx: &ProcessContext, session: &RunnerSession) {
    let mut state = ctx.state.lock().expect("process state");
    state.runner_id = Some(session.runner_id());
    state.session = Some(session.clone());
    drop(state);
    (ctx.record)(KubeletEventKind::RunnerConnected { runner_id: session.runner_id() });
}

/// Serves jobs until the runner is done or shut down; returns the exit code.
async fn serve_jobs(
    ctx: &ProcessContext,
    session: &RunnerSession,
    sigterm: &CancellationToken,
    once: bool,
) -> i32 {
    loop {
        let job = tokio::select! {
            biased;
            () = sigterm.cancelled() => return stop(ctx, session).await,
            job = session.next_job() => job,
        };
        let job = match job {
            Ok(job) => job,
            Err(SessionEnded::Removed) => return 0,
            Err(SessionEnded::RegistrationNotFound) => {
                return retry_removed_registration(ctx, session, sigterm).await;
            }
            Err(_) => return 1,
        };
        step(ctx, session).await;
        ctx.state.lock().expect("process state").running_job = Some(job.request_id);
        (ctx.record)(KubeletEventKind::JobStarted {
            runner_id: session.runner_id(),
            request_id: job.request_id,
        });
        let result = tokio::select! {
            biased;
            () = sigterm.cancelled() => return cancel_and_stop(ctx, session, job.request_id).await,
            () = session.job_ended(job.request_id) => JobResult::Canceled,
            () = tokio::time::sleep(job.duration) => job.planned_result,
        };
        step(ctx, session).await;
        if session.complete_job(result).is_err() {
            return 1;
        }
        ctx.state.lock().expect("process state").running_job = None;
        if ctx.hangs_after_job {
            return hang_until_sigterm(ctx, session, job.request_id, sigterm).await;
        }
        if once {
            return 0;
        }
    }
}

/// A runner that hangs after its job (#4603, #4136, #4203): the job is reported, the process stays up
/// (an ephemeral runner's registration is already gone at GitHub) and stops only on SIGTERM.
async fn hang_until_sigterm(
    ctx: &ProcessContext,
    session: &RunnerSession,
    request_id: i64,
    sigterm: &CancellationToken,
) -> i32 {
    (ctx.record)(KubeletEventKind::HungAfterJob { runner_id: session.runner_id(), request_id });
    sigterm.cancelled().await;
    stop(ctx, session).await
}

/// The runner was removed and its poll fails "Registration … was not found": the listener retries for
/// minutes ([`retrying_for`]), then the container exits 0. SIGTERM meanwhile stops it as ever (it has
/// no session left to delete).
async fn retry_removed_registration(
    ctx: &ProcessContext,
    session: &RunnerSession,
    sigterm: &CancellationToken,
) -> i32 {
    let runner_id = session.runner_id();
    let retrying = retrying_for(&mut ctx.seed.named_rng(&format!("runner/{runner_id}/removed-registration")));
    let for_ms = u64::try_from(retrying.as_millis()).unwrap_or(u64::MAX);
    (ctx.record)(KubeletEventKind::RetryingRemovedRegistration { runner_id, for_ms });
    tokio::select! {
        biased;
        () = sigterm.cancelled() => tokio::time::sleep(ctx.shutdown.stop).await,
        () = tokio::time::sleep(retrying) => {}
    }
    ctx.state.lock().expect("process state").session = None;
    0
}

/// SIGTERM mid-job: the steps are interrupted (or the job ends at the service first), the job is
/// reported canceled, then the runner stops. The process state keeps the job it was running.
async fn cancel_and_stop(ctx: &ProcessContext, session: &RunnerSession, request_id: i64) -> i32 {
    tokio::select! {
        biased;
        () = session.job_ended(request_id) => {}
        () = tokio::time::sleep(ctx.shutdown.job_cancel) => {}
    }
    let _ = session.cancel_job_for_shutdown();
    stop(ctx, session).await
}

/// The listener's shutdown: its session stays connected (assignable) until it is deleted, then the
/// process exits 0. A job assigned in between was never acquired: the runner is left holding it.
async fn stop(ctx: &ProcessContext, session: &RunnerSession) -> i32 {
    tokio::time::sleep(ctx.shutdown.stop).await;
    step(ctx, session).await;
    ctx.state.lock().expect("process state").session = None;
    session.session_deleted();
    0
}

/// A scheduling point of the runner process: picking up a job, reporting it, deleting its session.
async fn step(ctx: &ProcessContext, session: &RunnerSession) {
    ctx.schedule.point(|| format!("runner/{}", session.runner_id())).await;
}
