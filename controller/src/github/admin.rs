//! The admin-token flow (ARC-MODEL §6.6): a registration token from GitHub's REST API is exchanged at
//! `POST /actions/runner-registration` for the tenant's Actions service URL and an admin JWT, which
//! authorises every scale-set call. The JWT is refreshed when it expires within 60 s of the
//! [`Clock`](crate::Clock)'s now, under a lock, so concurrent callers refresh once.
//!
//! Like ARC, the exchange itself retries 401 and 403 up to five times (GitHub can take a moment to
//! accept a fresh registration token), waiting 1, 2, 4, 8 and 16 s; ARC adds jitter, this does not.

use std::time::Duration;

use http::Method;
use http::header::AUTHORIZATION;

use super::admin_session::{AdminSession, jwt_expiry};
use super::client::{ActionsClient, decode};
use super::error::ActionsError;
use super::operation::Operation;
use super::transport::Call;
use super::wire::{AdminConnection, RUNNER_EVENT_REGISTER, RegistrationToken, RunnerRegistrationRequest};

/// Retries of the exchange on 401/403.
const EXCHANGE_RETRIES: u32 = 5;
/// Longest wait between exchange retries.
const EXCHANGE_WAIT_MAX: Duration = Duration::from_secs(20);

impl ActionsClient {
    /// The admin connection, refreshed first if it is missing or about to expire.
    pub(crate) async fn admin_session(&self) -> Result<AdminSession, ActionsError> {
        let mut cached = self.inner.admin.lock().await;
        let now = self.inner.clock.now();
        if let Some(session) = cached.as_ref().filter(|s| s.is_fresh_at(now)) {
            return Ok(session.clone());
        }
        let registration = self.create_registration_token().await?;
        let session = self.observe(Operation::AdminToken, self.exchange_for_admin(&registration)).await?;
        *cached = Some(session.clone());
        Ok(session)
    }

    /// `POST …/actions/runners/registration-token` (201): a token to register runners with, valid
    /// for about an hour. Used by the admin-token flow and by legacy runners (`RUNNER_TOKEN`).
    pub async fn create_registration_token(&self) -> Result<RegistrationToken, ActionsError> {
        let op = Operation::RegistrationToken;
        self.observe(op, async {
            let url = self.inner.config.registration_token_url();
            let call = self.rest_call(op, Method::POST, url).await?;
            let answer = self.exchange(&call, &[201]).await?;
            decode(op, &answer)
        })
        .await
    }

    async fn exchange_for_admin(
        &self,
        registration: &RegistrationToken,
    ) -> Result<AdminSession, ActionsError> {
        let op = Operation::AdminToken;
        let body = RunnerRegistrationRequest {
            url: self.inner.config.as_str().to_string(),
            runner_event: RUNNER_EVENT_REGISTER.into(),
        };
        let url = self.inner.config.api_url("/actions/runner-registration");
        let call = Call::new(op, Method::POST, url)
            .json(&body)?
            .header(http::header::USER_AGENT, &self.inner.user_agent)?
            .header(AUTHORIZATION, &format!("RemoteAuth {}", registration.token))?;
        let answer = self.exchange_retrying_auth(&call).await?;
        let connection: AdminConnection = decode(op, &answer)?;
        let missing =
            || ActionsError::Decode { operation: op, message: "the answer lacks url or token".into() };
        let service_url = connection.url.ok_or_else(missing)?;
        let token = connection.token.ok_or_else(missing)?;
        let expires_at =
            jwt_expiry(&token).map_err(|message| ActionsError::Decode { operation: op, message })?;
        Ok(AdminSession { service_url, token, expires_at })
    }

    async fn exchange_retrying_auth(&self, call: &Call) -> Result<super::transport::Answer, ActionsError> {
        let mut retry = 0;
        loop {
            match self.exchange(call, &[200, 201, 202, 203, 204]).await {
                Err(e) if matches!(e.status(), Some(401 | 403)) && retry < EXCHANGE_RETRIES => {
                    retry += 1;
                    let wait = Duration::from_millis(500).saturating_mul(1 << retry).min(EXCHANGE_WAIT_MAX);
                    tokio::time::sleep(wait).await;
                }
                other => return other,
            }
        }
    }
}
