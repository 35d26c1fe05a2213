//! [`SteppedWorld`]: a world run in steps, for a person looking at it (`arcsim serve`). The world
//! runs on its own paused current-thread runtime exactly as [`World::run`] runs it; between steps
//! nothing polls that runtime, so no task runs and simulated time stands still while the world's
//! state is read. A step is one `block_on` of the world's run raced (biased: the world first)
//! against a timer at the step's end.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use arc_controller::Families;
use arc_controller::runtime::metrics::Metrics;
use tokio::runtime::Runtime;

use super::{RunRecord, Settled, World, WorldConfig, WorldError};
use arc_sim::apiserver::FakeApiServer;
use arc_sim::clock::SimClock;
use arc_sim::github::FakeGitHub;
use arc_sim::record::{Event, Interest, Recorder};
use arc_sim::seed::Seed;
use arc_sim::trace::TraceMode;

/// Why a stepped world could not start.
#[derive(Debug, thiserror::Error)]
pub enum SteppingError {
    /// The runtime could not be built.
    #[error("cannot build the world's runtime: {0}")]
    Runtime(#[from] std::io::Error),
    /// The world could not be built.
    #[error("cannot build the world: {0}")]
    World(#[from] WorldError),
}

/// Where a step left the world.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Paused at this sim ms.
    Paused(u64),
    /// The run is over (settled or at its horizon) at this sim ms.
    Ended(u64),
}

type Run = Pin<Box<dyn Future<Output = Result<RunRecord, WorldError>>>>;

/// Running, or over with its outcome (boxed: a record is large).
enum Stage {
    Running(Run),
    Ended(Box<Result<RunRecord, WorldError>>),
}

/// A world run in steps.
pub struct SteppedWorld {
    runtime: Runtime,
    stage: Stage,
    clock: SimClock,
    apiserver: FakeApiServer,
    github: FakeGitHub,
    record: Recorder,
    /// The run's parts a record so far is made of, beside the fakes and the recorder.
    parts: Parts,
}

/// What [`SteppedWorld::record_so_far`] needs of the world that its run future holds.
struct Parts {
    seed: Seed,
    plug: &'static str,
    metrics: Metrics,
    listener_metrics: Metrics,
}

impl std::fmt::Debug for SteppedWorld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SteppedWorld").field("now_ms", &self.now_ms()).field("ended", &self.ended()).finish()
    }
}

impl SteppedWorld {
    /// Builds the world on a fresh paused runtime, at sim time 0, nothing run yet.
    pub fn start(
        config: WorldConfig,
        families: Families,
        settled: Settled,
        trace_mode: TraceMode,
        keep: Interest,
    ) -> Result<SteppedWorld, SteppingError> {
        let runtime = crate::runtime::seeded_runtime(config.seed)?;
        let world = runtime.block_on(async { World::build(config, families, trace_mode, keep) })?;
        let clock = runtime.block_on(async { world.record().clock() });
        let (apiserver, github, record) =
            (world.apiserver().clone(), world.github().clone(), world.record().clone());
        let parts = Parts {
            seed: world.config.seed,
            plug: world.families.name(),
            metrics: world.controller.metrics().clone(),
            listener_metrics: world.listener_metrics.clone(),
        };
        let run: Run = Box::pin(world.run(settled));
        Ok(SteppedWorld { runtime, stage: Stage::Running(run), clock, apiserver, github, record, parts })
    }

    /// Simulated ms now.
    pub fn now_ms(&self) -> u64 {
        let _context = self.runtime.enter();
        self.clock.elapsed_ms()
    }

    /// Whether the run is over.
    pub fn ended(&self) -> bool {
        matches!(self.stage, Stage::Ended(_))
    }

    /// Runs the world until sim ms `at_ms` (or its end, if sooner) and pauses it there.
    pub fn run_until(&mut self, at_ms: u64) -> Progress {
        let Stage::Running(run) = &mut self.stage else { return Progress::Ended(self.now_ms()) };
        let deadline = self.clock.instant_at(Duration::ZERO).checked_add(Duration::from_millis(at_ms));
        let outcome = self.runtime.block_on(async {
            let Some(deadline) = deadline else { return Some(run.as_mut().await) };
            tokio::select! {
                biased;
                outcome = run.as_mut() => Some(outcome),
                () = tokio::time::sleep_until(deadline) => None,
            }
        });
        match outcome {
            Some(outcome) => {
                self.stage = Stage::Ended(Box::new(outcome));
                Progress::Ended(self.now_ms())
            }
            None => Progress::Paused(self.now_ms()),
        }
    }

    /// Runs the world for `by` of simulated time.
    pub fn step(&mut self, by: Duration) -> Progress {
        let to = self.now_ms().saturating_add(u64::try_from(by.as_millis()).unwrap_or(u64::MAX));
        self.run_until(to)
    }

    /// Runs the world one simulated millisecond at a time until an event it keeps matches, and
    /// returns that event (and where the world paused: at the end of the millisecond the event
    /// happened in); `None` if the run ended first.
    pub fn run_until_event(&mut self, mut matches: impl FnMut(&Event) -> bool) -> (Progress, Option<Event>) {
        let mut seen = self.record.kept();
        loop {
            let progress = self.step(Duration::from_millis(1));
            let new = self.record.events_from(seen);
            seen += new.len();
            if let Some(event) = new.into_iter().find(|e| matches(e)) {
                return (progress, Some(event));
            }
            if let Progress::Ended(_) = progress {
                return (progress, None);
            }
        }
    }

    /// Runs the world to its end and returns its record.
    pub fn finish(self) -> Result<RunRecord, WorldError> {
        match self.stage {
            Stage::Running(run) => self.runtime.block_on(run),
            Stage::Ended(outcome) => *outcome,
        }
    }

    /// The record of the run, if it has ended.
    pub fn outcome(&self) -> Option<&Result<RunRecord, WorldError>> {
        match &self.stage {
            Stage::Running(_) => None,
            Stage::Ended(outcome) => Some(&**outcome),
        }
    }

    /// The fake API server (read its objects with [`FakeApiServer::objects`], which bypasses the API).
    pub fn apiserver(&self) -> &FakeApiServer {
        &self.apiserver
    }

    /// The fake GitHub.
    pub fn github(&self) -> &FakeGitHub {
        &self.github
    }

    /// The run's record so far.
    pub fn record(&self) -> &Recorder {
        &self.record
    }

    /// The record of the run as it stands, cut before now ([`RunRecord::before`]): every kept event,
    /// the fakes' state and the metrics now, but no objects, no restarts and no workload end (a
    /// record so far has no end state to judge): what an oracle that judges a record so far reads.
    /// The finished run's record, once it has ended.
    pub fn record_so_far(&self) -> RunRecord {
        if let Some(Ok(record)) = self.outcome() {
            return record.clone();
        }
        let now = self.now_ms();
        let sources = super::record::Sources {
            seed: self.parts.seed,
            plug: self.parts.plug,
            recorder: &self.record,
            apiserver: &self.apiserver,
            github: &self.github,
            metrics: &self.parts.metrics,
            listener_metrics: &self.parts.listener_metrics,
        };
        let record = sources.record(now, u64::MAX, Vec::new());
        record.before(now)
    }
}

/// The trace line of a kept event (`{sim_ms} {actor} {event} {details}`), as the trace has it.
pub fn trace_line(event: &Event) -> Option<String> {
    let line = event.body.line()?;
    let mut out = format!("{} {} {}", event.at_ms, line.actor, line.event);
    if !line.details.is_empty() {
        out.push(' ');
        out.push_str(&line.details);
    }
    Some(out)
}
