//! The client-side cache of runner registration tokens (ARC's `GetRegistrationToken`, ARC-MODEL §6.6).
//!
//! GitHub hands out a fresh registration token (TTL about 1 h) on every request. ARC keeps the last
//! token per scope and hands it out again while it expires more than a margin after now, so that a
//! runner starting up with it still has time to run `config.sh`. The margin was 3 min (#345) and
//! became 30 min with #1296, after #1295 saw runners register with tokens that expired on the way.
//! Expired entries are dropped whenever a new token is cached (ARC's `cleanup`). The lock is held
//! across the fetch, as ARC holds its mutex, so concurrent callers for one scope fetch once.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use crate::github::wire::RegistrationToken;

/// ARC's reuse margin since #1296.
pub(crate) const DEFAULT_TOKEN_MARGIN: Duration = Duration::from_secs(30 * 60);

/// Registration tokens by scope (the GitHub config URL they were issued for).
#[derive(Debug)]
pub struct RegistrationTokenCache {
    margin: Duration,
    tokens: tokio::sync::Mutex<BTreeMap<String, RegistrationToken>>,
}

impl RegistrationTokenCache {
    /// An empty cache that reuses a token only while it expires more than `margin` after now.
    pub fn new(margin: Duration) -> Self {
        RegistrationTokenCache { margin, tokens: tokio::sync::Mutex::new(BTreeMap::new()) }
    }

    /// The reuse margin.
    pub fn margin(&self) -> Duration {
        self.margin
    }

    /// The cached token of `scope` if it is still reusable at `now`; otherwise the token `fetch`
    /// returns, which is cached (a failed fetch caches nothing).
    pub async fn get_or_fetch<E, Fut>(
        &self,
        scope: &str,
        now: Timestamp,
        fetch: impl FnOnce() -> Fut,
    ) -> Result<RegistrationToken, E>
    where
        Fut: Future<Output = Result<RegistrationToken, E>>,
    {
        let mut tokens = self.tokens.lock().await;
        if let Some(token) = tokens.get(scope).filter(|t| is_reusable(t, now, self.margin)) {
            return Ok(token.clone());
        }
        let token = fetch().await?;
        tokens.retain(|_, cached| cached.expires_at >= now);
        tokens.insert(scope.to_string(), token.clone());
        Ok(token)
    }

    /// How many scopes hold a token.
    pub async fn len(&self) -> usize {
        self.tokens.lock().await.len()
    }

    /// Whether no scope holds a token.
    pub async fn is_empty(&self) -> bool {
        self.len().await == 0
    }
}

impl Default for RegistrationTokenCache {
    fn default() -> Self {
        Self::new(DEFAULT_TOKEN_MARGIN)
    }
}

/// Whether `token` expires strictly more than `margin` after `now` (ARC: `expiresAt.After(now+margin)`).
pub(crate) fn is_reusable(token: &RegistrationToken, now: Timestamp, margin: Duration) -> bool {
    let margin = SignedDuration::try_from(margin).unwrap_or(SignedDuration::MAX);
    now.checked_add(margin).is_ok_and(|deadline| token.expires_at > deadline)
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    const SCOPE: &str = "https://github.com/o/r";

    fn at(minutes: i64) -> Timestamp {
        Timestamp::from_second(1_767_225_600 + minutes * 60).unwrap()
    }

    fn token(name: &str, expires_minute: i64) -> RegistrationToken {
        RegistrationToken { token: name.into(), expires_at: at(expires_minute) }
    }

    /// Gets a token for `scope` at `now`, fetching `fresh` if needed; counts fetches in `fetches`.
    async fn get(
        cache: &RegistrationTokenCache,
        scope: &str,
        now: Timestamp,
        fresh: RegistrationToken,
        fetches: &Cell<u32>,
    ) -> RegistrationToken {
        let fetch = || async {
            fetches.set(fetches.get() + 1);
            Ok::<_, String>(fresh)
        };
        cache.get_or_fetch(scope, now, fetch).await.unwrap()
    }

    #[tokio::test]
    async fn a_token_with_more_than_the_margin_left_is_reused() {
        let cache = RegistrationTokenCache::default();
        let fetches = Cell::new(0);
        assert_eq!(get(&cache, SCOPE, at(0), token("T1", 60), &fetches).await.token, "T1");
        assert_eq!(get(&cache, SCOPE, at(29), token("T2", 89), &fetches).await.token, "T1");
        assert_eq!(fetches.get(), 1);
    }

    #[tokio::test]
    async fn a_token_with_the_margin_or_less_left_is_replaced() {
        let cache = RegistrationTokenCache::default();
        let fetches = Cell::new(0);
        get(&cache, SCOPE, at(0), token("T1", 60), &fetches).await;
        assert_eq!(get(&cache, SCOPE, at(30), token("T2", 90), &fetches).await.token, "T2", "exactly 30 min");
        assert_eq!(get(&cache, SCOPE, at(31), token("T3", 91), &fetches).await.token, "T2");
        assert_eq!(fetches.get(), 2);
    }

    #[tokio::test]
    async fn the_old_three_minute_margin_reuses_tokens_much_longer() {
        let cache = RegistrationTokenCache::new(Duration::from_secs(3 * 60));
        let fetches = Cell::new(0);
        get(&cache, SCOPE, at(0), token("T1", 60), &fetches).await;
        assert_eq!(get(&cache, SCOPE, at(56), token("T2", 116), &fetches).await.token, "T1");
        assert_eq!(get(&cache, SCOPE, at(57), token("T3", 117), &fetches).await.token, "T3");
    }

    #[tokio::test]
    async fn scopes_are_cached_apart_and_expired_tokens_are_dropped() {
        let cache = RegistrationTokenCache::default();
        let fetches = Cell::new(0);
        get(&cache, SCOPE, at(0), token("T1", 60), &fetches).await;
        let other = get(&cache, "https://github.com/o", at(1), token("O1", 61), &fetches).await;
        assert_eq!(other.token, "O1");
        assert_eq!(cache.len().await, 2);
        get(&cache, SCOPE, at(70), token("T2", 130), &fetches).await;
        assert_eq!(cache.len().await, 1, "both earlier tokens had expired by then");
    }

    #[tokio::test]
    async fn a_failed_fetch_caches_nothing() {
        let cache = RegistrationTokenCache::default();
        let failed = cache.get_or_fetch(SCOPE, at(0), || async { Err::<RegistrationToken, _>("502") }).await;
        assert_eq!(failed.unwrap_err(), "502");
        assert!(cache.is_empty().await);
    }
}
