//! Which GitHub scope a Runner registers with, and the GitHub config URL its REST calls use.
//!
//! Exactly one of `enterprise`, `organization` and `repository` must be set (ARC's
//! `ValidateRepository`); a Runner that breaks this is reported and left alone, as ARC does. The
//! config URL is the controller's GitHub base URL plus `owner/repo`, `org` or `enterprises/<slug>`,
//! so the same client code serves github.com and Enterprise Server.

use crate::crd::RunnerSpec;

/// The scope a Runner registers with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RunnerScope {
    /// `spec.enterprise`.
    Enterprise(String),
    /// `spec.organization`.
    Organization(String),
    /// `spec.repository` (`owner/repo`).
    Repository(String),
}

/// Why a Runner's scope is unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum InvalidScope {
    /// None of the three fields is set.
    #[error("Spec needs enterprise, organization or repository")]
    Missing,
    /// More than one is set.
    #[error("Spec cannot have many fields defined enterprise, organization and repository")]
    Ambiguous,
    /// `repository` is not `owner/repo`.
    #[error("repository {0:?} is not of the form owner/repo")]
    MalformedRepository(String),
}

impl RunnerScope {
    /// The scope `spec` names.
    pub(crate) fn of(spec: &RunnerSpec) -> Result<Self, InvalidScope> {
        let set = [&spec.enterprise, &spec.organization, &spec.repository];
        match set.iter().filter(|field| !field.is_empty()).count() {
            0 => return Err(InvalidScope::Missing),
            1 => {}
            _ => return Err(InvalidScope::Ambiguous),
        }
        if !spec.enterprise.is_empty() {
            return Ok(RunnerScope::Enterprise(spec.enterprise.clone()));
        }
        if !spec.organization.is_empty() {
            return Ok(RunnerScope::Organization(spec.organization.clone()));
        }
        let well_formed = spec
            .repository
            .split_once('/')
            .is_some_and(|(owner, repo)| !owner.is_empty() && !repo.is_empty() && !repo.contains('/'));
        if !well_formed {
            return Err(InvalidScope::MalformedRepository(spec.repository.clone()));
        }
        Ok(RunnerScope::Repository(spec.repository.clone()))
    }

    /// The GitHub config URL of this scope under `github_base_url` (`https://github.com/`).
    pub(crate) fn config_url(&self, github_base_url: &str) -> String {
        let base = github_base_url.trim_end_matches('/');
        match self {
            RunnerScope::Enterprise(slug) => format!("{base}/enterprises/{slug}"),
            RunnerScope::Organization(org) => format!("{base}/{org}"),
            RunnerScope::Repository(repo) => format!("{base}/{repo}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::github::{GitHubConfigUrl, Scope};

    fn spec(enterprise: &str, organization: &str, repository: &str) -> RunnerSpec {
        RunnerSpec {
            enterprise: enterprise.into(),
            organization: organization.into(),
            repository: repository.into(),
            ..Default::default()
        }
    }

    #[test]
    fn exactly_one_scope_field_must_be_set() {
        assert_eq!(RunnerScope::of(&spec("", "", "")), Err(InvalidScope::Missing));
        assert_eq!(RunnerScope::of(&spec("", "o", "o/r")), Err(InvalidScope::Ambiguous));
        assert_eq!(RunnerScope::of(&spec("e", "", "")), Ok(RunnerScope::Enterprise("e".into())));
        assert_eq!(RunnerScope::of(&spec("", "o", "")), Ok(RunnerScope::Organization("o".into())));
        for bad in ["o", "o/", "/r", "o/r/x"] {
            assert_eq!(
                RunnerScope::of(&spec("", "", bad)),
                Err(InvalidScope::MalformedRepository(bad.into()))
            );
        }
    }

    #[test]
    fn config_urls_parse_back_to_the_same_scope() {
        let cases = [
            (spec("", "", "o/r"), Scope::Repository { owner: "o".into(), repository: "r".into() }),
            (spec("", "o", ""), Scope::Organization { organization: "o".into() }),
            (spec("e", "", ""), Scope::Enterprise { enterprise: "e".into() }),
        ];
        for (spec, expected) in cases {
            let url = RunnerScope::of(&spec).unwrap().config_url("https://ghes.example.com/");
            assert_eq!(GitHubConfigUrl::parse(&url).unwrap().scope(), &expected, "{url}");
        }
        let url = RunnerScope::Repository("o/r".into()).config_url("https://github.com");
        assert_eq!(url, "https://github.com/o/r");
    }
}
