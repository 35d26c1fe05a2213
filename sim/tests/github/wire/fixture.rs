//! Playing a golden case of `fixtures/github/` against the fake: a [`WireRig`] (the fake, its tower
//! service, an admin token) sets up state with raw HTTP, then sends the case's request with the ids,
//! credentials and body the state calls for ([`Bind`]) and compares the answer with the case's.

use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use tower::ServiceExt;

use arc_sim::faults::FaultPlan;
use arc_sim::github::{
    FakeGitHub, GitHubApp, GitHubConfig, GitHubService, JobResult, JobSpec, RunnerSession,
};
use arc_sim::record::Recorder;
use arc_sim::{Seed, SimClock, TraceMode};

use super::shape;

/// The REST scope the cases are recorded for.
pub(super) const SCOPE: &str = "/orgs/octo-org";
/// A personal access token (the fake accepts any).
pub(super) const PAT: &str = "ghp_wire";
/// The scale set, runner group and runner names the cases use.
pub(super) const SCALE_SET: &str = "arc-runner-set";
pub(super) const RUNNER: &str = "arc-runner-set-tq2wx-runner-8k4lz";
pub(super) const LEGACY_RUNNER: &str = "example-runnerdeploy-wz4sj";
pub(super) const OWNER: &str = "arc-runner-set-754b578d-listener";

/// The one status the fake answers differently from a case, and why that stays: the trace records
/// each answer's status, so changing it would change every run's trace hash.
/// (case, the case's status, the fake's status)
const KNOWN_STATUS_DIFFERENCES: &[(&str, u16, u16)] = &[
    // Both Go test servers answer the admin-token exchange 201; the clients accept any 2xx.
    ("admin-token", 201, 200),
];

/// One golden case.
pub(super) struct Case {
    pub name: String,
    pub json: Value,
}

impl Case {
    pub(super) fn load(name: &str) -> Case {
        let path = format!("{}/../fixtures/github/{name}.json", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        Case { name: name.to_string(), json: serde_json::from_str(&text).expect("a JSON case") }
    }

    fn text(&self, pointer: &str) -> &str {
        self.json
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("{}: {pointer}", self.name))
    }
}

/// What stands in, in the fake, for the case's ids, credential and body.
#[derive(Debug, Clone, Default)]
pub(super) struct Bind {
    pub scale_set: Option<i64>,
    pub session: Option<String>,
    pub message: Option<i64>,
    pub runner: Option<i64>,
    /// The token after the `Authorization` scheme the case uses.
    pub credential: String,
    /// A body replacing the case's (request ids the fake minted).
    pub body: Option<Value>,
    /// Keys whose values the fake mints in this case, besides `shape::MINTED`.
    pub also_minted: &'static [&'static str],
}

impl Bind {
    pub(super) fn credential(credential: impl Into<String>) -> Bind {
        Bind { credential: credential.into(), ..Bind::default() }
    }
}

/// A fake GitHub configured like the cases' tenant, with an admin token.
pub(super) struct WireRig {
    pub fake: FakeGitHub,
    service: GitHubService,
    pub admin: String,
}

/// The service URL of the admin-token case and the queue base of the create-session case.
fn tenant_urls() -> (String, String) {
    let service_url = Case::load("admin-token").text("/response/body/url").to_string();
    let session = Case::load("create-session");
    let queue = session.text("/response/body/messageQueueUrl");
    let broker = &queue[..queue.find("_apis/").expect("a queue URL under _apis/")];
    (service_url, broker.to_string())
}

impl WireRig {
    pub(super) async fn new() -> WireRig {
        let clock = SimClock::start();
        let trace = Recorder::new(clock, TraceMode::HashOnly);
        let (service_url, broker_url) = tenant_urls();
        let runner_groups = vec!["arc-runners".to_string(), "arc-runners-gpu".to_string()];
        let app = GitHubApp {
            app_id: "123456".into(),
            installation_ids: vec![987654],
            public_key_pem: include_str!("../../../../fixtures/github/app-public-key.pem").into(),
        };
        let config = GitHubConfig {
            service_url,
            broker_url,
            runner_groups,
            apps: vec![app],
            ..GitHubConfig::instant()
        };
        let fake = FakeGitHub::new(Seed(1), clock, trace, config, &FaultPlan::none()).expect("a fake");
        let service = fake.service();
        let mut rig = WireRig { fake, service, admin: String::new() };
        let registration = rig.fake.issue_registration_token(SCOPE).token;
        let body = json!({"url": "https://github.com/octo-org", "runner_event": "register"});
        let (_, answer) = rig
            .call("POST", "/actions/runner-registration", &format!("RemoteAuth {registration}"), Some(body))
            .await;
        rig.admin = answer["token"].as_str().expect("an admin token").to_string();
        rig
    }

    /// Sends one request to `https://api.github.com{path}` or to an absolute `path`.
    pub(super) async fn call(
        &self,
        method: &str,
        path: &str,
        auth: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let uri = if path.starts_with("https://") {
            path.to_string()
        } else {
            format!("https://api.github.com{path}")
        };
        let request = Request::builder().method(method).uri(uri).header("Authorization", auth);
        let bytes = body.map_or_else(Bytes::new, |b| Bytes::from(b.to_string()));
        self.send(request.body(Full::new(bytes)).expect("a request")).await
    }

    async fn send(&self, request: Request<Full<Bytes>>) -> (u16, Value) {
        let response = self.service.clone().oneshot(request).await.expect("the fake always answers");
        let status = response.status().as_u16();
        let bytes = response.into_body().collect().await.expect("a body").to_bytes();
        let body = if bytes.is_empty() { Value::Null } else { serde_json::from_slice(&bytes).expect("JSON") };
        (status, body)
    }

    /// A call to the Actions service with the admin token.
    pub(super) async fn service_call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let url = format!("{}{path}", self.fake.config().service_url);
        self.call(method, &url, &format!("Bearer {}", self.admin), body).await
    }

    /// The cases' scale set, in runner group 2 (`arc-runners`).
    pub(super) fn scale_set(&self) -> i64 {
        self.fake.create_scale_set(SCALE_SET, 2, &[SCALE_SET])
    }

    /// Opens a session on `scale_set`: its id and queue token.
    pub(super) async fn session(&self, scale_set: i64) -> (String, String) {
        let path = format!("_apis/runtime/runnerscalesets/{scale_set}/sessions");
        let (status, session) = self.service_call("POST", &path, Some(json!({"ownerName": OWNER}))).await;
        assert_eq!(status, 200, "{session}");
        let text = |key: &str| session[key].as_str().expect("a session field").to_string();
        (text("sessionId"), text("messageQueueAccessToken"))
    }

    /// Registers runner `name` in `scale_set` by JIT config: its id and the config.
    pub(super) async fn register(&self, scale_set: i64, name: &str) -> (i64, String) {
        let path = format!("_apis/runtime/runnerscalesets/{scale_set}/generatejitconfig");
        let body = json!({"name": name, "workFolder": "_work"});
        let (status, jit) = self.service_call("POST", &path, Some(body)).await;
        assert_eq!(status, 200, "{jit}");
        (
            jit["runner"]["id"].as_i64().expect("an id"),
            jit["encodedJITConfig"].as_str().expect("a config").into(),
        )
    }

    /// Registers and connects runner `name`.
    pub(super) async fn runner(&self, scale_set: i64, name: &str) -> (i64, RunnerSession) {
        let (id, config) = self.register(scale_set, name).await;
        (id, self.fake.connect_runner(&config).expect("the runner connects"))
    }

    /// Submits the cases' job; returns its request id.
    pub(super) fn job(&self, labels: &[&str]) -> i64 {
        let mut spec = JobSpec::simple(labels, 5_000);
        spec.owner = "octo-org".into();
        spec.repository = "octo-repo".into();
        spec.workflow_ref = "octo-org/octo-repo/.github/workflows/ci.yml@refs/heads/main".into();
        spec.result = JobResult::Succeeded;
        self.fake.submit_job(spec)
    }

    /// Acquires `request_id` for `scale_set` with `queue_token`.
    pub(super) async fn acquire(&self, scale_set: i64, queue_token: &str, request_id: i64) {
        let url = format!(
            "{}_apis/runtime/runnerscalesets/{scale_set}/acquirejobs",
            self.fake.config().service_url
        );
        let (status, acquired) =
            self.call("POST", &url, &format!("Bearer {queue_token}"), Some(json!([request_id]))).await;
        assert_eq!((status, acquired["value"].clone()), (200, json!([request_id])));
    }

    /// Sends case `name` with `bind` and checks the fake's answer against the case's.
    pub(super) async fn check(&self, name: &str, bind: Bind) {
        let case = Case::load(name);
        let (status, body) = self.send(request(&case, &bind)).await;
        let want = u16::try_from(case.json["response"]["status"].as_u64().expect("a status")).expect("a u16");
        let allowed = KNOWN_STATUS_DIFFERENCES.iter().find(|(n, _, _)| *n == name).map_or(want, |d| d.2);
        assert_eq!(status, allowed, "{name}: status; answer {body}");
        let differences = shape::differences(&case.json["response"]["body"], &body, bind.also_minted);
        assert!(
            differences.is_empty(),
            "{name}: the fake's answer differs from the case:\n{}",
            differences.join("\n")
        );
    }
}

/// The case's request with `bind` applied: ids in the path and query, the credential, the body.
fn request(case: &Case, bind: &Bind) -> Request<Full<Bytes>> {
    let want = &case.json["request"];
    let path = rebind_path(want["path"].as_str().expect("a path"), bind);
    let query = rebind_query(&want["query"], bind);
    let host = want["host"].as_str().expect("a host");
    let uri = if query.is_empty() {
        format!("https://{host}{path}")
    } else {
        format!("https://{host}{path}?{query}")
    };
    let mut request = Request::builder().method(want["method"].as_str().expect("a method")).uri(uri);
    for (name, value) in want["headers"].as_object().into_iter().flatten() {
        let value = value.as_str().expect("a header value");
        let value = match (name.as_str(), value.split_once(' ')) {
            ("Authorization", Some((scheme, _))) => format!("{scheme} {}", bind.credential),
            _ => value.to_string(),
        };
        request = request.header(name.as_str(), value);
    }
    let body = bind.body.as_ref().unwrap_or(&want["body"]);
    let bytes = if body.is_null() { Bytes::new() } else { Bytes::from(body.to_string()) };
    request.body(Full::new(bytes)).expect("a request")
}

/// The segment after each of these names an object: the fake's id replaces the case's.
fn rebind_path(path: &str, bind: &Bind) -> String {
    let mut out: Vec<String> = Vec::new();
    for segment in path.split('/') {
        let previous = out.last().map(String::as_str);
        let numeric = segment.parse::<i64>().is_ok();
        let replacement = match previous {
            Some("runnerscalesets") if numeric => bind.scale_set.map(|id| id.to_string()),
            Some("sessions") => bind.session.clone(),
            Some("messages") if numeric => bind.message.map(|id| id.to_string()),
            Some("agents" | "runners") if numeric => bind.runner.map(|id| id.to_string()),
            _ => None,
        };
        out.push(replacement.unwrap_or_else(|| segment.to_string()));
    }
    out.join("/")
}

fn rebind_query(query: &Value, bind: &Bind) -> String {
    let mut form = form_urlencoded::Serializer::new(String::new());
    for (key, value) in query.as_object().into_iter().flatten() {
        let value = match (key.as_str(), &bind.session) {
            ("sessionId", Some(session)) => session.clone(),
            _ => value.as_str().expect("query values are strings").to_string(),
        };
        form.append_pair(key, &value);
    }
    form.finish()
}
