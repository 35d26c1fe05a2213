//! The GitHub configuration URL (`githubConfigUrl`): which enterprise, organisation or repository the
//! runners serve, and where its REST API lives.
//!
//! The rules are ARC's: the URL path has one segment (an organisation), two (`enterprises/<name>` or
//! `<owner>/<repo>`), and nothing else is valid. github.com, `github.localhost` and `*.ghe.com` are
//! hosted, whose REST API is on `api.<host>`; any other host is GitHub Enterprise Server, whose REST API
//! is under `<host>/api/v3`.

use std::fmt;

use http::Uri;

use super::error::ActionsError;

/// What the runners are registered to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// An enterprise (`https://github.com/enterprises/<enterprise>`).
    Enterprise {
        /// The enterprise slug.
        enterprise: String,
    },
    /// An organisation (`https://github.com/<org>`).
    Organization {
        /// The organisation login.
        organization: String,
    },
    /// A repository (`https://github.com/<owner>/<repo>`).
    Repository {
        /// The owner login.
        owner: String,
        /// The repository name.
        repository: String,
    },
}

impl Scope {
    /// The REST path prefix for this scope: `/orgs/<org>`, `/repos/<owner>/<repo>` or
    /// `/enterprises/<enterprise>`.
    pub fn rest_prefix(&self) -> String {
        match self {
            Scope::Enterprise { enterprise } => format!("/enterprises/{enterprise}"),
            Scope::Organization { organization } => format!("/orgs/{organization}"),
            Scope::Repository { owner, repository } => format!("/repos/{owner}/{repository}"),
        }
    }
}

/// A parsed, validated `githubConfigUrl`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitHubConfigUrl {
    url: String,
    scheme: String,
    host: String,
    scope: Scope,
    hosted: bool,
}

impl GitHubConfigUrl {
    /// Parses `input` (`https://github.com/my-org`, `https://ghes.example.com/enterprises/e`, …).
    pub fn parse(input: &str) -> Result<Self, ActionsError> {
        let trimmed = input.trim().trim_end_matches('/');
        let invalid = |why: &str| ActionsError::Config {
            message: format!(
                "invalid githubConfigUrl {input:?}: {why}; it should point to an enterprise, an organization or a repository"
            ),
        };
        let uri: Uri = trimmed.parse().map_err(|_| invalid("not a URL"))?;
        let scheme = uri.scheme_str().ok_or_else(|| invalid("no scheme"))?.to_ascii_lowercase();
        if scheme != "https" && scheme != "http" {
            return Err(invalid("the scheme must be https or http"));
        }
        let host = uri.authority().ok_or_else(|| invalid("no host"))?.as_str().to_string();
        let scope = parse_scope(uri.path()).ok_or_else(|| invalid("wrong number of path segments"))?;
        let hosted = is_hosted(&host);
        Ok(GitHubConfigUrl { url: trimmed.to_string(), scheme, host, scope, hosted })
    }

    /// The URL as given, without a trailing slash.
    pub fn as_str(&self) -> &str {
        &self.url
    }

    /// The scope the URL names.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// Whether this is github.com (or a GHE.com tenant) rather than GitHub Enterprise Server.
    pub fn is_hosted(&self) -> bool {
        self.hosted
    }

    /// The absolute REST API URL of `path` (which starts with `/`).
    pub fn api_url(&self, path: &str) -> String {
        if !self.hosted {
            return format!("{}://{}/api/v3{path}", self.scheme, self.host);
        }
        let host = if self.host.eq_ignore_ascii_case("www.github.com") {
            "api.github.com".to_string()
        } else {
            format!("api.{}", self.host)
        };
        format!("{}://{host}{path}", self.scheme)
    }

    /// The REST URL that creates a runner registration token for this scope.
    pub fn registration_token_url(&self) -> String {
        self.api_url(&format!("{}/actions/runners/registration-token", self.scope.rest_prefix()))
    }

    /// The legacy REST URL that lists this scope's self-hosted runners.
    pub fn runners_url(&self) -> String {
        self.api_url(&format!("{}/actions/runners", self.scope.rest_prefix()))
    }

    /// The legacy REST URL of one self-hosted runner.
    pub fn runner_url(&self, runner_id: i64) -> String {
        self.api_url(&format!("{}/actions/runners/{runner_id}", self.scope.rest_prefix()))
    }
}

impl fmt::Display for GitHubConfigUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.url)
    }
}

fn parse_scope(path: &str) -> Option<Scope> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    match parts.as_slice() {
        [org] if !org.is_empty() => Some(Scope::Organization { organization: (*org).to_string() }),
        [first, name] if first.eq_ignore_ascii_case("enterprises") && !name.is_empty() => {
            Some(Scope::Enterprise { enterprise: (*name).to_string() })
        }
        [owner, repo] if !owner.is_empty() && !repo.is_empty() => {
            Some(Scope::Repository { owner: (*owner).to_string(), repository: (*repo).to_string() })
        }
        _ => None,
    }
}

fn is_hosted(host: &str) -> bool {
    let name = host.split(':').next().unwrap_or(host).to_ascii_lowercase();
    name == "github.com"
        || name == "www.github.com"
        || name == "github.localhost"
        || name.ends_with(".ghe.com")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosted_org_repo_and_enterprise_urls_map_to_api_github_com() {
        let org = GitHubConfigUrl::parse("https://github.com/my-org/").unwrap();
        assert_eq!(org.scope(), &Scope::Organization { organization: "my-org".into() });
        assert_eq!(
            org.registration_token_url(),
            "https://api.github.com/orgs/my-org/actions/runners/registration-token"
        );
        let repo = GitHubConfigUrl::parse("https://www.github.com/o/r").unwrap();
        assert_eq!(repo.runners_url(), "https://api.github.com/repos/o/r/actions/runners");
        let ent = GitHubConfigUrl::parse("https://github.com/enterprises/e").unwrap();
        assert_eq!(ent.runner_url(7), "https://api.github.com/enterprises/e/actions/runners/7");
        let tenant = GitHubConfigUrl::parse("https://acme.ghe.com/org").unwrap();
        assert_eq!(tenant.api_url("/x"), "https://api.acme.ghe.com/x");
    }

    #[test]
    fn enterprise_server_urls_use_the_api_v3_prefix() {
        let ghes = GitHubConfigUrl::parse("https://ghes.example.com/org").unwrap();
        assert!(!ghes.is_hosted());
        assert_eq!(
            ghes.api_url("/actions/runner-registration"),
            "https://ghes.example.com/api/v3/actions/runner-registration"
        );
    }

    #[test]
    fn urls_without_a_scope_or_with_too_many_segments_are_rejected_with_a_reason() {
        for bad in
            ["https://github.com", "https://github.com/a/b/c", "github.com/org", "ftp://github.com/org", ""]
        {
            let err = GitHubConfigUrl::parse(bad).expect_err(bad);
            assert!(err.to_string().contains("invalid githubConfigUrl"), "{bad}: {err}");
        }
    }
}
