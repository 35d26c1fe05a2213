//! The admin connection the admin-token flow yields (ARC-MODEL §6.6): the tenant's Actions service
//! URL and an admin JWT, fresh until 60 s before the JWT's `exp` claim.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jiff::{SignedDuration, Timestamp};

/// Refresh the admin token when it expires within this margin (ARC: 60 s).
pub const ADMIN_TOKEN_REFRESH_MARGIN: Duration = Duration::from_secs(60);

/// A cached admin connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AdminSession {
    pub service_url: String,
    pub token: String,
    pub expires_at: Timestamp,
}

impl AdminSession {
    /// Whether the token is still good for longer than the refresh margin at `now`.
    pub(crate) fn is_fresh_at(&self, now: Timestamp) -> bool {
        let margin = SignedDuration::try_from(ADMIN_TOKEN_REFRESH_MARGIN).unwrap_or(SignedDuration::ZERO);
        now.saturating_add(margin).is_ok_and(|deadline| deadline <= self.expires_at)
    }
}

/// The `exp` claim of a JWT, read without verifying the signature (as ARC does).
pub fn jwt_expiry(token: &str) -> Result<Timestamp, String> {
    let payload = token.split('.').nth(1).ok_or("the admin token is not a JWT")?;
    let bytes = URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .map_err(|e| format!("the admin token's payload is not base64url: {e}"))?;
    let claims: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| format!("the admin token's claims are not JSON: {e}"))?;
    let exp =
        claims.get("exp").and_then(serde_json::Value::as_i64).ok_or("the admin token has no exp claim")?;
    Timestamp::from_second(exp).map_err(|e| format!("the admin token's exp is out of range: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(claims: &str) -> String {
        format!("{}.{}.sig", URL_SAFE_NO_PAD.encode(b"{\"alg\":\"none\"}"), URL_SAFE_NO_PAD.encode(claims))
    }

    #[test]
    fn the_expiry_comes_from_the_exp_claim() {
        assert_eq!(jwt_expiry(&jwt(r#"{"exp":1767229200}"#)).unwrap().as_second(), 1_767_229_200);
        assert!(jwt_expiry("opaque").unwrap_err().contains("not a JWT"));
        assert!(jwt_expiry(&jwt(r#"{"iat":1}"#)).unwrap_err().contains("no exp"));
        assert!(jwt_expiry("a.!!!.c").unwrap_err().contains("base64url"));
    }

    #[test]
    fn a_session_is_stale_within_sixty_seconds_of_expiry() {
        let expires_at = Timestamp::from_second(1000).unwrap();
        let session = AdminSession { service_url: String::new(), token: String::new(), expires_at };
        assert!(session.is_fresh_at(Timestamp::from_second(940).unwrap()));
        assert!(!session.is_fresh_at(Timestamp::from_second(941).unwrap()));
        assert!(!session.is_fresh_at(Timestamp::from_second(2000).unwrap()));
    }
}
