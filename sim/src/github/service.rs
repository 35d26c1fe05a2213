//! [`GitHubService`]: the fake as a `tower::Service` speaking the wire format of GitHub's REST API and
//! the Actions service, so the production `ActionsClient` drives it unchanged.
//!
//! Each request is routed, passed through the fault layer, authorised, served under the world lock
//! (GetMessage: long-polled), counted by operation and status, and traced as
//! `github http <METHOD> <path> <operation> <status>`.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::request::Parts;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use serde::de::DeserializeOwned;

use super::Shared;
use super::assign::RemovalApi;
use super::auth::Authorized;
use super::events::GitHubCall;
use super::events::RemoveOutcome;
use super::faults::FaultDecision;
use super::operation::Operation;
use super::reply::Reply;
use super::route::Route;
use super::sessions;
use super::state::World;
use super::tokens;
use super::wire::{ItemList, SessionRequest};

/// An error of a request body's stream.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

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

impl<B> tower::Service<Request<B>> for GitHubService
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError> + Send,
{
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let shared = Arc::clone(&self.shared);
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let response = match body.collect().await {
                Ok(collected) => handle(&shared, &parts, collected.to_bytes()).await,
                Err(_) => {
                    finish(&shared, &parts, None, Reply::bad_request("the request body could not be read"))
                }
            };
            Ok(response)
        })
    }
}

async fn handle(shared: &Arc<Shared>, parts: &Parts, body: Bytes) -> Response<Full<Bytes>> {
    let Some(route) = Route::parse(&parts.method, parts.uri.path()) else {
        return finish(shared, parts, None, Reply::rest_error(404, "Not Found"));
    };
    let now_ms = shared.lock().now_ms();
    let decision = shared.faults.lock().unwrap_or_else(|p| p.into_inner()).decide(route.operation(), now_ms);
    let reply = match decision {
        Some(FaultDecision::Answer(reply)) => reply,
        Some(FaultDecision::Delay(delay)) => {
            tokio::time::sleep(delay).await;
            serve(shared, &route, parts, &body).await
        }
        None => serve(shared, &route, parts, &body).await,
    };
    finish(shared, parts, Some(route.operation()), reply)
}

async fn serve(shared: &Arc<Shared>, route: &Route, parts: &Parts, body: &Bytes) -> Reply {
    let authorized = match shared.lock().authorize(route.auth(), &parts.headers) {
        Ok(authorized) => authorized,
        Err(reply) => return reply,
    };
    if let (Route::InstallationToken { installation_id }, Authorized::App { jwt }) = (route, &authorized) {
        return shared.mutate(|world| world.http_installation_token(*installation_id, jwt));
    }
    if let (Route::GetMessage { id }, Authorized::Session { session_id }) = (route, &authorized) {
        let query = parts.uri.query().unwrap_or("");
        return sessions::get_message(shared, *id, session_id, query, &parts.headers).await;
    }
    shared.mutate(|world| dispatch(world, route, parts, body))
}

fn dispatch(w: &mut World, route: &Route, parts: &Parts, body: &Bytes) -> Reply {
    let query = Query::parse(parts.uri.query());
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
        Route::DeleteMessage { id, message_id } => w.http_delete_message(*id, *message_id),
        Route::AcquireJobs { id } => {
            with_json(body, |ids: Vec<i64>| Reply::json(200, &ItemList::of(w.acquire_jobs(*id, &ids))))
        }
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
        RemoveOutcome::Removed | RemoveOutcome::Unknown => Reply::empty(204),
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

fn finish(
    shared: &Shared,
    parts: &Parts,
    operation: Option<Operation>,
    reply: Reply,
) -> Response<Full<Bytes>> {
    let mut world = shared.lock();
    let name = operation.map_or("unknown", Operation::as_str);
    world.count_request(name, reply.status);
    let call = GitHubCall {
        method: parts.method.to_string(),
        path: parts.uri.path().to_string(),
        operation: name,
        status: reply.status,
    };
    world.record.emit(call);
    let activity_id = tokens::uuid(world.seed, "activity", world.next_number());
    reply.into_response(&activity_id)
}

/// A request's query parameters.
struct Query(Vec<(String, String)>);

impl Query {
    fn parse(query: Option<&str>) -> Query {
        Query(form_urlencoded::parse(query.unwrap_or("").as_bytes()).into_owned().collect())
    }

    fn text(&self, key: &str) -> &str {
        self.0.iter().find(|(k, _)| k == key).map_or("", |(_, v)| v.as_str())
    }

    fn number<T: std::str::FromStr>(&self, key: &str) -> Option<T> {
        self.text(key).parse().ok()
    }
}
