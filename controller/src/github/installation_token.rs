//! The GitHub App flow (GitHub's "Authenticating as a GitHub App installation"; ARC's
//! `fetchAccessToken`): a JWT signed with the app's key ([`super::app_jwt`]) is exchanged at `POST
//! /app/installations/{installation_id}/access_tokens` (201) for an installation token, which then
//! authorises every REST call as a PAT would (`Authorization: Bearer ghs_…`).
//!
//! Installation tokens live an hour. ARC buys a new one for every registration token; this client
//! keeps it and buys the next one when the current one expires within
//! [`INSTALLATION_TOKEN_REFRESH_MARGIN`] of the [`Clock`](crate::Clock)'s now (ghinstallation's
//! margin), under a lock, so concurrent callers refresh once.

use std::time::Duration;

use http::Method;
use jiff::{SignedDuration, Timestamp};

use super::app_jwt::app_jwt;
use super::client::{ActionsClient, AppCredentials, Credentials, decode};
use super::error::ActionsError;
use super::operation::Operation;
use super::wire::InstallationAccessToken;

/// Buy a new installation token when the cached one expires within this margin.
pub const INSTALLATION_TOKEN_REFRESH_MARGIN: Duration = Duration::from_secs(60);

impl ActionsClient {
    /// The bearer of REST calls: the PAT, or a fresh-enough installation token.
    pub(crate) async fn rest_token(&self) -> Result<String, ActionsError> {
        match &self.inner.credentials {
            Credentials::Token(token) => Ok(token.clone()),
            Credentials::App(app) => Ok(self.installation_token(app).await?.token),
        }
    }

    /// The cached installation token, bought first if missing or about to expire.
    async fn installation_token(
        &self,
        app: &AppCredentials,
    ) -> Result<InstallationAccessToken, ActionsError> {
        let mut cached = self.inner.installation.lock().await;
        let now = self.inner.clock.now();
        if let Some(token) = cached.as_ref().filter(|t| is_fresh_at(t, now)) {
            return Ok(token.clone());
        }
        let token = self.create_installation_token(app).await?;
        *cached = Some(token.clone());
        Ok(token)
    }

    /// `POST /app/installations/{id}/access_tokens` with the app's JWT (201).
    pub async fn create_installation_token(
        &self,
        app: &AppCredentials,
    ) -> Result<InstallationAccessToken, ActionsError> {
        let op = Operation::InstallationToken;
        self.observe(op, async {
            let jwt = app_jwt(&app.app_id, &app.key, self.inner.clock.now())
                .map_err(|e| ActionsError::Config { message: e.to_string() })?;
            let path = format!("/app/installations/{}/access_tokens", app.installation_id);
            let url = self.inner.config.api_url(&path);
            let call = self.rest_call_with(op, Method::POST, url, &jwt)?;
            let answer = self.exchange(&call, &[201]).await?;
            decode(op, &answer)
        })
        .await
    }
}

/// Whether `token` is good for longer than the refresh margin at `now`.
fn is_fresh_at(token: &InstallationAccessToken, now: Timestamp) -> bool {
    let margin = SignedDuration::try_from(INSTALLATION_TOKEN_REFRESH_MARGIN).unwrap_or(SignedDuration::ZERO);
    now.saturating_add(margin).is_ok_and(|deadline| deadline <= token.expires_at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_installation_token_is_stale_within_a_minute_of_expiry() {
        let token = InstallationAccessToken {
            token: "ghs_x".into(),
            expires_at: Timestamp::from_second(4000).unwrap(),
        };
        assert!(is_fresh_at(&token, Timestamp::from_second(3940).unwrap()));
        assert!(!is_fresh_at(&token, Timestamp::from_second(3941).unwrap()));
    }
}
