//! The JWT a GitHub App authenticates as itself with, to ask for an installation token (GitHub's
//! "Generating a JSON Web Token (JWT) for a GitHub App"; ARC's `createJWTForGitHubApp`):
//!
//! - header `{"alg":"RS256","typ":"JWT"}`, signed with the app's private key;
//! - `iat` [`APP_JWT_BACKDATE`] (60 s) before now, so a server clock a little behind ours still sees
//!   it as issued (GitHub recommends this for clock drift);
//! - `exp` [`APP_JWT_LIFETIME`] (9 min) after `iat`: GitHub refuses a JWT that expires more than 10
//!   minutes ahead, and 9 leaves room for skew the other way;
//! - `iss` the app id (or the app's client id), as a string.
//!
//! The JWT is made fresh for every exchange; only the installation token it buys is cached.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use super::app_key::{AppKey, AppKeyError};

/// How far `iat` is set in the past.
pub const APP_JWT_BACKDATE: Duration = Duration::from_secs(60);
/// `exp − iat`.
pub const APP_JWT_LIFETIME: Duration = Duration::from_secs(9 * 60);

/// The registered claims GitHub reads, in the order golang-jwt writes them.
#[derive(Serialize)]
struct Claims<'a> {
    iss: &'a str,
    exp: i64,
    iat: i64,
}

/// A signed JWT for app `app_id` at `now`.
pub fn app_jwt(app_id: &str, key: &AppKey, now: Timestamp) -> Result<String, AppKeyError> {
    let backdate = SignedDuration::try_from(APP_JWT_BACKDATE).unwrap_or(SignedDuration::ZERO);
    let lifetime = SignedDuration::try_from(APP_JWT_LIFETIME).unwrap_or(SignedDuration::ZERO);
    let iat = now.as_second() - backdate.as_secs();
    let claims = Claims { iss: app_id, exp: iat + lifetime.as_secs(), iat };
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"RS256","typ":"JWT"}"#);
    let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims).map_err(|_| AppKeyError::Signing)?);
    let signing_input = format!("{header}.{payload}");
    let signature = URL_SAFE_NO_PAD.encode(key.sign_rs256(signing_input.as_bytes())?);
    Ok(format!("{signing_input}.{signature}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::github::app_key::tests::FIXTURE_KEY;

    fn decoded(part: &str) -> serde_json::Value {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
    }

    #[test]
    fn the_jwt_is_rs256_backdated_a_minute_and_valid_for_nine() {
        let key = AppKey::from_pem(FIXTURE_KEY).unwrap();
        let now = Timestamp::from_second(1_767_225_600).unwrap();
        let jwt = app_jwt("123456", &key, now).unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        assert_eq!(decoded(parts[0]), serde_json::json!({"alg": "RS256", "typ": "JWT"}));
        let claims = decoded(parts[1]);
        assert_eq!(claims["iss"], "123456");
        assert_eq!(claims["iat"], 1_767_225_540);
        assert_eq!(claims["exp"], 1_767_226_080);
        assert_eq!(URL_SAFE_NO_PAD.decode(parts[2]).unwrap().len(), 256);
        assert_eq!(jwt, app_jwt("123456", &key, now).unwrap(), "same inputs, same JWT");
    }
}
