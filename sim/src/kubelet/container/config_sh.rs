//! A legacy runner's registration as the summerwind runner image runs it, over the fake GitHub's
//! HTTP interface (worlds that ask for it: `KubeletConfig::runner_sessions_over_http`).
//!
//! `runner/startup.sh` (actions-runner-controller, the same from summerwind's days to master
//! `2ee6b3b8`) runs `config.sh --unattended --replace` up to 10 times, a second apart, and exits 2
//! when none of them configured the runner. Each `config.sh` (actions/runner v2.336.0,
//! `ConfigurationManager.cs` and `RunnerDotcomServer.cs`) makes two requests with
//! `Authorization: RemoteAuth <registration token>`: `POST /actions/runner-registration`
//! (`GetTenantCredential`), then `POST /actions/runners/register` (`AddOrReplaceRunner`, the
//! runner-admin flow that the first answer's `use_v2_flow` selects; the fake serves only that one). Each request is tried 3 times
//! with a random 1–5 s between tries (`BackoffTimerHelper.GetRandomBackoff`), except that a 404, what
//! GitHub answers an expired or unknown token, fails `config.sh` at once. SIGTERM meanwhile stops the
//! process with exit 0, as before a runner's session. Simplification: `config.sh`'s lookup of its
//! runner by name before it registers is folded into the registration (`replace` takes over the live
//! runner of that name), and its key generation takes no time.

use std::time::Duration;

use bytes::Bytes;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::super::events::KubeletEventKind;
use super::ProcessContext;
use super::github_http::{RUNNER_VERSION, post_json};

/// How many times `startup.sh` runs `config.sh`.
pub const CONFIG_RUNS: u32 = 10;
/// `startup.sh`'s pause after a failed `config.sh`.
pub const CONFIG_RUN_PAUSE: Duration = Duration::from_secs(1);
/// How many times `config.sh` sends each request.
pub const TRIES_PER_REQUEST: u32 = 3;
/// `startup.sh`'s exit code when no `config.sh` configured the runner.
pub const EXIT_NOT_CONFIGURED: i32 = 2;

/// What `startup.sh` passes to `config.sh`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigArgs {
    /// `--token`.
    pub token: String,
    /// `--name`.
    pub name: String,
    /// `--labels`.
    pub labels: Vec<String>,
    /// `--ephemeral`.
    pub ephemeral: bool,
    /// `--url`.
    pub url: String,
}

/// A configured runner: the credential its session presents (`Auth::Runner`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Configured {
    /// The credential.
    pub credential: String,
}

/// Runs `startup.sh`'s configuration loop. `Err` is the process's exit code: 2 when every run
/// failed, 0 when SIGTERM came first.
pub async fn configure(
    ctx: &ProcessContext,
    args: &ConfigArgs,
    sigterm: &CancellationToken,
) -> Result<Configured, i32> {
    let mut rng = ctx.seed.named_rng(&format!("{}/config", ctx.stream));
    for _ in 0..CONFIG_RUNS {
        let run = tokio::select! {
            biased;
            () = sigterm.cancelled() => return Err(stopped(ctx).await),
            run = config_sh(ctx, args, &mut rng) => run,
        };
        match run {
            Ok(configured) => return Ok(configured),
            Err(reason) => {
                (ctx.record)(KubeletEventKind::RegistrationFailed { token: args.token.clone(), reason });
            }
        }
        tokio::select! {
            biased;
            () = sigterm.cancelled() => return Err(stopped(ctx).await),
            () = tokio::time::sleep(CONFIG_RUN_PAUSE) => {}
        }
    }
    Err(EXIT_NOT_CONFIGURED)
}

/// SIGTERM before the runner is configured: the script stops and the process exits 0.
async fn stopped(ctx: &ProcessContext) -> i32 {
    tokio::time::sleep(ctx.shutdown.stop).await;
    0
}

/// One `config.sh`: the token exchange, then the registration. `Err` says why it failed.
async fn config_sh(
    ctx: &ProcessContext,
    args: &ConfigArgs,
    rng: &mut ChaCha8Rng,
) -> Result<Configured, String> {
    let exchange = ExchangeBody { url: &args.url, runner_event: "register" };
    request(ctx, args, EXCHANGE_PATH, &exchange, rng).await?;
    let labels = with_default_labels(&args.labels);
    let body = RegisterBody {
        url: &args.url,
        group_id: 1,
        name: &args.name,
        version: RUNNER_VERSION,
        updates_disabled: false,
        ephemeral: args.ephemeral,
        labels: labels.iter().map(|name| Label { name, kind: "user" }).collect(),
        public_key: PUBLIC_KEY,
        replace: true,
    };
    let bytes = request(ctx, args, REGISTER_PATH, &body, rng).await?;
    let runner: RunnerAnswer = serde_json::from_slice(&bytes)
        .map_err(|e| format!("POST {REGISTER_PATH}: an answer config.sh cannot read ({e})"))?;
    Ok(Configured { credential: runner.authorization.client_id })
}

/// Sends one request up to [`TRIES_PER_REQUEST`] times; a 404 is final. `Ok` is the 2xx answer's body.
async fn request(
    ctx: &ProcessContext,
    args: &ConfigArgs,
    path: &'static str,
    body: &impl Serialize,
    rng: &mut ChaCha8Rng,
) -> Result<Bytes, String> {
    let body = Bytes::from(serde_json::to_vec(body).expect("a config.sh body serialises"));
    for attempt in 1..=TRIES_PER_REQUEST {
        let status = match post_json(
            ctx,
            api_url(&args.url, path),
            format!("RemoteAuth {}", args.token),
            body.clone(),
        )
        .await
        {
            Ok((status, bytes)) if (200..300).contains(&status) => return Ok(bytes),
            Ok((status, _)) => Some(status),
            Err(()) => None,
        };
        let answered = status.map_or_else(|| "dropped".to_string(), |s| s.to_string());
        if status == Some(404) || attempt == TRIES_PER_REQUEST {
            (ctx.record)(KubeletEventKind::RegistrationRequestFailed {
                path: path.to_string(),
                status,
                retry_in_ms: None,
            });
            return Err(format!("POST {path}: {answered}"));
        }
        let backoff = Duration::from_millis(rng.random_range(1_000..=5_000));
        let retry_in_ms = Some(u64::try_from(backoff.as_millis()).unwrap_or(u64::MAX));
        (ctx.record)(KubeletEventKind::RegistrationRequestFailed {
            path: path.to_string(),
            status,
            retry_in_ms,
        });
        tokio::time::sleep(backoff).await;
    }
    unreachable!("the last try returns")
}

/// The API URL of `path` for GitHub server `url`: `api.<host>` on github.com, `/api/v3` elsewhere.
fn api_url(url: &str, path: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("https", url));
    let host = rest.split('/').next().unwrap_or(rest);
    if host.eq_ignore_ascii_case("github.com") {
        format!("{scheme}://api.{host}{path}")
    } else {
        format!("{scheme}://{host}/api/v3{path}")
    }
}

/// The labels `config.sh` registers: its defaults, then the given ones it does not already hold.
fn with_default_labels(given: &[String]) -> Vec<String> {
    let mut labels: Vec<String> = DEFAULT_LABELS.iter().map(|l| (*l).to_string()).collect();
    for label in given {
        if !labels.iter().any(|l| l.eq_ignore_ascii_case(label)) {
            labels.push(label.clone());
        }
    }
    labels
}

/// `config.sh`'s default labels on a Linux x64 machine.
const DEFAULT_LABELS: [&str; 3] = ["self-hosted", "Linux", "X64"];
/// The path of the token exchange.
const EXCHANGE_PATH: &str = "/actions/runner-registration";
/// The path of the registration.
const REGISTER_PATH: &str = "/actions/runners/register";
/// The public key the model presents (a runner generates an RSA key; the fake does not read it).
const PUBLIC_KEY: &str = "<RSAKeyValue><Modulus>c2lt</Modulus><Exponent>AQAB</Exponent></RSAKeyValue>";

/// The token exchange's body.
#[derive(Serialize)]
struct ExchangeBody<'a> {
    url: &'a str,
    runner_event: &'a str,
}

/// The registration's body (`AddOrReplaceRunner`'s dictionary).
#[derive(Serialize)]
struct RegisterBody<'a> {
    url: &'a str,
    group_id: i64,
    name: &'a str,
    version: &'a str,
    updates_disabled: bool,
    ephemeral: bool,
    labels: Vec<Label<'a>>,
    public_key: &'a str,
    replace: bool,
}

/// An `AgentLabel` as it serialises.
#[derive(Serialize)]
struct Label<'a> {
    name: &'a str,
    #[serde(rename = "type")]
    kind: &'a str,
}

/// The part of the registration's answer `config.sh` keeps.
#[derive(Deserialize)]
struct RunnerAnswer {
    authorization: Authorization,
}

/// The runner's authorization in the answer.
#[derive(Deserialize)]
struct Authorization {
    client_id: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_url_is_api_github_com_on_dotcom_and_api_v3_on_a_server() {
        assert_eq!(
            api_url("https://github.com/my-org", EXCHANGE_PATH),
            "https://api.github.com/actions/runner-registration"
        );
        assert_eq!(
            api_url("https://ghes.example.com/enterprises/e", REGISTER_PATH),
            "https://ghes.example.com/api/v3/actions/runners/register"
        );
    }

    #[test]
    fn given_labels_follow_the_defaults_without_repeating_one() {
        let labels = with_default_labels(&["linux".into(), "gpu".into()]);
        assert_eq!(labels, ["self-hosted", "Linux", "X64", "gpu"]);
    }
}
