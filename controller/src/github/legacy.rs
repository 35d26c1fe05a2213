//! GitHub's REST API for self-hosted runners, as the legacy (summerwind) Runner controller uses it
//! (ARC-MODEL §6.3 legacy, §7): list runners (paged), delete a runner. Registration tokens are in
//! [`super::admin`], shared with the admin-token flow.
//!
//! Pages are followed through the `Link: <…page=N>; rel="next"` header, as go-github does, 100 runners
//! a page.

use http::Method;

use super::client::{ActionsClient, decode, with_query};
use super::error::ActionsError;
use super::operation::Operation;
use super::wire::{LegacyRunner, LegacyRunnerList};

/// Runners per page requested.
pub const RUNNERS_PER_PAGE: u32 = 100;

impl ActionsClient {
    /// Every self-hosted runner of the configured scope, over all pages. `busy` may be stale.
    pub async fn list_runners(&self) -> Result<Vec<LegacyRunner>, ActionsError> {
        let op = Operation::ListRunners;
        self.observe(op, async {
            let mut runners = Vec::new();
            let mut page = Some(1u32);
            while let Some(number) = page {
                let (per_page, number) = (RUNNERS_PER_PAGE.to_string(), number.to_string());
                let params = [("per_page", per_page.as_str()), ("page", number.as_str())];
                let url = with_query(&self.inner.config.runners_url(), &params);
                let answer = self.exchange(&self.rest_call(op, Method::GET, url).await?, &[200]).await?;
                let list: LegacyRunnerList = decode(op, &answer)?;
                runners.extend(list.runners);
                page =
                    answer.headers.get(http::header::LINK).and_then(|v| v.to_str().ok()).and_then(next_page);
            }
            Ok(runners)
        })
        .await
    }

    /// Deletes self-hosted runner `runner_id` (204). A busy runner is [`ActionsError::RunnerBusy`]
    /// (422); an unknown one is [`ActionsError::NotFound`].
    pub async fn remove_legacy_runner(&self, runner_id: i64) -> Result<(), ActionsError> {
        let op = Operation::DeleteRunner;
        self.observe(op, async {
            let call = self.rest_call(op, Method::DELETE, self.inner.config.runner_url(runner_id)).await?;
            self.exchange(&call, &[204]).await.map(drop)
        })
        .await
    }
}

/// The `page` number of the `rel="next"` link in a `Link` header.
pub fn next_page(link: &str) -> Option<u32> {
    link.split(',').find(|part| part.contains("rel=\"next\"")).and_then(|part| {
        let url = part.split(';').next()?.trim().trim_start_matches('<').trim_end_matches('>');
        let (_, query) = url.split_once('?')?;
        form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == "page").and_then(|(_, v)| v.parse().ok())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_page_comes_from_the_rel_next_link() {
        let link = r#"<https://api.github.com/orgs/o/actions/runners?page=1&per_page=100>; rel="prev", <https://api.github.com/orgs/o/actions/runners?page=3&per_page=100>; rel="next", <https://api.github.com/orgs/o/actions/runners?page=4>; rel="last""#;
        assert_eq!(next_page(link), Some(3));
        assert_eq!(next_page(r#"<https://x/?page=1>; rel="first""#), None);
        assert_eq!(next_page(""), None);
    }
}
