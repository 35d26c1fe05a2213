//! [`GitHubService`]: the fake as a `tower::Service` speaking the wire format of GitHub's REST API and
//! the Actions service, so the production `ActionsClient` drives it unchanged.
//!
//! Each request is routed and passed through the fault layer; then it waits its seeded latency before
//! the commit, is authorised and served under the world lock (GetMessage: long-polled), waits its
//! latency after the commit, and is answered (or, under a fault, failed: see `faults`), counted by
//! operation and status, and recorded as a [`GitHubCall`] (trace line
//! `github http <METHOD> <path> <operation> <status>`).
//!
//! A request whose latency before the commit is not zero is served by a task of its own, so it
//! commits even if the client gives up on it meanwhile (a request on the wire reaches the service
//! whatever its sender does next); GetMessage's long poll stays tied to its connection (in worlds
//! whose processes stop, a task of its own that ends when its caller drops it).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response};
use http_body_util::{BodyExt, Full};
use serde::de::DeserializeOwned;

use super::Shared;
use super::assign::RemovalApi;
use super::auth::Authorized;
use super::events::{GitHubCall, GitHubFaultFired, RemoveOutcome};
use super::faults::{Failure, FaultDecision, Fired};
use super::operation::Operation;
use super::reply::Reply;
use super::route::{Auth, Route};
use super::sessions;
use super::state::World;
use super::state::rate_limits::with_headers;
use super::timing::LatencyClass;
use super::tokens;
use super::wire::{ItemList, SessionRequest};

/// An error of a request body's stream.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The connection was dropped before the answer (a `drop` or `commit-then-drop` fault): what a client
/// sees as a transport error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the connection to the fake GitHub closed before an answer (injected fault)")]
pub struct ConnectionDropped;

/// The fake GitHub as a cloneable `tower::Service`. Clones share the fake.
#[derive(Clone)]
pub struct GitHubService {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for GitHubService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GitHubService")
    }
}

/// The service's answer to one request.
pub(crate) type Answer = Result<Response<Full<Bytes>>, ConnectionDropped>;

impl<B> tower::Service<Request<B>> for GitHubService
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError> + Send,
{
    type Response = Response<Full<Bytes>>;
    type Error = ConnectionDropped;
    type Future = Pin<Box<dyn Future<Output = Answer> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), ConnectionDropped>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let shared = Arc::clone(&self.shared);
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let (body, unreadable) = match body.collect().await {
                Ok(collected) => (collected.to_bytes(), false),
                Err(_) => (Bytes::new(), true),
            };
            let incoming = Incoming {
                method: parts.method,
                path: parts.uri.path().to_string(),
                query: parts.uri.query().unwrap_or("").to_string(),
                headers: parts.headers,
                body,
            };
            if unreadable {
                let received_ms = shared.lock().now_ms();
                let unread = Reply::bad_request("the request body could not be read");
                return finish(&shared, &incoming, None, received_ms, Delivered::answered(unread));
            }
            handle(&shared, Arc::new(incoming)).await
        })
    }
}

/// A request, read and owned (a task serving it may outlive the caller).
#[derive(Debug)]
struct Incoming {
    method: Method,
    path: String,
    query: String,
    headers: HeaderMap,
    body: Bytes,
}

/// What became of a request.
struct Delivered {
    /// The status the service's own answer had, when it served the request.
    served: Option<u16>,
    /// What the client gets.
    outcome: Failure,
}

impl Delivered {
    fn answered(reply: Reply) -> Delivered {
        Delivered { served: Some(reply.status), outcome: Failure::Answer(reply) }
    }
}

/// What the fault layer's decision means for the flow of one request.
struct Plan {
    extra_delay: Duration,
    serve: bool,
    failure: Option<Failure>,
}

impl Plan {
    fn of(decision: Option<FaultDecision>) -> Plan {
        let normal = Plan { extra_delay: Duration::ZERO, serve: true, failure: None };
        match decision {
            None => normal,
            Some(FaultDecision::Delay(extra_delay)) => Plan { extra_delay, ..normal },
            Some(FaultDecision::Fail(failure)) => Plan { serve: false, failure: Some(failure), ..normal },
            Some(FaultDecision::CommitThenFail(failure)) => Plan { failure: Some(failure), ..normal },
        }
    }
}

async fn handle(shared: &Arc<Shared>, request: Arc<Incoming>) -> Answer {
    let received_ms = shared.lock().now_ms();
    let Some(route) = Route::parse(&request.method, &request.path) else {
        let unknown = Delivered::answered(Reply::rest_error(404, "Not Found"));
        return finish(shared, &request, None, received_ms, unknown);
    };
    let operation = route.operation();
    let fired = decide_fault(shared, operation, &request.path, received_ms);
    let (before, after) = {
        let mut world = shared.lock();
        let latency = world.cfg.latency.of(LatencyClass::of(operation));
        latency.draw(&mut world.latency_rng)
    };
    let mut plan = Plan::of(fired.map(|f| f.decision));
    plan.extra_delay += shared.lock().held.request_delay(operation.as_str());
    let served = if plan.serve {
        Some(commit(shared, route, Arc::clone(&request), before + plan.extra_delay).await)
    } else {
        pause(before).await;
        None
    };
    pause(after).await;
    schedule_point(shared, operation).await;
    let status = served.as_ref().map(|reply| reply.status);
    let outcome = match (plan.failure, served) {
        (Some(failure), _) => failure,
        (None, Some(reply)) => Failure::Answer(reply),
        (None, None) => unreachable!("a request is served unless a fault fails it"),
    };
    finish(shared, &request, Some(operation), received_ms, Delivered { served: status, outcome })
}

/// Rolls the fault layer's dice for a request and records a fault that fires.
fn decide_fault(shared: &Shared, operation: Operation, path: &str, now_ms: u64) -> Option<Fired> {
    let fired = shared.faults.lock().unwrap_or_else(|p| p.into_inner()).decide(operation, now_ms);
    if let Some(fired) = &fired {
        let event = GitHubFaultFired {
            operation: operation.as_str(),
            path: path.to_string(),
            action: fired.action.clone(),
        };
        shared.lock().record.emit(event);
    }
    fired
}

/// Sleeps `delay` in sim time; no sleep (and no yield) when it is zero.
async fn pause(delay: Duration) {
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
}

/// Serves the request after `delay`: inline when there is no delay or it is a long poll, otherwise in
/// a task of its own that commits whatever becomes of the caller.
async fn commit(shared: &Arc<Shared>, route: Route, request: Arc<Incoming>, delay: Duration) -> Reply {
    let long_poll = matches!(route, Route::GetMessage { .. });
    let detached_poll = long_poll && shared.detached_long_polls.load(Ordering::Relaxed);
    if (delay.is_zero() || long_poll) && !detached_poll {
        pause(delay).await;
        schedule_point(shared, route.operation()).await;
        return serve(shared, &route, &request).await;
    }
    let task_shared = Arc::clone(shared);
    let task = tokio::spawn(async move {
        pause(delay).await;
        schedule_point(&task_shared, route.operation()).await;
        serve(&task_shared, &route, &request).await
    });
    // A long poll ends when its client's connection does (the caller dropped); other requests commit.
    let mut task = AbortOnDrop { task, abort: long_poll };
    match (&mut task.task).await {
        Ok(reply) => reply,
        Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
        Err(_) => Reply::text(503, "the service is shutting down"),
    }
}

/// A serving task, aborted with its caller when `abort` (a long poll, whose connection closes).
struct AbortOnDrop {
    task: tokio::task::JoinHandle<Reply>,
    abort: bool,
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if self.abort {
            self.task.abort();
        }
    }
}

/// A scheduling point of `operation`'s callers (before the commit and before the answer).
async fn schedule_point(shared: &Shared, operation: Operation) {
    shared.schedule.get().point(|| format!("github/{}", operation.as_str())).await;
}

impl super::FakeGitHub {
    /// Serves each long poll in a task of its own from now on, so that a client that stops (a paused
    /// process) gets its answer when it goes on, as a real server answers into the connection's
    /// buffer; the poll still ends when its client drops it. Off by default: the poll is served inside
    /// its caller's future, and every world without pauses keeps its traces.
    pub fn detach_long_polls(&self) {
        self.shared.detached_long_polls.store(true, Ordering::Relaxed);
    }

    /// Orders the fake's same-instant work by the run's `scheduler` (set once, before the first
    /// request; `fifo` until then).
    pub fn set_scheduler(&self, scheduler: crate::schedule::Scheduler) {
        self.shared.schedule.set(scheduler);
    }
}

async fn serve(shared: &Arc<Shared>, route: &Route, request: &Incoming) -> Reply {
    let checked = shared.lock().authorize(route.auth(), &request.headers);
    let authorized = match checked {
        Ok(authorized) => authorized,
        Err(reply) => {
            if route.auth() == Auth::RegistrationToken {
                shared.mutate(|world| world.note_refused_registration(&request.headers));
            }
            return reply;
        }
    };
    if let (Route::InstallationToken { installation_id }, Authorized::App { jwt }) = (route, &authorized) {
        return shared.mutate(|world| world.http_installation_token(*installation_id, jwt));
    }
    if let (Route::CreateRunnerSession, Authorized::Runner { credential }) = (route, &authorized) {
        return with_json(&request.body, |body| {
            shared.mutate(|world| world.http_create_runner_session(credential, &body))
        });
    }
    if let (Route::GetMessage { id }, Authorized::Session { session_id }) = (route, &authorized) {
        return sessions::get_message(shared, *id, session_id, &request.query, &request.headers).await;
    }
    let caller = crate::actor::actor_of(&request.headers).map(str::to_string);
    shared.mutate(|world| {
        world.caller = caller;
        let reply = serve_in(world, route, &authorized, request);
        world.caller = None;
        reply
    })
}

/// Serves a call that needs no waiting: meters it (a REST call) and dispatches it.
fn serve_in(world: &mut World, route: &Route, authorized: &Authorized, request: &Incoming) -> Reply {
    let metered = if route.auth() == Auth::Pat {
        match world.meter_rest(&request.headers, route.operation().is_mutating()) {
            Ok(headers) => headers,
            Err(refused) => return refused,
        }
    } else {
        Vec::new()
    };
    if let (Route::RegisterRunner, Authorized::Registration { scope }) = (route, authorized) {
        return with_json(&request.body, |body| world.http_register_runner(scope, &body));
    }
    with_headers(dispatch(world, route, &request.query, &request.body), metered)
}

fn dispatch(w: &mut World, route: &Route, query: &str, body: &Bytes) -> Reply {
    let query = Query::parse(query);
    match route {
        Route::RegistrationToken { scope } => Reply::json(201, &w.issue_registration_token(scope)),
        Route::AdminToken => with_json(body, |request| w.http_admin_token(&request)),
        Route::ListRunners { scope } => w.http_list_runners(
            scope,
            query.number("page").unwrap_or(1),
            query.number("per_page").unwrap_or(30),
        ),
        Route::DeleteRunner { scope, runner_id } => w.http_delete_runner(scope, *runner_id),
        Route::GetRunnerGroup => w.http_get_runner_group(query.text("groupName")),
        Route::FindScaleSet => match query.number::<i64>("runnerGroupId") {
            Some(group) => w.http_find_scale_set(group, query.text("name")),
            None => Reply::bad_request("runnerGroupId is required"),
        },
        Route::GetScaleSet { id } => w.http_get_scale_set(*id),
        Route::CreateScaleSet => with_json(body, |set| w.http_create_scale_set(set)),
        Route::UpdateScaleSet { id } => with_json(body, |set| w.http_update_scale_set(*id, set)),
        Route::DeleteScaleSet { id } => w.http_delete_scale_set(*id),
        Route::CreateSession { id } => {
            with_json(body, |session: SessionRequest| w.http_create_session(*id, &session.owner_name))
        }
        Route::RefreshSession { id, session } => w.http_refresh_session(*id, session),
        Route::DeleteSession { id, session } => w.http_delete_session(*id, session),
        Route::GetMessage { .. } => unreachable!("GetMessage is long-polled by serve()"),
        Route::InstallationToken { .. } => unreachable!("installation tokens are served by serve()"),
        Route::CreateRunnerSession => unreachable!("runner sessions are served by serve()"),
        Route::RegisterRunner => unreachable!("registrations are served by serve_in()"),
        Route::DeleteMessage { id, message_id } => w.http_delete_message(*id, *message_id),
        Route::AcquireJobs { id } => {
            with_json(body, |ids: Vec<i64>| Reply::json(200, &ItemList::of(w.acquire_jobs(*id, &ids))))
        }
        Route::GetAcquirableJobs { id } => w.http_acquirable_jobs(*id),
        Route::GenerateJitConfig { id } => {
            with_json(body, |setting| w.http_generate_jit_config(*id, &setting))
        }
        Route::GetRunner { runner_id } => w.http_get_runner(*runner_id),
        Route::GetRunnerByName => w.http_get_runner_by_name(query.text("agentName")),
        Route::RemoveRunner { runner_id } => {
            remove_runner_reply(w.remove_runner(*runner_id, RemovalApi::ScaleSet), *runner_id)
        }
    }
}

fn remove_runner_reply(outcome: RemoveOutcome, runner_id: i64) -> Reply {
    match outcome {
        RemoveOutcome::Removed | RemoveOutcome::RemovedAssigned | RemoveOutcome::Unknown => Reply::empty(204),
        RemoveOutcome::JobStillRunning | RemoveOutcome::Busy => Reply::exception(
            400,
            "JobStillRunningException",
            format!("Agent {runner_id} cannot be removed because a job is still running on it."),
        ),
        RemoveOutcome::NotFound => Reply::exception(
            404,
            "AgentNotFoundException",
            format!("No agent found with identifier {runner_id}."),
        ),
    }
}

fn with_json<T: DeserializeOwned>(body: &Bytes, serve: impl FnOnce(T) -> Reply) -> Reply {
    match serde_json::from_slice(body) {
        Ok(value) => serve(value),
        Err(e) => Reply::bad_request(format!("the request body is not valid: {e}")),
    }
}

/// Counts and records the request, then answers it or drops the connection.
fn finish(
    shared: &Shared,
    request: &Incoming,
    operation: Option<Operation>,
    received_ms: u64,
    delivered: Delivered,
) -> Answer {
    let mut world = shared.lock();
    let name = operation.map_or("unknown", Operation::as_str);
    let status = match &delivered.outcome {
        Failure::Answer(reply) => Some(reply.status),
        Failure::Drop => None,
    };
    world.count_request(name, status.unwrap_or(0));
    world.record.emit(GitHubCall {
        method: request.method.to_string(),
        path: request.path.clone(),
        operation: name,
        received_ms,
        served: delivered.served,
        status,
    });
    match delivered.outcome {
        Failure::Answer(reply) => {
            let activity_id = tokens::uuid(world.seed, "activity", world.next_number());
            Ok(reply.into_response(&activity_id))
        }
        Failure::Drop => Err(ConnectionDropped),
    }
}

/// A request's query parameters.
struct Query(Vec<(String, String)>);

impl Query {
    fn parse(query: &str) -> Query {
        Query(form_urlencoded::parse(query.as_bytes()).into_owned().collect())
    }

    fn text(&self, key: &str) -> &str {
        self.0.iter().find(|(k, _)| k == key).map_or("", |(_, v)| v.as_str())
    }

    fn number<T: std::str::FromStr>(&self, key: &str) -> Option<T> {
        self.text(key).parse().ok()
    }
}
