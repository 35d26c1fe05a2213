//! Golden wire cases (`fixtures/github/`) played against the fake: for each, the fake is put in the
//! state the case describes, the case's request is sent through its tower service, and its answer
//! must have the case's status, field names and JSON types (recursively, into a message's body),
//! with equal values wherever the state fixes them. A request body the fake cannot decode answers
//! 400 or leaves its mark in the echoed answer, so the fake's reading of each request is checked too.
//! The production client is checked against the same cases in `controller/tests/github_wire`.

mod fixture;
mod shape;

use arc_sim::github::JobResult;
use serde_json::json;

use fixture::{Bind, LEGACY_RUNNER, PAT, RUNNER, SCOPE, WireRig};

#[tokio::test(start_paused = true)]
async fn registration_token() {
    WireRig::new().await.check("registration-token", Bind::credential(PAT)).await;
}

#[tokio::test(start_paused = true)]
async fn installation_token_for_a_jwt_signed_with_the_apps_key() {
    // The case's JWT is the client's, signed with fixtures/github/app-private-key.pem; the fake
    // verifies it against app-public-key.pem at its clock (the same instant as the case's).
    let rig = WireRig::new().await;
    let case: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!(
            "{}/../fixtures/github/installation-token.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .expect("the case"),
    )
    .expect("JSON");
    let bearer = case["request"]["headers"]["Authorization"].as_str().expect("a bearer").to_string();
    let jwt = bearer.strip_prefix("Bearer ").expect("a JWT").to_string();
    rig.check("installation-token", Bind::credential(jwt.clone())).await;

    let mut forged = jwt.clone();
    forged.replace_range(forged.len() - 8.., "AAAAAAAA");
    let path = "/app/installations/987654/access_tokens";
    let (status, body) = rig.call("POST", path, &format!("Bearer {forged}"), None).await;
    assert_eq!(status, 401, "a JWT whose signature does not verify is refused: {body}");
    let (status, _) = rig.call("POST", "/app/installations/1/access_tokens", &bearer, None).await;
    assert_eq!(status, 404, "an installation of another app is not found");
}

#[tokio::test(start_paused = true)]
async fn registration_token_with_an_installation_token() {
    let rig = WireRig::new().await;
    let bearer = {
        let case = std::fs::read_to_string(format!(
            "{}/../fixtures/github/installation-token.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .expect("the case");
        let case: serde_json::Value = serde_json::from_str(&case).expect("JSON");
        case["request"]["headers"]["Authorization"].as_str().expect("a bearer").to_string()
    };
    let (status, token) = rig.call("POST", "/app/installations/987654/access_tokens", &bearer, None).await;
    assert_eq!(status, 201, "{token}");
    let installation_token = token["token"].as_str().expect("a token").to_string();
    assert!(installation_token.starts_with("ghs_"));
    rig.check("registration-token.app", Bind::credential(&installation_token)).await;
    let (status, _) = rig
        .call("POST", "/orgs/octo-org/actions/runners/registration-token", "Bearer ghs_unknown", None)
        .await;
    assert_eq!(status, 401, "an installation token the fake never issued is refused");
}

#[tokio::test(start_paused = true)]
async fn admin_token() {
    let rig = WireRig::new().await;
    let registration = rig.fake.issue_registration_token(SCOPE).token;
    rig.check("admin-token", Bind::credential(registration)).await;
}

#[tokio::test(start_paused = true)]
async fn get_runner_group() {
    let rig = WireRig::new().await;
    rig.check("get-runner-group", Bind::credential(&rig.admin)).await;
}

#[tokio::test(start_paused = true)]
async fn get_scale_set_by_name() {
    let rig = WireRig::new().await;
    rig.scale_set();
    rig.check("get-scale-set.by-name", Bind::credential(&rig.admin)).await;
}

#[tokio::test(start_paused = true)]
async fn get_scale_set_by_id() {
    let rig = WireRig::new().await;
    let set = rig.scale_set();
    rig.check("get-scale-set.by-id", Bind { scale_set: Some(set), ..Bind::credential(&rig.admin) }).await;
}

#[tokio::test(start_paused = true)]
async fn create_scale_set() {
    let rig = WireRig::new().await;
    rig.check("create-scale-set", Bind::credential(&rig.admin)).await;
}

#[tokio::test(start_paused = true)]
async fn update_scale_set() {
    let rig = WireRig::new().await;
    let set = rig.scale_set();
    rig.check("update-scale-set", Bind { scale_set: Some(set), ..Bind::credential(&rig.admin) }).await;
}

#[tokio::test(start_paused = true)]
async fn delete_scale_set() {
    let rig = WireRig::new().await;
    let set = rig.scale_set();
    rig.check("delete-scale-set", Bind { scale_set: Some(set), ..Bind::credential(&rig.admin) }).await;
}

#[tokio::test(start_paused = true)]
async fn create_session() {
    let rig = WireRig::new().await;
    let set = rig.scale_set();
    rig.check("create-session", Bind { scale_set: Some(set), ..Bind::credential(&rig.admin) }).await;
}

#[tokio::test(start_paused = true)]
async fn refresh_session() {
    let rig = WireRig::new().await;
    let set = rig.scale_set();
    let (session, _) = rig.session(set).await;
    let bind = Bind { scale_set: Some(set), session: Some(session), ..Bind::credential(&rig.admin) };
    rig.check("refresh-session", bind).await;
}

#[tokio::test(start_paused = true)]
async fn delete_session() {
    let rig = WireRig::new().await;
    let set = rig.scale_set();
    let (session, _) = rig.session(set).await;
    let bind = Bind { scale_set: Some(set), session: Some(session), ..Bind::credential(&rig.admin) };
    rig.check("delete-session", bind).await;
}

#[tokio::test(start_paused = true)]
async fn get_message_with_every_job_message_type() {
    let rig = WireRig::new().await;
    let set = rig.scale_set();
    let (session, queue_token) = rig.session(set).await;
    let request_id = rig.job(&["arc-runner-set"]);
    rig.acquire(set, &queue_token, request_id).await;
    let (_, process) = rig.runner(set, RUNNER).await;
    process.next_job().await.expect("the job starts on the runner");
    process.complete_job(JobResult::Succeeded).expect("the job completes");
    let bind = Bind { scale_set: Some(set), session: Some(session), ..Bind::credential(queue_token) };
    rig.check("get-message.job-messages", bind).await;
}

#[tokio::test(start_paused = true)]
async fn get_message_when_none_arrives() {
    let rig = WireRig::new().await;
    let set = rig.scale_set();
    let (session, queue_token) = rig.session(set).await;
    let bind = Bind { scale_set: Some(set), session: Some(session), ..Bind::credential(queue_token) };
    rig.check("get-message.empty", bind).await;
}

#[tokio::test(start_paused = true)]
async fn delete_message() {
    let rig = WireRig::new().await;
    let set = rig.scale_set();
    let (session, queue_token) = rig.session(set).await;
    rig.job(&["arc-runner-set"]);
    let queue = format!(
        "{}_apis/runtime/runnerscalesets/{set}/messages?sessionId={session}",
        rig.fake.config().broker_url
    );
    let (status, message) = rig.call("GET", &queue, &format!("Bearer {queue_token}"), None).await;
    assert_eq!(status, 200, "{message}");
    let bind = Bind {
        scale_set: Some(set),
        session: Some(session),
        message: message["messageId"].as_i64(),
        ..Bind::credential(queue_token)
    };
    rig.check("delete-message", bind).await;
}

#[tokio::test(start_paused = true)]
async fn acquire_jobs() {
    let rig = WireRig::new().await;
    let set = rig.scale_set();
    let (_, queue_token) = rig.session(set).await;
    let request_id = rig.job(&["arc-runner-set"]);
    let bind = Bind {
        scale_set: Some(set),
        body: Some(json!([request_id])),
        also_minted: &["value"],
        ..Bind::credential(queue_token)
    };
    rig.check("acquire-jobs", bind).await;
}

#[tokio::test(start_paused = true)]
async fn generate_jit_config() {
    let rig = WireRig::new().await;
    let set = rig.scale_set();
    rig.check("generate-jit-config", Bind { scale_set: Some(set), ..Bind::credential(&rig.admin) }).await;
}

#[tokio::test(start_paused = true)]
async fn generate_jit_config_for_a_taken_name() {
    let rig = WireRig::new().await;
    let set = rig.scale_set();
    rig.register(set, RUNNER).await;
    let bind = Bind { scale_set: Some(set), ..Bind::credential(&rig.admin) };
    rig.check("generate-jit-config.agent-exists", bind).await;
}

#[tokio::test(start_paused = true)]
async fn get_runner() {
    let rig = WireRig::new().await;
    let set = rig.scale_set();
    let (runner, _) = rig.register(set, RUNNER).await;
    rig.check("get-runner", Bind { runner: Some(runner), ..Bind::credential(&rig.admin) }).await;
}

#[tokio::test(start_paused = true)]
async fn get_runner_by_name() {
    let rig = WireRig::new().await;
    let set = rig.scale_set();
    rig.register(set, RUNNER).await;
    rig.check("get-runner-by-name", Bind::credential(&rig.admin)).await;
}

#[tokio::test(start_paused = true)]
async fn remove_runner() {
    let rig = WireRig::new().await;
    let set = rig.scale_set();
    let (runner, _) = rig.register(set, RUNNER).await;
    rig.check("remove-runner", Bind { runner: Some(runner), ..Bind::credential(&rig.admin) }).await;
}

#[tokio::test(start_paused = true)]
async fn remove_runner_with_a_job() {
    let rig = WireRig::new().await;
    let set = rig.scale_set();
    let (_, queue_token) = rig.session(set).await;
    let request_id = rig.job(&["arc-runner-set"]);
    rig.acquire(set, &queue_token, request_id).await;
    let (runner, process) = rig.runner(set, RUNNER).await;
    process.next_job().await.expect("the job starts on the runner");
    let bind = Bind { runner: Some(runner), ..Bind::credential(&rig.admin) };
    rig.check("remove-runner.job-still-running", bind).await;
}

/// A legacy runner registered with `config.sh` (labels: the defaults and `gpu`), connected.
fn legacy_runner(rig: &WireRig) -> (i64, arc_sim::github::RunnerSession) {
    let token = rig.fake.issue_registration_token(SCOPE).token;
    let registration =
        rig.fake.legacy_configure(&token, LEGACY_RUNNER, &["gpu".to_string()], false).expect("config.sh");
    (registration.runner_id, rig.fake.connect_runner(&registration.config).expect("run.sh connects"))
}

#[tokio::test(start_paused = true)]
async fn list_runners() {
    let rig = WireRig::new().await;
    let _process = legacy_runner(&rig);
    rig.check("list-runners", Bind::credential(PAT)).await;
}

#[tokio::test(start_paused = true)]
async fn delete_runner() {
    let rig = WireRig::new().await;
    let (runner, _process) = legacy_runner(&rig);
    rig.check("delete-runner", Bind { runner: Some(runner), ..Bind::credential(PAT) }).await;
}

#[tokio::test(start_paused = true)]
async fn delete_a_busy_runner() {
    let rig = WireRig::new().await;
    let (runner, process) = legacy_runner(&rig);
    rig.job(&["self-hosted", "gpu"]);
    process.next_job().await.expect("the job starts on the runner");
    rig.check("delete-runner.busy", Bind { runner: Some(runner), ..Bind::credential(PAT) }).await;
}
