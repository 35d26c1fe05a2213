//! The controllers arcsim plugs into the world: the production code of `arc-controller`, wired to the
//! world's clients exactly as its binary wires it to a real cluster and GitHub.

use std::sync::Arc;

use arc_controller::github::ActionsClient;
use arc_controller::scaleset::context::token_of;
use arc_controller::scaleset::listener::{CancellationToken, Listener};
use arc_controller::scaleset::resource_builder::ListenerConfig;
use futures::FutureExt;

use super::plug::{ListenerInputs, RunListener};

/// Runs the controller's real listener in a listener pod: its config file, its own API client and
/// GitHub client. Exit 0 when it stops cleanly (cancelled), 1 on any error, as the binary does.
pub fn listener() -> RunListener {
    Arc::new(|inputs: ListenerInputs, config_file: Vec<u8>, cancel: CancellationToken| {
        async move {
            match start_listener(inputs, &config_file) {
                Ok(listener) => match listener.run(cancel).await {
                    Ok(()) => 0,
                    Err(e) => {
                        tracing::info!(error = %e, "listener exited with an error");
                        1
                    }
                },
                Err(e) => {
                    tracing::info!(error = %e, "listener could not start");
                    1
                }
            }
        }
        .boxed()
    })
}

fn start_listener(inputs: ListenerInputs, config_file: &[u8]) -> Result<Listener, String> {
    let config = ListenerConfig::from_json(config_file).map_err(|e| e.to_string())?;
    let credentials = token_of(&config.credentials).map_err(|e| e.to_string())?;
    let github = ActionsClient::new(
        inputs.github,
        &config.configure_url,
        credentials,
        inputs.clock.clone(),
        inputs.metrics.clone(),
    )
    .map_err(|e| e.to_string())?;
    Listener::new(
        config,
        inputs.client,
        github,
        inputs.clock,
        inputs.metrics,
        inputs.fixes,
        inputs.optimisations,
    )
    .map_err(|e| e.to_string())
}
