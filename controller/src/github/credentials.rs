//! [`GitHubCredentials`]: what a GitHub config secret holds (ARC's keys: `github_token`, or
//! `github_app_id`, `github_app_installation_id` and `github_app_private_key`), read by the
//! reconcilers of both families and copied inline into the listener's config file.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use serde::{Deserialize, Serialize};

use super::client::{AppCredentials, Credentials};
use super::error::ActionsError;

/// GitHub credentials: either a personal access token or a GitHub App (ARC's `AppConfig`).
#[derive(Serialize, Deserialize, Clone, Default, PartialEq, Eq)]
pub struct GitHubCredentials {
    /// GitHub App id.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub github_app_id: String,
    /// GitHub App installation id.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub github_app_installation_id: i64,
    /// GitHub App private key (PEM).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub github_app_private_key: String,
    /// Personal access token.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub github_token: String,
}

impl std::fmt::Debug for GitHubCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let redacted = |secret: &str| if secret.is_empty() { "" } else { "<redacted>" };
        f.debug_struct("GitHubCredentials")
            .field("github_app_id", &self.github_app_id)
            .field("github_app_installation_id", &self.github_app_installation_id)
            .field("github_app_private_key", &redacted(&self.github_app_private_key))
            .field("github_token", &redacted(&self.github_token))
            .finish()
    }
}

fn is_zero(value: &i64) -> bool {
    *value == 0
}

/// Why a secret's credentials are unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialsError {
    /// Both a PAT and GitHub App credentials.
    #[error("both PAT and GitHub App credentials provided; provide only one")]
    AmbiguousCredentials,
    /// Neither a PAT nor complete GitHub App credentials.
    #[error("no credentials provided: either a PAT or GitHub App credentials should be provided")]
    MissingCredentials,
    /// A secret value that must be a number is not one.
    #[error("secret key {key:?} is not an integer")]
    NotAnInteger {
        /// The offending key.
        key: String,
    },
}

impl GitHubCredentials {
    /// Reads the credentials from a GitHub config secret's data.
    pub fn from_secret_data(data: &BTreeMap<String, ByteString>) -> Result<Self, CredentialsError> {
        let text =
            |key: &str| data.get(key).map(|v| String::from_utf8_lossy(&v.0).into_owned()).unwrap_or_default();
        let installation = text("github_app_installation_id");
        let github_app_installation_id = match installation.as_str() {
            "" => 0,
            digits => digits
                .parse()
                .map_err(|_| CredentialsError::NotAnInteger { key: "github_app_installation_id".into() })?,
        };
        let credentials = GitHubCredentials {
            github_app_id: text("github_app_id"),
            github_app_installation_id,
            github_app_private_key: text("github_app_private_key"),
            github_token: text("github_token"),
        };
        credentials.validate()?;
        Ok(credentials)
    }

    /// Exactly one of a PAT or complete GitHub App credentials.
    pub fn validate(&self) -> Result<(), CredentialsError> {
        let has_token = !self.github_token.is_empty();
        let has_app = !self.github_app_id.is_empty()
            && self.github_app_installation_id > 0
            && !self.github_app_private_key.is_empty();
        match (has_token, has_app) {
            (true, true) => Err(CredentialsError::AmbiguousCredentials),
            (false, false) => Err(CredentialsError::MissingCredentials),
            _ => Ok(()),
        }
    }

    /// What [`ActionsClient`](super::ActionsClient) authenticates with: the personal access token, or
    /// the GitHub App (its private key parsed here; an unusable key is a configuration error that
    /// names the key).
    pub fn client_credentials(&self) -> Result<Credentials, ActionsError> {
        if !self.github_token.is_empty() {
            return Ok(Credentials::Token(self.github_token.clone()));
        }
        let app = AppCredentials::new(
            &self.github_app_id,
            self.github_app_installation_id,
            &self.github_app_private_key,
        )
        .map_err(|e| ActionsError::Config { message: e.to_string() })?;
        Ok(Credentials::App(app))
    }

    /// A fingerprint of the credentials (FNV-1a), so clients can be cached per credentials without
    /// keeping a second copy of the secret around as a key.
    pub fn fingerprint(&self) -> u64 {
        crate::hash::fnv1a64(
            format!(
                "{}\0{}\0{}\0{}",
                self.github_token,
                self.github_app_id,
                self.github_app_installation_id,
                self.github_app_private_key
            )
            .as_bytes(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(pairs: &[(&str, &str)]) -> BTreeMap<String, ByteString> {
        pairs.iter().map(|(k, v)| (k.to_string(), ByteString(v.as_bytes().to_vec()))).collect()
    }

    #[test]
    fn a_secret_with_an_app_yields_app_credentials_with_its_key_parsed() {
        let key = crate::github::app_key::tests::FIXTURE_KEY;
        let app =
            [("github_app_id", "12"), ("github_app_installation_id", "34"), ("github_app_private_key", key)];
        let app = GitHubCredentials::from_secret_data(&data(&app)).unwrap();
        let Ok(Credentials::App(credentials)) = app.client_credentials() else { panic!("app credentials") };
        assert_eq!((credentials.app_id.as_str(), credentials.installation_id), ("12", 34));
        assert!(!format!("{:?}", Credentials::App(credentials)).contains("BEGIN"));
        let bad =
            [("github_app_id", "1"), ("github_app_installation_id", "2"), ("github_app_private_key", "k")];
        let bad = GitHubCredentials::from_secret_data(&data(&bad)).unwrap();
        assert!(bad.client_credentials().unwrap_err().to_string().contains("github_app_private_key"));
    }

    #[test]
    fn a_secret_holds_a_token_or_an_app_but_not_both() {
        let token = GitHubCredentials::from_secret_data(&data(&[("github_token", "ghp")])).unwrap();
        assert!(token.client_credentials().is_ok());
        let both = [
            ("github_token", "t"),
            ("github_app_id", "1"),
            ("github_app_installation_id", "2"),
            ("github_app_private_key", "k"),
        ];
        assert_eq!(
            GitHubCredentials::from_secret_data(&data(&both)),
            Err(CredentialsError::AmbiguousCredentials)
        );
        assert_eq!(
            GitHubCredentials::from_secret_data(&data(&[])),
            Err(CredentialsError::MissingCredentials)
        );
        let bad = [("github_app_installation_id", "x")];
        assert!(matches!(
            GitHubCredentials::from_secret_data(&data(&bad)),
            Err(CredentialsError::NotAnInteger { .. })
        ));
    }
}
