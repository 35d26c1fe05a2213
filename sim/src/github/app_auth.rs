//! GitHub App authentication, as GitHub serves it: `POST /app/installations/{id}/access_tokens` with
//! `Authorization: Bearer <app JWT>` answers 201 with an installation token (`ghs_…`, one hour), which
//! then authorises REST calls like a PAT.
//!
//! The fake **verifies the JWT's RS256 signature** against the public key configured for the app
//! ([`GitHubApp::public_key_pem`], SPKI PEM, `BEGIN PUBLIC KEY`), and its claims as GitHub documents
//! them: `alg` RS256, `iss` a configured app id (string or number), `iat` no later than
//! [`CLOCK_DRIFT_SECONDS`] ahead of the fake's clock, `exp` in the future and at most
//! [`MAX_LIFETIME_SECONDS`] after `iat`. The installation must belong to the app. Error bodies carry
//! GitHub's REST shape (`message`, `documentation_url`) with the gist of its messages.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::signature::{RSA_PKCS1_2048_8192_SHA256, UnparsedPublicKey};
use serde_json::Value;

use super::config::GitHubApp;
use super::reply::Reply;
use super::rsa_key::rsa_public_key;
use super::state::{InstallationTokenRec, World};
use super::tokens;
use super::wire::InstallationAccessToken;

/// How far ahead of the fake's clock an `iat` may be (GitHub tolerates some drift).
pub const CLOCK_DRIFT_SECONDS: i64 = 60;
/// Longest `exp − iat` GitHub accepts (10 minutes).
pub const MAX_LIFETIME_SECONDS: i64 = 600;

fn unauthorized(message: &str) -> Reply {
    Reply::rest_error(401, message)
}

/// The app `jwt` authenticates as at `now_seconds`, or the 401 GitHub would answer.
pub(crate) fn verify_app_jwt<'a>(
    apps: &'a [GitHubApp],
    jwt: &str,
    now_seconds: i64,
) -> Result<&'a GitHubApp, Reply> {
    let undecodable = || unauthorized("A JSON web token could not be decoded");
    let parts: Vec<&str> = jwt.split('.').collect();
    let [header, payload, signature] = parts.as_slice() else { return Err(undecodable()) };
    let json =
        |part: &str| -> Option<Value> { serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).ok()?).ok() };
    let (header_json, claims) =
        (json(header).ok_or_else(undecodable)?, json(payload).ok_or_else(undecodable)?);
    if header_json.get("alg").and_then(Value::as_str) != Some("RS256") {
        return Err(undecodable());
    }
    let issuer = match claims.get("iss") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Number(number)) => number.to_string(),
        _ => return Err(unauthorized("'Issuer' claim ('iss') must be an Integer or a String")),
    };
    let app =
        apps.iter().find(|a| a.app_id == issuer).ok_or_else(|| unauthorized("Integration not found"))?;
    let signature = URL_SAFE_NO_PAD.decode(signature).map_err(|_| undecodable())?;
    let key = rsa_public_key(&app.public_key_pem).map_err(|_| undecodable())?;
    let signed = format!("{header}.{payload}");
    UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, key)
        .verify(signed.as_bytes(), &signature)
        .map_err(|_| undecodable())?;
    check_times(&claims, now_seconds)?;
    Ok(app)
}

fn check_times(claims: &Value, now: i64) -> Result<(), Reply> {
    let iat = claims.get("iat").and_then(Value::as_i64).ok_or_else(|| {
        unauthorized("'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued")
    })?;
    let exp = claims.get("exp").and_then(Value::as_i64).ok_or_else(|| {
        unauthorized("'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires")
    })?;
    if iat > now + CLOCK_DRIFT_SECONDS {
        return Err(unauthorized(
            "'Issued at' claim ('iat') must be an Integer representing a time in the past",
        ));
    }
    if exp <= now {
        return Err(unauthorized(
            "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires",
        ));
    }
    if exp - iat > MAX_LIFETIME_SECONDS {
        return Err(unauthorized("'Expiration time' claim ('exp') is too far in the future"));
    }
    Ok(())
}

impl World {
    /// `POST /app/installations/{installation_id}/access_tokens` authorised by `jwt`.
    pub(super) fn http_installation_token(&mut self, installation_id: i64, jwt: &str) -> Reply {
        let now_seconds = self.timestamp(self.now_ms()).as_second();
        let app = match verify_app_jwt(&self.cfg.apps, jwt, now_seconds) {
            Ok(app) => app,
            Err(reply) => return reply,
        };
        if !app.installation_ids.contains(&installation_id) {
            return Reply::rest_error(404, "Not Found");
        }
        let expires_ms = self.now_ms() + self.cfg.installation_token_ttl_ms;
        let token = tokens::opaque(self.seed, "ghs", self.next_number());
        self.installation_tokens.insert(token.clone(), InstallationTokenRec { expires_ms, installation_id });
        Reply::json(201, &InstallationAccessToken::new(token, self.timestamp(expires_ms)))
    }

    /// Whether `token` is a REST credential now: an unexpired installation token, or (the fake does not
    /// model PATs) anything else that is not one.
    pub(super) fn rest_credential_valid(&self, token: &str) -> bool {
        if !token.starts_with("ghs_") {
            return true;
        }
        self.installation_tokens.get(token).is_some_and(|rec| self.now_ms() < rec.expires_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PUBLIC: &str = include_str!("../../../fixtures/github/app-public-key.pem");

    #[test]
    fn the_rsa_key_is_found_inside_the_spki_pem() {
        let key = rsa_public_key(PUBLIC).unwrap();
        assert_eq!(key[0], 0x30, "an RSAPublicKey sequence");
        assert!(key.len() > 256);
        assert!(rsa_public_key("nope").unwrap_err().contains("BEGIN PUBLIC KEY"));
    }

    #[test]
    fn a_jwt_that_is_not_one_or_names_an_unknown_app_is_refused() {
        let apps =
            vec![GitHubApp { app_id: "1".into(), installation_ids: vec![2], public_key_pem: PUBLIC.into() }];
        assert_eq!(verify_app_jwt(&apps, "a.b", 0).unwrap_err().status, 401);
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"RS256"}"#);
        let claims = URL_SAFE_NO_PAD.encode(br#"{"iss":"9","iat":0,"exp":60}"#);
        let unknown = verify_app_jwt(&apps, &format!("{header}.{claims}.AAAA"), 0).unwrap_err();
        assert_eq!(unknown.status, 401);
        let claims = URL_SAFE_NO_PAD.encode(br#"{"iss":1,"iat":0,"exp":60}"#);
        let forged = verify_app_jwt(&apps, &format!("{header}.{claims}.AAAA"), 0).unwrap_err();
        assert_eq!(forged.status, 401, "a numeric iss names the app, but the signature is wrong");
    }

    #[test]
    fn times_are_checked_as_github_documents_them() {
        assert!(check_times(&serde_json::json!({"iat": 100, "exp": 600}), 200).is_ok());
        assert!(check_times(&serde_json::json!({"iat": 100, "exp": 150}), 200).is_err(), "expired");
        assert!(check_times(&serde_json::json!({"iat": 100, "exp": 800}), 200).is_err(), "over 10 minutes");
        assert!(
            check_times(&serde_json::json!({"iat": 300, "exp": 600}), 200).is_err(),
            "issued in the future"
        );
        assert!(check_times(&serde_json::json!({"exp": 600}), 200).is_err(), "no iat");
    }
}
