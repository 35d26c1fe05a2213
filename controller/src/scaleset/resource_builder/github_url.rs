//! What a GitHub config URL points at (ARC's `ParseGitHubConfigFromURL`), and the
//! `actions.github.com/{enterprise,organization,repository}` labels derived from it.
//!
//! The path decides the scope: `/<org>` is an organization, `/enterprises/<ent>` an enterprise and
//! `/<owner>/<repo>` a repository; anything else is rejected. The host does not matter here (it
//! matters to the GitHub client, which tells github.com from GitHub Enterprise Server).

use std::collections::BTreeMap;

use super::{BuildError, BuildResult};
use crate::crd::constants::{LABEL_ENTERPRISE, LABEL_ORGANIZATION, LABEL_REPOSITORY};

/// Longest Kubernetes label value.
const MAX_LABEL_VALUE_LEN: usize = 63;
/// Suffix ARC puts on a label value it had to shorten.
const TRIM_SUFFIX: &str = "-trim";

/// The scope a config URL names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitHubScope {
    /// `https://<host>/enterprises/<enterprise>`.
    Enterprise(String),
    /// `https://<host>/<organization>`.
    Organization(String),
    /// `https://<host>/<owner>/<repository>`.
    Repository {
        /// The owning organization or user.
        owner: String,
        /// The repository name.
        repository: String,
    },
}

/// A parsed GitHub config URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitHubConfigUrl {
    /// The host, with port if any.
    pub host: String,
    /// What the URL points at.
    pub scope: GitHubScope,
}

impl GitHubConfigUrl {
    /// Parses `url`; a URL without `scheme://` or with another path shape is an error.
    pub fn parse(url: &str) -> BuildResult<Self> {
        let invalid = || BuildError::InvalidGitHubConfigUrl { url: url.to_string() };
        let trimmed = url.trim_matches('/');
        let (_, rest) = trimmed.split_once("://").ok_or_else(invalid)?;
        let rest = rest.split(['?', '#']).next().unwrap_or_default();
        let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
        if host.is_empty() {
            return Err(invalid());
        }
        let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
        let scope = match parts.as_slice() {
            [org] if !org.is_empty() => GitHubScope::Organization((*org).to_string()),
            [first, ent] if first.eq_ignore_ascii_case("enterprises") => {
                GitHubScope::Enterprise((*ent).to_string())
            }
            [owner, repo] => {
                GitHubScope::Repository { owner: (*owner).to_string(), repository: (*repo).to_string() }
            }
            _ => return Err(invalid()),
        };
        Ok(GitHubConfigUrl { host: host.to_string(), scope })
    }

    /// ARC's `applyGitHubURLLabels`: adds the scope labels to `labels`.
    pub fn apply_labels(&self, labels: &mut BTreeMap<String, String>) {
        let mut put = |key: &str, value: &str| {
            if !value.is_empty() {
                labels.insert(key.to_string(), trim_label_value(value));
            }
        };
        match &self.scope {
            GitHubScope::Enterprise(enterprise) => put(LABEL_ENTERPRISE, enterprise),
            GitHubScope::Organization(org) => put(LABEL_ORGANIZATION, org),
            GitHubScope::Repository { owner, repository } => {
                put(LABEL_ORGANIZATION, owner);
                put(LABEL_REPOSITORY, repository);
            }
        }
    }
}

/// ARC's `trimLabelValue`: too-long values are cut and marked `-trim`; others lose leading and
/// trailing `-`, `_` and `.`.
fn trim_label_value(value: &str) -> String {
    if value.len() > MAX_LABEL_VALUE_LEN {
        let mut cut = MAX_LABEL_VALUE_LEN - TRIM_SUFFIX.len();
        while !value.is_char_boundary(cut) {
            cut -= 1;
        }
        return format!("{}{TRIM_SUFFIX}", &value[..cut]);
    }
    value.trim_matches(['-', '_', '.']).to_string()
}

/// The scope labels of `url`, merged into `labels`.
pub(crate) fn apply_github_url_labels(url: &str, labels: &mut BTreeMap<String, String>) -> BuildResult<()> {
    GitHubConfigUrl::parse(url)?.apply_labels(labels);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope_of(url: &str) -> Option<GitHubScope> {
        GitHubConfigUrl::parse(url).ok().map(|u| u.scope)
    }

    #[test]
    fn the_path_shape_decides_the_scope() {
        assert_eq!(scope_of("https://github.com/octo"), Some(GitHubScope::Organization("octo".into())));
        assert_eq!(scope_of("https://github.com/octo/"), Some(GitHubScope::Organization("octo".into())));
        assert_eq!(
            scope_of("https://github.com/enterprises/big"),
            Some(GitHubScope::Enterprise("big".into()))
        );
        assert_eq!(
            scope_of("https://ghes.example:8443/octo/app"),
            Some(GitHubScope::Repository { owner: "octo".into(), repository: "app".into() })
        );
    }

    #[test]
    fn urls_without_scope_or_scheme_are_rejected() {
        for url in ["https://github.com", "https://github.com/a/b/c", "github.com/octo", "https:///octo", ""]
        {
            let err = GitHubConfigUrl::parse(url).unwrap_err();
            assert!(matches!(err, BuildError::InvalidGitHubConfigUrl { .. }), "{url}: {err}");
        }
    }

    #[test]
    fn repository_urls_label_both_organization_and_repository() {
        let mut labels = BTreeMap::new();
        apply_github_url_labels("https://github.com/octo/app", &mut labels).unwrap();
        let expected: BTreeMap<String, String> = [
            ("actions.github.com/organization".to_string(), "octo".to_string()),
            ("actions.github.com/repository".to_string(), "app".to_string()),
        ]
        .into();
        assert_eq!(labels, expected);
    }

    #[test]
    fn label_values_are_trimmed_like_arc() {
        assert_eq!(trim_label_value("_.my-org-"), "my-org");
        let long = "x".repeat(70);
        let trimmed = trim_label_value(&long);
        assert_eq!(trimmed.len(), 63);
        assert!(trimmed.ends_with("-trim"));
    }
}
