//! Credentials (ARC-MODEL §6.6): registration tokens (1 h), the admin-token exchange at
//! `/actions/runner-registration` (an admin JWT whose `exp` the client reads), and the check each
//! request's `Authorization` header must pass.
//!
//! REST calls need `Bearer <any non-empty token>` (the fake does not model PAT scopes), except that an
//! installation token (`ghs_…`) must be one the fake issued and unexpired; an installation-token
//! request needs `Bearer <app JWT>` (verified in `app_auth`); the exchange
//! needs `RemoteAuth <unexpired registration token>` (refused with GitHub's bare 404, as config.sh
//! quotes it), as does `config.sh`'s registration; Actions service calls need `Bearer <unexpired
//! admin token>`; queue calls need `Bearer <unexpired queue token of a session of that scale set>`; a
//! runner's own session needs `Bearer <its runner credential>` (`runner_sessions`).

use http::HeaderMap;

use super::events::EventKind;
use super::reply::Reply;
use super::route::{Auth, credential};
use super::state::{RegistrationTokenRec, World};
use super::tokens;
use super::wire::{AdminConnection, RegistrationToken, RunnerRegistrationRequest};

/// The credential a request presented, once checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Authorized {
    /// A REST or admin-token call.
    Caller,
    /// An app's installation-token request, with its JWT (checked when served).
    App { jwt: String },
    /// The exchange, with the registration token's scope.
    Registration { scope: String },
    /// A queue call, with the session.
    Session { session_id: String },
    /// A runner process, with the credential it presented (checked when served: a refusal is the
    /// session's answer, not a bare 401).
    Runner { credential: String },
}

impl World {
    /// Checks a request's credential for `auth`; a failure is the 401 to answer.
    pub(super) fn authorize(&self, auth: Auth, headers: &HeaderMap) -> Result<Authorized, Reply> {
        let now = self.now_ms();
        match auth {
            Auth::Pat => match credential(headers, "Bearer") {
                Some(token) if self.rest_credential_valid(token) => Ok(Authorized::Caller),
                Some(_) => Err(Reply::rest_error(401, "Bad credentials")),
                None => Err(Reply::rest_error(401, "Requires authentication")),
            },
            Auth::AppJwt => credential(headers, "Bearer")
                .map(|jwt| Authorized::App { jwt: jwt.to_string() })
                .ok_or_else(|| Reply::rest_error(401, "A JSON web token could not be decoded")),
            Auth::RegistrationToken => credential(headers, "RemoteAuth")
                .and_then(|t| self.registration_tokens.get(t))
                .filter(|rec| now < rec.expires_ms)
                .map(|rec| Authorized::Registration { scope: rec.scope.clone() })
                .ok_or_else(Reply::not_found),
            Auth::Admin => credential(headers, "Bearer")
                .and_then(|t| self.admin_tokens.get(t))
                .filter(|expires_ms| now < **expires_ms)
                .map(|_| Authorized::Caller)
                .ok_or_else(|| Reply::empty(401)),
            Auth::Queue(scale_set_id) => credential(headers, "Bearer")
                .and_then(|t| self.session_for_token(scale_set_id, t))
                .map(|session_id| Authorized::Session { session_id })
                .ok_or_else(|| Reply::text(401, "The message queue access token is expired or invalid.")),
            Auth::Runner => credential(headers, "Bearer")
                .map(|c| Authorized::Runner { credential: c.to_string() })
                .ok_or_else(|| super::runner_sessions::invalid_client("no client credential")),
        }
    }

    /// Records why the registration token of a refused request did not pass: expired, or never
    /// issued (none presented: nothing to record). The client sees the same 404 either way.
    pub(super) fn note_refused_registration(&mut self, headers: &HeaderMap) {
        let Some(token) = credential(headers, "RemoteAuth") else { return };
        let expired = self.registration_tokens.contains_key(token);
        self.record(EventKind::RegistrationTokenRefused { token: token.to_string(), expired });
    }

    /// Issues a registration token for REST scope `scope` (`/orgs/x`).
    pub(super) fn issue_registration_token(&mut self, scope: &str) -> RegistrationToken {
        let token = tokens::opaque(self.seed, "reg", self.next_number()).to_uppercase();
        let expires_ms = self.now_ms() + self.cfg.registration_token_ttl_ms;
        self.registration_tokens
            .insert(token.clone(), RegistrationTokenRec { scope: scope.to_string(), expires_ms });
        RegistrationToken { token, expires_at: self.timestamp(expires_ms) }
    }

    /// `POST /actions/runner-registration`: the Actions service URL and a fresh admin token.
    pub(super) fn http_admin_token(&mut self, body: &RunnerRegistrationRequest) -> Reply {
        if body.runner_event != "register" || body.url.is_empty() {
            return Reply::rest_error(422, "url and runner_event \"register\" are required");
        }
        let expires_ms = self.now_ms() + self.cfg.admin_token_ttl_ms;
        let exp_seconds = self.timestamp(expires_ms).as_second();
        let token = tokens::admin_jwt(self.seed, self.next_number(), exp_seconds);
        self.admin_tokens.insert(token.clone(), expires_ms);
        Reply::json(200, &AdminConnection { url: self.cfg.service_url.clone(), token })
    }
}
