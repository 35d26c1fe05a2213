//! REST rate limits by call volume (assumption `rest-rate-limits`): under a metered alternative every
//! REST call (registration token, ListRunners, DeleteRunner) spends one request of its credential's
//! hourly budget and 1 point (a read) or 5 (a write) of its per-minute secondary budget, as GitHub's
//! REST documentation describes. A call over the hourly budget is refused 403 with
//! `X-RateLimit-Remaining: 0` and `X-RateLimit-Reset`; over the secondary budget, 403 with
//! `Retry-After`. A refused call changes nothing and spends nothing. An installation token spends its
//! installation's budget, any other token its own. Admitted calls carry the `X-RateLimit-*` headers.
//! Simplified: the hour is a fixed window from the budget's first call, and the Actions service's
//! endpoints are never metered (no public document says they are).

use std::collections::BTreeMap;

use http::HeaderMap;

use super::super::config::RestRateLimit;
use super::super::reply::Reply;
use super::super::route::credential;
use super::World;

/// What one budget has spent in its current windows.
#[derive(Debug, Clone, Default)]
struct Usage {
    hour_start_ms: u64,
    used: u32,
    minute_start_ms: u64,
    points: u32,
}

const HOUR_MS: u64 = 3_600_000;
const MINUTE_MS: u64 = 60_000;

/// Whose budget a call spends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Budget {
    /// The ledger's key: the installation, or the token itself.
    pub key: String,
    /// How a refusal names the holder (`installation ID 7`, `user`).
    pub holder: String,
}

impl Budget {
    fn installation(id: i64) -> Budget {
        let holder = format!("installation ID {id}");
        Budget { key: holder.clone(), holder }
    }

    fn token(token: &str) -> Budget {
        Budget { key: format!("token {token}"), holder: "user".to_string() }
    }
}

impl World {
    /// Meters a REST call that presented `headers`: the headers its answer carries (none where
    /// REST is unmetered), or the 403 that refuses it.
    pub(crate) fn meter_rest(&mut self, headers: &HeaderMap, is_write: bool) -> Result<RateHeaders, Reply> {
        let Some(limit) = self.cfg.rest_rate_limit else { return Ok(Vec::new()) };
        let token = credential(headers, "Bearer").unwrap_or_default();
        let budget = match self.installation_tokens.get(token) {
            Some(rec) => Budget::installation(rec.installation_id),
            None => Budget::token(token),
        };
        let now_ms = self.now_ms();
        let epoch = self.clock.epoch();
        self.rate_ledger.admit(limit, &budget, now_ms, is_write, |ms| {
            let offset = jiff::SignedDuration::from_millis(i64::try_from(ms).unwrap_or(i64::MAX));
            epoch.saturating_add(offset).map_or(i64::MAX, |t| t.as_second())
        })
    }
}

/// The `X-RateLimit-*` headers an answer carries.
pub(crate) type RateHeaders = Vec<(&'static str, String)>;

/// Every budget's usage, by budget key.
#[derive(Debug, Default)]
pub(crate) struct RateLedger {
    budgets: BTreeMap<String, Usage>,
}

impl RateLedger {
    /// Spends one call of `budget` at `now_ms`, or refuses it. `reset_second` turns a sim ms into the
    /// epoch second `X-RateLimit-Reset` names.
    pub(crate) fn admit(
        &mut self,
        limit: RestRateLimit,
        budget: &Budget,
        now_ms: u64,
        is_write: bool,
        reset_second: impl Fn(u64) -> i64,
    ) -> Result<RateHeaders, Reply> {
        let usage = self.budgets.entry(budget.key.clone()).or_default();
        usage.roll(now_ms);
        let reset = reset_second(usage.hour_start_ms + HOUR_MS).to_string();
        let headers = |used: u32| -> RateHeaders {
            vec![
                ("X-RateLimit-Limit", limit.requests_per_hour.to_string()),
                ("X-RateLimit-Remaining", limit.requests_per_hour.saturating_sub(used).to_string()),
                ("X-RateLimit-Used", used.to_string()),
                ("X-RateLimit-Reset", reset.clone()),
                ("X-RateLimit-Resource", "core".to_string()),
            ]
        };
        if usage.used >= limit.requests_per_hour {
            let message = format!("API rate limit exceeded for {}.", budget.holder);
            return Err(with_headers(Reply::rest_error(403, message), headers(usage.used)));
        }
        let cost = if is_write { 5 } else { 1 };
        if usage.points + cost > limit.points_per_minute {
            let wait_s = (usage.minute_start_ms + MINUTE_MS - now_ms).div_ceil(1_000);
            let message =
                "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.";
            let refused = with_headers(Reply::rest_error(403, message), headers(usage.used));
            return Err(refused.with_header("Retry-After", wait_s.to_string()));
        }
        usage.used += 1;
        usage.points += cost;
        Ok(headers(usage.used))
    }
}

impl Usage {
    /// Starts new windows where the old ones ended.
    fn roll(&mut self, now_ms: u64) {
        if self.used == 0 || now_ms >= self.hour_start_ms + HOUR_MS {
            *self = Usage { hour_start_ms: now_ms, used: 0, ..*self };
        }
        if self.points == 0 || now_ms >= self.minute_start_ms + MINUTE_MS {
            self.minute_start_ms = now_ms;
            self.points = 0;
        }
    }
}

/// `reply` with `headers` added.
pub(crate) fn with_headers(reply: Reply, headers: RateHeaders) -> Reply {
    headers.into_iter().fold(reply, |reply, (name, value)| reply.with_header(name, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: RestRateLimit = RestRateLimit { requests_per_hour: 3, points_per_minute: 900 };

    fn header<'r>(reply: &'r Reply, name: &str) -> Option<&'r str> {
        reply.headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }

    fn budget(key: &str) -> Budget {
        Budget { key: key.to_string(), holder: key.to_string() }
    }

    fn second(ms: u64) -> i64 {
        i64::try_from(ms / 1_000).unwrap()
    }

    #[test]
    fn the_hourly_budget_refuses_with_remaining_zero_until_its_reset() {
        let mut ledger = RateLedger::default();
        for at in [1_000, 2_000, 3_000] {
            let headers = ledger.admit(LIMIT, &budget("installation 1"), at, false, second).unwrap();
            assert!(headers.contains(&("X-RateLimit-Reset", "3601".to_string())));
        }
        let refused = ledger.admit(LIMIT, &budget("installation 1"), 4_000, false, second).unwrap_err();
        assert_eq!(refused.status, 403);
        assert_eq!(header(&refused, "X-RateLimit-Remaining"), Some("0"));
        assert_eq!(header(&refused, "X-RateLimit-Reset"), Some("3601"));
        assert!(
            ledger.admit(LIMIT, &budget("token other"), 4_000, false, second).is_ok(),
            "budgets are separate"
        );
        let renewed = ledger.admit(LIMIT, &budget("installation 1"), 3_601_000, false, second).unwrap();
        assert!(renewed.contains(&("X-RateLimit-Remaining", "2".to_string())));
    }

    #[test]
    fn writes_spend_five_points_and_the_secondary_limit_names_its_wait() {
        let limit = RestRateLimit { requests_per_hour: 100, points_per_minute: 11 };
        let mut ledger = RateLedger::default();
        ledger.admit(limit, &budget("t"), 10_000, true, second).unwrap();
        ledger.admit(limit, &budget("t"), 20_000, true, second).unwrap();
        let refused = ledger.admit(limit, &budget("t"), 30_000, true, second).unwrap_err();
        assert_eq!(refused.status, 403);
        assert_eq!(header(&refused, "Retry-After"), Some("40"));
        assert!(ledger.admit(limit, &budget("t"), 30_000, false, second).is_ok(), "a read still fits");
        assert!(ledger.admit(limit, &budget("t"), 70_000, true, second).is_ok(), "a new minute");
    }
}
