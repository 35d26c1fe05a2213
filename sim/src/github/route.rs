//! Request routing: which [`Operation`] a method and path name, with the ids in the path.
//!
//! The Actions service paths are recognised by their `_apis/` suffix whatever the host and tenant
//! prefix (the service URL and the broker URL both end up here); everything else is GitHub's REST API,
//! with GitHub Enterprise Server's `/api/v3` prefix stripped.

use http::Method;

use super::operation::Operation;

/// A recognised request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    /// `POST {scope}/actions/runners/registration-token`.
    RegistrationToken { scope: String },
    /// `POST /actions/runner-registration`.
    AdminToken,
    /// `POST /app/installations/{id}/access_tokens`.
    InstallationToken { installation_id: i64 },
    /// `GET {scope}/actions/runners`.
    ListRunners { scope: String },
    /// `DELETE {scope}/actions/runners/{id}`.
    DeleteRunner { scope: String, runner_id: i64 },
    /// `GET _apis/runtime/runnergroups/`.
    GetRunnerGroup,
    /// `GET _apis/runtime/runnerscalesets?runnerGroupId=&name=`.
    FindScaleSet,
    /// `GET _apis/runtime/runnerscalesets/{id}`.
    GetScaleSet { id: i64 },
    /// `POST _apis/runtime/runnerscalesets`.
    CreateScaleSet,
    /// `PATCH _apis/runtime/runnerscalesets/{id}`.
    UpdateScaleSet { id: i64 },
    /// `DELETE _apis/runtime/runnerscalesets/{id}`.
    DeleteScaleSet { id: i64 },
    /// `POST …/{id}/sessions`.
    CreateSession { id: i64 },
    /// `PATCH …/{id}/sessions/{session}`.
    RefreshSession { id: i64, session: String },
    /// `DELETE …/{id}/sessions/{session}`.
    DeleteSession { id: i64, session: String },
    /// `GET …/{id}/messages` (the message queue URL).
    GetMessage { id: i64 },
    /// `DELETE …/{id}/messages/{message}`.
    DeleteMessage { id: i64, message_id: i64 },
    /// `POST …/{id}/acquirejobs`.
    AcquireJobs { id: i64 },
    /// `GET …/{id}/acquirablejobs`.
    GetAcquirableJobs { id: i64 },
    /// `POST …/{id}/generatejitconfig`.
    GenerateJitConfig { id: i64 },
    /// `GET _apis/distributedtask/pools/0/agents/{id}`.
    GetRunner { runner_id: i64 },
    /// `GET _apis/distributedtask/pools/0/agents?agentName=`.
    GetRunnerByName,
    /// `DELETE _apis/distributedtask/pools/0/agents/{id}`.
    RemoveRunner { runner_id: i64 },
    /// `POST _apis/distributedtask/pools/{pool}/sessions`: a runner process's session.
    CreateRunnerSession,
    /// `POST /actions/runners/register`: `config.sh` registers a runner.
    RegisterRunner,
}

/// How a route is authorised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Auth {
    /// `Bearer <personal access token>` (REST).
    Pat,
    /// `RemoteAuth <registration token>`.
    RegistrationToken,
    /// `Bearer <GitHub App JWT>`.
    AppJwt,
    /// `Bearer <admin JWT>` (Actions service).
    Admin,
    /// `Bearer <queue token>` of a session of scale set `.0`.
    Queue(i64),
    /// `Bearer <runner credential>`: a runner process. Simplification: it presents the credential of
    /// its JIT config or `config.sh` registration itself, with no OAuth token exchange first.
    Runner,
}

impl Route {
    /// Routes `method path`, or `None` for anything the service does not serve.
    pub(super) fn parse(method: &Method, path: &str) -> Option<Route> {
        let path = path.strip_prefix("/api/v3").unwrap_or(path);
        match path.split_once("/_apis/") {
            Some((_, rest)) => Route::actions(method, &segments(rest)),
            None => Route::rest(method, &segments(path)),
        }
    }

    fn rest(method: &Method, s: &[&str]) -> Option<Route> {
        if s == ["actions", "runner-registration"] {
            return (method == Method::POST).then_some(Route::AdminToken);
        }
        if s == ["actions", "runners", "register"] {
            return (method == Method::POST).then_some(Route::RegisterRunner);
        }
        if let ["app", "installations", id, "access_tokens"] = s {
            let installation_id = id.parse().ok()?;
            return (method == Method::POST).then_some(Route::InstallationToken { installation_id });
        }
        let (scope_len, rest) = match s.first()? {
            &"orgs" | &"enterprises" => (2, s.get(2..)?),
            &"repos" => (3, s.get(3..)?),
            _ => return None,
        };
        let scope = format!("/{}", s[..scope_len].join("/"));
        match (method.clone(), rest) {
            (Method::POST, ["actions", "runners", "registration-token"]) => {
                Some(Route::RegistrationToken { scope })
            }
            (Method::GET, ["actions", "runners"]) => Some(Route::ListRunners { scope }),
            (Method::DELETE, ["actions", "runners", id]) => {
                Some(Route::DeleteRunner { scope, runner_id: id.parse().ok()? })
            }
            _ => None,
        }
    }

    fn actions(method: &Method, s: &[&str]) -> Option<Route> {
        match s {
            ["runtime", "runnergroups"] if method == Method::GET => Some(Route::GetRunnerGroup),
            ["runtime", "runnerscalesets", rest @ ..] => Route::scale_sets(method, rest),
            ["distributedtask", "pools", "0", "agents", rest @ ..] => Route::agents(method, rest),
            ["distributedtask", "pools", pool, "sessions"] if method == Method::POST => {
                pool.parse::<i64>().ok().map(|_| Route::CreateRunnerSession)
            }
            _ => None,
        }
    }

    fn scale_sets(method: &Method, s: &[&str]) -> Option<Route> {
        let id = |text: &str| text.parse::<i64>().ok();
        Some(match (method.clone(), s) {
            (Method::GET, []) => Route::FindScaleSet,
            (Method::POST, []) => Route::CreateScaleSet,
            (Method::GET, [i]) => Route::GetScaleSet { id: id(i)? },
            (Method::PATCH, [i]) => Route::UpdateScaleSet { id: id(i)? },
            (Method::DELETE, [i]) => Route::DeleteScaleSet { id: id(i)? },
            (Method::POST, [i, "sessions"]) => Route::CreateSession { id: id(i)? },
            (Method::PATCH, [i, "sessions", sid]) => {
                Route::RefreshSession { id: id(i)?, session: (*sid).into() }
            }
            (Method::DELETE, [i, "sessions", sid]) => {
                Route::DeleteSession { id: id(i)?, session: (*sid).into() }
            }
            (Method::GET, [i, "messages"]) => Route::GetMessage { id: id(i)? },
            (Method::DELETE, [i, "messages", m]) => Route::DeleteMessage { id: id(i)?, message_id: id(m)? },
            (Method::POST, [i, "acquirejobs"]) => Route::AcquireJobs { id: id(i)? },
            (Method::GET, [i, "acquirablejobs"]) => Route::GetAcquirableJobs { id: id(i)? },
            (Method::POST, [i, "generatejitconfig"]) => Route::GenerateJitConfig { id: id(i)? },
            _ => return None,
        })
    }

    fn agents(method: &Method, s: &[&str]) -> Option<Route> {
        Some(match (method.clone(), s) {
            (Method::GET, []) => Route::GetRunnerByName,
            (Method::GET, [i]) => Route::GetRunner { runner_id: i.parse().ok()? },
            (Method::DELETE, [i]) => Route::RemoveRunner { runner_id: i.parse().ok()? },
            _ => return None,
        })
    }

    /// The operation, as metrics, traces and fault plans name it.
    pub(super) fn operation(&self) -> Operation {
        match self {
            Route::RegistrationToken { .. } => Operation::RegistrationToken,
            Route::AdminToken => Operation::AdminToken,
            Route::InstallationToken { .. } => Operation::InstallationToken,
            Route::ListRunners { .. } => Operation::ListRunners,
            Route::DeleteRunner { .. } => Operation::DeleteRunner,
            Route::GetRunnerGroup => Operation::GetRunnerGroup,
            Route::FindScaleSet | Route::GetScaleSet { .. } => Operation::GetScaleSet,
            Route::CreateScaleSet => Operation::CreateScaleSet,
            Route::UpdateScaleSet { .. } => Operation::UpdateScaleSet,
            Route::DeleteScaleSet { .. } => Operation::DeleteScaleSet,
            Route::CreateSession { .. } => Operation::CreateSession,
            Route::RefreshSession { .. } => Operation::RefreshSession,
            Route::DeleteSession { .. } => Operation::DeleteSession,
            Route::GetMessage { .. } => Operation::GetMessage,
            Route::DeleteMessage { .. } => Operation::DeleteMessage,
            Route::AcquireJobs { .. } => Operation::AcquireJobs,
            Route::GetAcquirableJobs { .. } => Operation::GetAcquirableJobs,
            Route::GenerateJitConfig { .. } => Operation::GenerateJitConfig,
            Route::GetRunner { .. } => Operation::GetRunner,
            Route::GetRunnerByName => Operation::GetRunnerByName,
            Route::RemoveRunner { .. } => Operation::RemoveRunner,
            Route::CreateRunnerSession => Operation::CreateRunnerSession,
            Route::RegisterRunner => Operation::RegisterRunner,
        }
    }

    /// How the route is authorised.
    pub(super) fn auth(&self) -> Auth {
        match self {
            Route::RegistrationToken { .. } | Route::ListRunners { .. } | Route::DeleteRunner { .. } => {
                Auth::Pat
            }
            Route::AdminToken | Route::RegisterRunner => Auth::RegistrationToken,
            Route::InstallationToken { .. } => Auth::AppJwt,
            Route::CreateRunnerSession => Auth::Runner,
            Route::GetMessage { id } | Route::DeleteMessage { id, .. } | Route::AcquireJobs { id } => {
                Auth::Queue(*id)
            }
            _ => Auth::Admin,
        }
    }
}

fn segments(path: &str) -> Vec<&str> {
    path.split('/').filter(|s| !s.is_empty()).collect()
}

/// The token of a request's `Authorization` header under `scheme` (`Bearer`, `RemoteAuth`), if it has one.
pub(crate) fn credential<'h>(headers: &'h http::HeaderMap, scheme: &str) -> Option<&'h str> {
    let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
    let (given, token) = value.split_once(' ')?;
    (given.eq_ignore_ascii_case(scheme) && !token.trim().is_empty()).then_some(token.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(method: Method, path: &str) -> Option<&'static str> {
        Route::parse(&method, path).map(|r| r.operation().as_str())
    }

    #[test]
    fn actions_service_paths_route_whatever_the_tenant_prefix() {
        assert_eq!(op(Method::GET, "/arcsim/_apis/runtime/runnergroups/"), Some("get-runner-group"));
        assert_eq!(op(Method::GET, "/t/_apis/runtime/runnerscalesets"), Some("get-scale-set"));
        assert_eq!(
            op(Method::DELETE, "/t/_apis/runtime/runnerscalesets/3/sessions/abc"),
            Some("delete-session")
        );
        assert_eq!(
            op(Method::DELETE, "/b/_apis/runtime/runnerscalesets/3/messages/9"),
            Some("delete-message")
        );
        assert_eq!(op(Method::DELETE, "/t/_apis/distributedtask/pools/0/agents/12"), Some("remove-runner"));
        assert_eq!(op(Method::GET, "/t/_apis/distributedtask/pools/0/agents"), Some("get-runner-by-name"));
        assert_eq!(
            op(Method::POST, "/t/_apis/distributedtask/pools/1/sessions"),
            Some("create-runner-session")
        );
        assert_eq!(op(Method::POST, "/t/_apis/distributedtask/pools/x/sessions"), None);
        assert_eq!(op(Method::PUT, "/t/_apis/runtime/runnerscalesets/3"), None);
        assert_eq!(op(Method::GET, "/t/_apis/runtime/runnerscalesets/x"), None);
    }

    #[test]
    fn rest_paths_route_for_every_scope_and_on_enterprise_server() {
        let token = Route::parse(&Method::POST, "/repos/o/r/actions/runners/registration-token");
        assert_eq!(token, Some(Route::RegistrationToken { scope: "/repos/o/r".into() }));
        let delete = Route::parse(&Method::DELETE, "/api/v3/orgs/o/actions/runners/5");
        assert_eq!(delete, Some(Route::DeleteRunner { scope: "/orgs/o".into(), runner_id: 5 }));
        assert_eq!(op(Method::GET, "/enterprises/e/actions/runners"), Some("list-runners"));
        assert_eq!(op(Method::POST, "/actions/runner-registration"), Some("admin-token"));
        let register = Route::parse(&Method::POST, "/api/v3/actions/runners/register").unwrap();
        assert_eq!(
            (register.operation().as_str(), register.auth()),
            ("register-runner", Auth::RegistrationToken)
        );
        assert_eq!(op(Method::GET, "/actions/runners/register"), None);
        let app = Route::parse(&Method::POST, "/api/v3/app/installations/42/access_tokens");
        assert_eq!(app, Some(Route::InstallationToken { installation_id: 42 }));
        assert_eq!(app.unwrap().auth(), Auth::AppJwt);
        assert_eq!(op(Method::GET, "/users/o"), None);
        assert_eq!(Route::parse(&Method::GET, "/orgs/o/actions/runners").unwrap().auth(), Auth::Pat);
    }
}
