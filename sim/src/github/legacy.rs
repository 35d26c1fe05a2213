//! The legacy REST view of self-hosted runners (ARC-MODEL §6.3 legacy, §6.6 legacy, §8.2).
//!
//! `config.sh` registers a runner with a registration token, which works only until it expires
//! (1 h): a container that re-runs `config.sh` with an expired token fails. Over HTTP it exchanges
//! the token at `POST /actions/runner-registration` and registers at `POST /actions/runners/register`
//! (actions/runner's runner-admin flow), each refusing an expired token with a bare 404; worlds whose
//! runners do not reach GitHub over HTTP make it one direct call. Like ARC's entrypoint it
//! passes `--replace`, so a name already registered is taken over unless that runner holds a job.
//! `GET …/actions/runners` serves a snapshot up to `list_runners_staleness_ms` old, so `busy` can lag
//! the service; `DELETE …/actions/runners/{id}` answers 422 for a runner holding a job.

use super::assign::RemovalApi;
use super::events::{EventKind, RemoveOutcome};
use super::model::{RemovalReason, Runner, RunnerState};
use super::reply::Reply;
use super::state::{CachedRunnerList, World};
use super::wire::{
    RegisterRunnerRequest, RegisteredRunner, RestRunner, RestRunnerLabel, RestRunnerList, RunnerAuthorization,
};

/// The most runners one page holds (GitHub's REST API: `per_page`, max 100).
const MAX_PER_PAGE: u32 = 100;

/// Why `config.sh` failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistrationFailed {
    /// The registration token expired.
    #[error("the registration token expired")]
    TokenExpired,
    /// The registration token was never issued.
    #[error("the registration token is not valid")]
    TokenInvalid,
    /// A runner with this name exists and holds a job, so `--replace` cannot take it over.
    #[error("a runner named {0:?} exists and is running a job")]
    NameBusy(String),
}

/// A successful `config.sh`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyRegistration {
    /// The new runner's id.
    pub runner_id: i64,
    /// What `run.sh` connects with (pass to `FakeGitHub::connect_runner`).
    pub config: String,
}

impl World {
    /// `config.sh --unattended --replace --token <token> --name <name> --labels <labels>`, as one
    /// direct call (worlds whose runners do not reach GitHub over HTTP).
    pub(super) fn legacy_configure(
        &mut self,
        token: &str,
        name: &str,
        labels: &[String],
        ephemeral: bool,
    ) -> Result<LegacyRegistration, RegistrationFailed> {
        let rec = self.registration_tokens.get(token).cloned().ok_or(RegistrationFailed::TokenInvalid)?;
        if self.now_ms() >= rec.expires_ms {
            return Err(RegistrationFailed::TokenExpired);
        }
        let mut all_labels = vec!["self-hosted".to_string(), "linux".to_string(), "x64".to_string()];
        all_labels.extend(
            labels
                .iter()
                .filter(|l| !all_labels.iter().any(|a| a.eq_ignore_ascii_case(l)))
                .cloned()
                .collect::<Vec<_>>(),
        );
        self.register_or_replace(&rec.scope, name, all_labels, ephemeral)
    }

    /// `POST /actions/runners/register` in `scope` (the registration token's): 200 with the runner
    /// and its credential. Simplification: the service's answer to replacing a runner that holds a
    /// job is not public; the fake answers 422 with a message of its own (config.sh fails on it).
    pub(super) fn http_register_runner(&mut self, scope: &str, body: &RegisterRunnerRequest) -> Reply {
        if body.name.is_empty() || body.url.is_empty() {
            return Reply::rest_error(422, "url and name are required");
        }
        if !body.replace && self.live_runner_named(&body.name).is_some() {
            return Reply::rest_error(422, format!("A runner named {} already exists", body.name));
        }
        let labels = body.labels.iter().map(|l| l.name.clone()).collect();
        match self.register_or_replace(scope, &body.name, labels, body.ephemeral) {
            Ok(registered) => {
                let server_url = self.cfg.service_url.clone();
                let authorization = RunnerAuthorization {
                    authorization_url: format!("{}/_apis/oauth2/token", server_url.trim_end_matches('/')),
                    server_url,
                    client_id: registered.config,
                };
                Reply::json(
                    200,
                    &RegisteredRunner { id: registered.runner_id, name: body.name.clone(), authorization },
                )
            }
            Err(refused) => Reply::rest_error(422, refused.to_string()),
        }
    }

    /// Registers runner `name` in `scope`, taking over (`--replace`) a live runner of that name
    /// unless it holds a job.
    fn register_or_replace(
        &mut self,
        scope: &str,
        name: &str,
        labels: Vec<String>,
        ephemeral: bool,
    ) -> Result<LegacyRegistration, RegistrationFailed> {
        if let Some(existing) = self.live_runner_named(name) {
            if existing.job().is_some() {
                return Err(RegistrationFailed::NameBusy(name.to_string()));
            }
            let id = existing.id;
            self.remove(id, RemovalReason::Replaced);
        }
        let registered = self.register_runner(name, None, Some(scope.to_string()), labels, ephemeral);
        Ok(LegacyRegistration { runner_id: registered.runner.id, config: registered.config })
    }

    /// `GET {scope}/actions/runners?per_page=&page=`, from a snapshot at most the staleness old.
    pub(super) fn http_list_runners(&mut self, scope: &str, page: u32, per_page: u32) -> Reply {
        let now = self.now_ms();
        let fresh = self
            .legacy_lists
            .get(scope)
            .is_some_and(|c| now - c.taken_ms < self.cfg.list_runners_staleness_ms);
        if !fresh {
            let runners = self
                .runners
                .values()
                .filter(|r| r.scope.as_deref() == Some(scope) && !r.is_removed())
                .map(rest_view)
                .collect();
            self.legacy_lists.insert(scope.to_string(), CachedRunnerList { taken_ms: now, runners });
        }
        let all = &self.legacy_lists[scope].runners;
        let per_page = per_page.clamp(1, MAX_PER_PAGE) as usize;
        let page = page.max(1) as usize;
        let runners: Vec<RestRunner> =
            all.iter().skip((page - 1) * per_page).take(per_page).cloned().collect();
        let total_count = i64::try_from(all.len()).unwrap_or(i64::MAX);
        let reply = Reply::json(200, &RestRunnerList { total_count, runners });
        if page * per_page >= all.len() {
            return reply;
        }
        let next = format!(
            "<https://api.github.com{scope}/actions/runners?page={}&per_page={per_page}>; rel=\"next\"",
            page + 1
        );
        reply.with_header("Link", next)
    }

    /// `DELETE {scope}/actions/runners/{id}`: 204, 422 while it holds a job, 404 if unknown here.
    pub(super) fn http_delete_runner(&mut self, scope: &str, runner_id: i64) -> Reply {
        let in_scope = self.runners.get(&runner_id).is_some_and(|r| r.scope.as_deref() == Some(scope));
        let outcome = if in_scope {
            self.remove_runner(runner_id, RemovalApi::Legacy)
        } else {
            self.record(EventKind::RemoveRunner { runner_id, outcome: RemoveOutcome::NotFound });
            RemoveOutcome::NotFound
        };
        match outcome {
            RemoveOutcome::Removed | RemoveOutcome::RemovedAssigned | RemoveOutcome::Unknown => {
                Reply::empty(204)
            }
            RemoveOutcome::Busy | RemoveOutcome::JobStillRunning => {
                let name = self.runners.get(&runner_id).map(|r| r.name.clone()).unwrap_or_default();
                Reply::rest_error(422, format!("Bad request - Runner \"{name}\" is still running a job\""))
            }
            RemoveOutcome::NotFound => Reply::rest_error(404, "Not Found"),
        }
    }
}

fn rest_view(runner: &Runner) -> RestRunner {
    let online = matches!(runner.state, RunnerState::Idle | RunnerState::Busy { .. });
    let labels = runner
        .labels
        .iter()
        .zip(1..)
        .map(|(name, id)| RestRunnerLabel {
            id,
            name: name.clone(),
            kind: if id <= 3 { "read-only" } else { "custom" }.into(),
        })
        .collect();
    RestRunner {
        id: runner.id,
        name: runner.name.clone(),
        os: "linux".into(),
        status: if online { "online" } else { "offline" }.into(),
        busy: runner.job().is_some(),
        labels,
    }
}
