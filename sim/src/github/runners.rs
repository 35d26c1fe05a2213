//! Runners (ARC-MODEL §6.2 "Runner", §6.4): registration by JIT config, lookups, the runner process
//! connecting and exiting, and removal.
//!
//! A JIT config registers an **offline** runner; a process that connects with it makes it **idle**;
//! the service assigns it a job (**busy**, see `assign`); it reports completion and an ephemeral
//! runner deregisters (**removed**). A process that dies while idle leaves the runner offline; one that
//! dies while busy leaves it **lost** until the lost-runner timeout. A removed runner's process is
//! refused.

use super::events::{ConnectRefused, EventKind};
use super::model::{RemovalReason, Runner, RunnerState};
use super::reply::Reply;
use super::state::World;
use super::state::later::Later;
use super::tokens::{self, RunnerCredential};
use super::wire::{ItemList, JitConfig, JitRequest, RunnerReference};

/// A job whose runner's process died: it fails "runner lost" at `due_ms` unless something ends it
/// first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LostJob {
    pub runner_id: i64,
    pub request_id: i64,
}

/// What registering a runner produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Registered {
    pub runner: RunnerReference,
    pub config: String,
}

impl World {
    /// `POST runnerscalesets/{id}/generatejitconfig`: 409 `AgentExistsException` for a taken name.
    pub(super) fn http_generate_jit_config(&mut self, scale_set_id: i64, setting: &JitRequest) -> Reply {
        let Some(set) = self.scale_sets.get(&scale_set_id) else {
            let message = format!("runner scale set {scale_set_id} not found");
            return Reply::exception(404, "RunnerScaleSetNotFoundException", message);
        };
        if setting.name.trim().is_empty() {
            return Reply::bad_request("a runner needs a name");
        }
        if self.live_runner_named(&setting.name).is_some() {
            let message = format!("A runner with the name {} already exists.", setting.name);
            return Reply::exception(409, "AgentExistsException", message);
        }
        let labels = set.labels.iter().map(|l| l.name.clone()).collect();
        let registered = self.register_runner(&setting.name, Some(scale_set_id), None, labels, true);
        Reply::json(200, &JitConfig { runner: registered.runner, encoded_jit_config: registered.config })
    }

    /// Registers an offline runner and mints the config its process connects with.
    pub(super) fn register_runner(
        &mut self,
        name: &str,
        scale_set_id: Option<i64>,
        scope: Option<String>,
        labels: Vec<String>,
        ephemeral: bool,
    ) -> Registered {
        let id = self.next_id();
        let secret = tokens::opaque(self.seed, "runner", self.next_number());
        let state = RunnerState::Offline;
        let registered_ms = self.now_ms();
        let runner = Runner {
            id,
            name: name.to_string(),
            scale_set_id,
            scope,
            labels,
            ephemeral,
            state,
            registered_ms,
            connections: 0,
        };
        self.runners.insert(id, runner);
        self.index_new_runner(id);
        if let (Some(ttl_ms), Some(_)) = (self.cfg.unconnected_registration_ttl_ms, scale_set_id) {
            self.after(ttl_ms, Later::ExpireRegistration { runner_id: id });
        }
        self.runner_secrets.insert(id, secret.clone());
        self.record(EventKind::RunnerRegistered { runner_id: id, name: name.to_string(), scale_set_id });
        let credential = RunnerCredential {
            runner_id: id,
            runner_name: name.to_string(),
            scale_set_id: scale_set_id.unwrap_or(0),
            secret,
        };
        let reference =
            RunnerReference { id, name: name.to_string(), runner_scale_set_id: scale_set_id.unwrap_or(0) };
        Registered { runner: reference, config: credential.encode() }
    }

    /// The registered (not removed) runner named `name`.
    pub(super) fn live_runner_named(&self, name: &str) -> Option<&Runner> {
        self.index.live_named.get(name).and_then(|ids| ids.first()).map(|id| &self.runners[id])
    }

    /// `GET agents/{id}`: 404 `AgentNotFoundException` for an unknown or removed runner.
    pub(super) fn http_get_runner(&mut self, runner_id: i64) -> Reply {
        match self.read_runners().into_iter().find(|r| r.id == runner_id) {
            Some(runner) => Reply::json(200, &runner),
            None => Reply::exception(
                404,
                "AgentNotFoundException",
                format!("No agent found with identifier {runner_id}."),
            ),
        }
    }

    /// `GET agents?agentName=`: 0 or 1 runners.
    pub(super) fn http_get_runner_by_name(&mut self, name: &str) -> Reply {
        let found: Vec<RunnerReference> =
            self.read_runners().into_iter().filter(|r| r.name == name).collect();
        Reply::json(200, &ItemList::of(found))
    }

    /// A runner process starts with `config`. Returns the runner id and the connection number.
    pub(super) fn connect(&mut self, config: &str) -> Result<(i64, u64), ConnectRefused> {
        let credential = RunnerCredential::decode(config)
            .filter(|c| self.runner_secrets.get(&c.runner_id) == Some(&c.secret))
            .ok_or(ConnectRefused::InvalidConfig);
        let runner_id = credential.as_ref().map_or(0, |c| c.runner_id);
        let outcome = credential.and_then(|_| self.admit(runner_id));
        match outcome {
            Ok(connection) => {
                self.record(EventKind::RunnerConnected { runner_id });
                Ok((runner_id, connection))
            }
            Err(reason) => {
                self.record(EventKind::RunnerRefused { runner_id, reason });
                Err(reason)
            }
        }
    }

    fn admit(&mut self, runner_id: i64) -> Result<u64, ConnectRefused> {
        let deprecated = self.cfg.runner_version_deprecated;
        let runner = self.runners.get_mut(&runner_id).ok_or(ConnectRefused::InvalidConfig)?;
        match runner.state {
            RunnerState::Removed { .. } => Err(ConnectRefused::Removed),
            _ if deprecated => Err(ConnectRefused::VersionDeprecated),
            RunnerState::Idle if self.dead_processes.remove(&runner_id).is_some() => {
                // A new process replaces one that died unnoticed (`dead-runner-detection`).
                runner.connections += 1;
                let connection = runner.connections;
                self.index.touched.insert(super::state::index::Topic::Runner(runner_id));
                Ok(connection)
            }
            RunnerState::Busy { .. } if self.dead_processes.contains_key(&runner_id) => {
                Err(ConnectRefused::JobInProgress)
            }
            RunnerState::Idle | RunnerState::Busy { .. } => Err(ConnectRefused::AlreadyConnected),
            RunnerState::Lost { .. } => Err(ConnectRefused::JobInProgress),
            RunnerState::Offline => {
                runner.connections += 1;
                let connection = runner.connections;
                self.set_runner_state(runner_id, RunnerState::Idle);
                Ok(connection)
            }
        }
    }

    /// The process of connection `connection` died or exited. An idle runner goes offline; a busy one
    /// is lost, and its job is returned so the caller can start the lost-runner timer.
    /// A process that `said_so` (deleted its session) is noticed at once whatever the assumption.
    pub(super) fn process_exited(
        &mut self,
        runner_id: i64,
        connection: u64,
        said_so: bool,
    ) -> Option<LostJob> {
        let now = self.now_ms();
        let runner = self.runners.get(&runner_id).filter(|r| r.connections == connection)?;
        let (state, lost) = match runner.state {
            RunnerState::Idle if !said_so && self.cfg.dead_runner_detection_ms > 0 => {
                // The service has not noticed yet: the runner stays online and assignable.
                self.dead_processes.insert(runner_id, connection);
                let detection_ms = self.cfg.dead_runner_detection_ms;
                self.after(detection_ms, Later::NoticeDeadRunner { runner_id, connection });
                self.record(EventKind::ProcessExited { runner_id, lost_job: None });
                return None;
            }
            RunnerState::Idle => (RunnerState::Offline, None),
            RunnerState::Busy { request_id } => {
                (RunnerState::Lost { request_id, since_ms: now }, Some(LostJob { runner_id, request_id }))
            }
            _ => return None,
        };
        self.set_runner_state(runner_id, state);
        self.record(EventKind::ProcessExited { runner_id, lost_job: lost.map(|l| l.request_id) });
        lost
    }

    /// Removes a runner for good.
    pub(super) fn remove(&mut self, runner_id: i64, reason: RemovalReason) {
        let at_ms = self.now_ms();
        if self.runners.get(&runner_id).is_some_and(|r| !r.is_removed()) {
            self.set_runner_state(runner_id, RunnerState::Removed { reason, at_ms });
            self.record(EventKind::RunnerRemoved { runner_id, reason });
        }
    }
}
