//! The listener's config file (`config.json` in the `<al>-config` secret, mounted at
//! `/etc/gha-listener`), with ARC's snake_case field names (`cmd/ghalistener/config`). The AL
//! controller writes it; the listener reads it with [`ListenerConfig::from_json`].
//!
//! As in ARC, the credentials are copied inline from the ARS's GitHub config secret (a PAT, or a
//! GitHub App's id, installation id and private key), and so is the `githubServerTLS` CA
//! (`server_root_ca`). Proxies reach the listener as environment variables of its pod. `github_config_secret` records which secret
//! they came from, so the listener can name it in its errors.

use serde::{Deserialize, Serialize};

use crate::github::{CredentialsError, GitHubCredentials};

/// Why a listener config (or the credentials for it) is unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListenerConfigError {
    /// `configure_url` is empty.
    #[error("GitHubConfigUrl is not provided")]
    MissingConfigUrl,
    /// The ERS coordinates are incomplete.
    #[error("EphemeralRunnerSetNamespace {namespace:?} or EphemeralRunnerSetName {name:?} is missing")]
    MissingRunnerSet {
        /// The namespace given.
        namespace: String,
        /// The name given.
        name: String,
    },
    /// `runner_scale_set_id` is 0.
    #[error("RunnerScaleSetId is missing")]
    MissingScaleSetId,
    /// `min_runners > max_runners`.
    #[error("MinRunners {min} cannot be greater than MaxRunners {max}")]
    MinAboveMax {
        /// minRunners.
        min: i32,
        /// maxRunners.
        max: i32,
    },
    /// The credentials are unusable.
    #[error(transparent)]
    Credentials(#[from] CredentialsError),
    /// The file is not a listener config.
    #[error("cannot decode the listener config: {0}")]
    Decode(String),
}

/// The listener's configuration file.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct ListenerConfig {
    /// The GitHub config URL of the scale set.
    pub configure_url: String,
    /// Name of the GitHub config secret the credentials were copied from (in the ARS namespace).
    #[serde(default)]
    pub github_config_secret: String,
    /// The credentials, inline.
    #[serde(flatten)]
    pub credentials: GitHubCredentials,
    /// Namespace of the ERS the listener patches.
    pub ephemeral_runner_set_namespace: String,
    /// Name of the ERS the listener patches.
    pub ephemeral_runner_set_name: String,
    /// Effective maximum runners.
    pub max_runners: i32,
    /// Effective minimum runners.
    pub min_runners: i32,
    /// Scale-set id at GitHub.
    pub runner_scale_set_id: i64,
    /// The ARS name (used for the listener's session owner and logs).
    #[serde(default)]
    pub runner_scale_set_name: String,
    /// `debug`, `info`, `warn` or `error`.
    #[serde(default)]
    pub log_level: String,
    /// `text` or `json`.
    #[serde(default)]
    pub log_format: String,
    /// PEM CA certificates to trust besides the platform's for the GitHub server (ARC's
    /// `server_root_ca`, from the ARS's `githubServerTLS`); empty when none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub server_root_ca: String,
}

impl ListenerConfig {
    /// ARC's `Config.Validate`.
    pub fn validate(&self) -> Result<(), ListenerConfigError> {
        if self.configure_url.is_empty() {
            return Err(ListenerConfigError::MissingConfigUrl);
        }
        if self.ephemeral_runner_set_namespace.is_empty() || self.ephemeral_runner_set_name.is_empty() {
            return Err(ListenerConfigError::MissingRunnerSet {
                namespace: self.ephemeral_runner_set_namespace.clone(),
                name: self.ephemeral_runner_set_name.clone(),
            });
        }
        if self.runner_scale_set_id == 0 {
            return Err(ListenerConfigError::MissingScaleSetId);
        }
        if self.max_runners < self.min_runners {
            return Err(ListenerConfigError::MinAboveMax { min: self.min_runners, max: self.max_runners });
        }
        Ok(self.credentials.validate()?)
    }

    /// Parses and validates a config file.
    pub fn from_json(bytes: &[u8]) -> Result<Self, ListenerConfigError> {
        let config: ListenerConfig =
            serde_json::from_slice(bytes).map_err(|e| ListenerConfigError::Decode(e.to_string()))?;
        config.validate()?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid() -> ListenerConfig {
        ListenerConfig {
            configure_url: "https://github.com/octo".into(),
            github_config_secret: "gh".into(),
            credentials: GitHubCredentials { github_token: "ghp_x".into(), ..Default::default() },
            ephemeral_runner_set_namespace: "runners".into(),
            ephemeral_runner_set_name: "arc".into(),
            max_runners: 5,
            min_runners: 1,
            runner_scale_set_id: 7,
            runner_scale_set_name: "arc".into(),
            log_level: "debug".into(),
            log_format: "text".into(),
            server_root_ca: String::new(),
        }
    }

    #[test]
    fn the_file_uses_arc_field_names_with_inline_credentials() {
        let json = serde_json::to_value(valid()).unwrap();
        for key in [
            "configure_url",
            "github_token",
            "ephemeral_runner_set_namespace",
            "ephemeral_runner_set_name",
            "max_runners",
            "min_runners",
            "runner_scale_set_id",
        ] {
            assert!(json.get(key).is_some(), "missing {key} in {json}");
        }
        assert!(json.get("github_app_id").is_none());
    }

    #[test]
    fn a_config_round_trips_through_json() {
        let bytes = serde_json::to_vec(&valid()).unwrap();
        assert_eq!(ListenerConfig::from_json(&bytes), Ok(valid()));
    }

    #[test]
    fn validation_names_the_first_problem() {
        let with = |f: fn(&mut ListenerConfig)| {
            let mut config = valid();
            f(&mut config);
            config.validate().unwrap_err()
        };
        assert_eq!(with(|c| c.configure_url.clear()), ListenerConfigError::MissingConfigUrl);
        assert!(matches!(
            with(|c| c.ephemeral_runner_set_name.clear()),
            ListenerConfigError::MissingRunnerSet { .. }
        ));
        assert_eq!(with(|c| c.runner_scale_set_id = 0), ListenerConfigError::MissingScaleSetId);
        assert_eq!(with(|c| c.min_runners = 9), ListenerConfigError::MinAboveMax { min: 9, max: 5 });
        assert_eq!(
            with(|c| c.credentials.github_token.clear()),
            ListenerConfigError::Credentials(CredentialsError::MissingCredentials)
        );
    }

    #[test]
    fn garbage_is_a_decode_error() {
        assert!(matches!(ListenerConfig::from_json(b"{"), Err(ListenerConfigError::Decode(_))));
    }
}
