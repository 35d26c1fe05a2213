//! The golden cases in `fixtures/github/` and a stub GitHub that plays them back.
//!
//! A [`Stub`] is given the cases a call should produce, in order. For each request it checks the
//! method, host, path, query, the headers the case lists and the JSON body against the next case,
//! then answers with that case's status and body. A mismatch panics with the case's name, which fails
//! the test that made the call.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

use arc_controller::github::{ActionsClient, AppCredentials, Credentials, RetryPolicy};
use arc_controller::runtime::metrics::Metrics;
use arc_controller::{Clock, SharedClock};
use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use jiff::Timestamp;
use serde_json::Value;

/// The `githubConfigUrl` every case is recorded for.
pub(super) const CONFIG_URL: &str = "https://github.com/octo-org";
/// The GitHub App of the app cases: its id, installation and (test-only) private key.
pub(super) const APP_ID: &str = "123456";
pub(super) const APP_INSTALLATION_ID: i64 = 987654;
pub(super) const APP_PRIVATE_KEY: &str = include_str!("../../../fixtures/github/app-private-key.pem");

/// One golden case: `{"operation", "source", "request", "response"}`.
#[derive(Debug, Clone)]
pub(super) struct Case {
    pub name: String,
    pub json: Value,
}

impl Case {
    /// Loads `fixtures/github/<name>.json`.
    pub(super) fn load(name: &str) -> Case {
        let path = format!("{}/../fixtures/github/{name}.json", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let json: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
        Case { name: name.to_string(), json }
    }

    pub(super) fn request(&self) -> &Value {
        &self.json["request"]
    }

    pub(super) fn response_body(&self) -> &Value {
        &self.json["response"]["body"]
    }

    /// A string at `pointer` in the case (`/response/body/sessionId`).
    pub(super) fn text(&self, pointer: &str) -> String {
        let value = self.json.pointer(pointer).unwrap_or_else(|| panic!("{}: no {pointer}", self.name));
        value.as_str().unwrap_or_else(|| panic!("{}: {pointer} is not a string", self.name)).to_string()
    }
}

/// A stub GitHub answering from `cases`, in order.
#[derive(Clone)]
pub(super) struct Stub {
    pending: Arc<Mutex<VecDeque<Case>>>,
}

impl Stub {
    pub(super) fn new(names: &[&str]) -> Stub {
        Stub { pending: Arc::new(Mutex::new(names.iter().map(|n| Case::load(n)).collect())) }
    }

    /// The cases a call must go through to reach the Actions service: the registration token, its
    /// exchange for the admin token, then `names`.
    pub(super) fn via_admin(names: &[&str]) -> Stub {
        let mut all = vec!["registration-token", "admin-token"];
        all.extend_from_slice(names);
        Stub::new(&all)
    }

    /// Panics unless every case has been requested.
    pub(super) fn assert_done(&self) {
        let left: Vec<String> = self.pending.lock().unwrap().iter().map(|c| c.name.clone()).collect();
        assert!(left.is_empty(), "cases never requested: {left:?}");
    }

    /// A production client over this stub, without retries, at a fixed time before every token expires.
    pub(super) fn client(&self) -> ActionsClient {
        let pat = Case::load("registration-token").text("/request/headers/Authorization");
        let token = pat.strip_prefix("Bearer ").expect("a bearer token").to_string();
        self.client_with(Credentials::Token(token))
    }

    /// [`Stub::client`] authenticating as the cases' GitHub App installation.
    pub(super) fn app_client(&self) -> ActionsClient {
        let app = AppCredentials::new(APP_ID, APP_INSTALLATION_ID, APP_PRIVATE_KEY).expect("the fixture key");
        self.client_with(Credentials::App(app))
    }

    fn client_with(&self, credentials: Credentials) -> ActionsClient {
        let service = tower::service_fn({
            let stub = self.clone();
            move |request: Request<Full<Bytes>>| {
                let stub = stub.clone();
                async move { Ok::<_, std::convert::Infallible>(stub.answer(request).await) }
            }
        });
        let clock: SharedClock = Arc::new(FixedClock);
        ActionsClient::new(service, CONFIG_URL, credentials, clock, Metrics::new())
            .expect("a valid client")
            .with_retry_policy(RetryPolicy::none())
    }

    async fn answer(&self, request: Request<Full<Bytes>>) -> Response<Full<Bytes>> {
        let case = self.pending.lock().unwrap().pop_front();
        let case =
            case.unwrap_or_else(|| panic!("unexpected request {} {}", request.method(), request.uri()));
        check_request(&case, request).await;
        respond(&case)
    }
}

async fn check_request(case: &Case, request: Request<Full<Bytes>>) {
    let (parts, body) = request.into_parts();
    let want = case.request();
    let name = &case.name;
    assert_eq!(parts.method.as_str(), want["method"], "{name}: method");
    assert_eq!(parts.uri.host(), want["host"].as_str(), "{name}: host");
    assert_eq!(parts.uri.path(), want["path"], "{name}: path");
    assert_eq!(query(parts.uri.query()), string_map(&want["query"]), "{name}: query");
    for (header, value) in want["headers"].as_object().into_iter().flatten() {
        let sent = parts.headers.get(header.as_str()).and_then(|v| v.to_str().ok());
        assert_eq!(sent, value.as_str(), "{name}: header {header}");
    }
    let bytes = body.collect().await.expect("a full body").to_bytes();
    let sent: Value =
        if bytes.is_empty() { Value::Null } else { serde_json::from_slice(&bytes).expect("a JSON body") };
    assert_eq!(sent, want["body"], "{name}: body");
}

fn respond(case: &Case) -> Response<Full<Bytes>> {
    let status = case.json["response"]["status"].as_u64().expect("a status");
    let body = case.response_body();
    let mut response = Response::builder().status(u16::try_from(status).expect("a u16 status"));
    let bytes = if body.is_null() {
        Bytes::new()
    } else {
        response = response.header(http::header::CONTENT_TYPE, "application/json; charset=utf-8");
        Bytes::from(serde_json::to_vec(body).expect("JSON"))
    };
    response.body(Full::new(bytes)).expect("a response")
}

fn query(raw: Option<&str>) -> BTreeMap<String, String> {
    form_urlencoded::parse(raw.unwrap_or("").as_bytes()).into_owned().collect()
}

fn string_map(value: &Value) -> BTreeMap<String, String> {
    let object = value.as_object().expect("query is an object");
    object
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().expect("query values are strings").to_string()))
        .collect()
}

/// 2026-01-01T00:00:00Z: after no case's recording, before every token's expiry.
struct FixedClock;

impl Clock for FixedClock {
    fn now(&self) -> Timestamp {
        Timestamp::constant(1_767_225_600, 0)
    }
}
