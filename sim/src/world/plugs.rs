//! The controllers arcsim plugs into the world: the production code of `arc-controller`, wired to the
//! world's clients exactly as its binary wires it to a real cluster and GitHub.

use std::sync::Arc;

use arc_controller::github::ActionsClient;
use arc_controller::scaleset::context::token_of;
use arc_controller::scaleset::listener::{CancellationToken, Listener};
use arc_controller::scaleset::resource_builder::ListenerConfig;
use futures::FutureExt;

use arc_controller::legacy::context::{LegacyContext, LegacySettings};
use arc_controller::runtime::api::KubeApi;
use arc_controller::scaleset::context::{ScaleSetContext, ScaleSetSettings};
use arc_controller::scaleset::resource_builder::ResourceBuilder;
use serde_json::Value;

use super::Settled;
use super::github_clients::actions_clients;
use super::plug::{ControllerPlug, ListenerInputs, RunListener, StartControllers};
use crate::apiserver::FakeApiServer;
use crate::github::FakeGitHub;

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

/// The scale-set family (ARS, ERS, ER, AL controllers) with `settings`, and the real listener in
/// listener pods.
pub fn scale_set(settings: ScaleSetSettings) -> ControllerPlug {
    let start: StartControllers = Arc::new(move |manager, inputs| {
        let ctx = Arc::new(ScaleSetContext {
            api: KubeApi::new(inputs.client.clone(), &inputs.metrics),
            clock: inputs.clock.clone(),
            metrics: inputs.metrics.clone(),
            fixes: inputs.fixes,
            optimisations: inputs.optimisations,
            github: actions_clients(inputs.github.clone(), inputs.clock.clone(), inputs.metrics.clone()),
            builder: ResourceBuilder::default(),
            settings: settings.clone(),
        });
        arc_controller::scaleset::register(manager, &ctx);
    });
    ControllerPlug { name: "scale-set", start, listener: Some(listener()) }
}

/// The legacy Runner controller with `settings`.
pub fn legacy(settings: LegacySettings) -> ControllerPlug {
    let start: StartControllers = Arc::new(move |manager, inputs| {
        let ctx = Arc::new(LegacyContext::new(
            KubeApi::new(inputs.client.clone(), &inputs.metrics),
            inputs.clock.clone(),
            inputs.metrics.clone(),
            inputs.fixes,
            actions_clients(inputs.github.clone(), inputs.clock.clone(), inputs.metrics.clone()),
            settings.clone(),
        ));
        arc_controller::legacy::register(manager, &ctx);
    });
    ControllerPlug { name: "legacy", start, listener: None }
}

/// Settled, for the scale-set family: in `namespace`, no EphemeralRunner is deleting and exactly
/// `min_runners` are live; every pod left there belongs to one of them.
pub fn scale_set_settled(namespace: &str, min_runners: usize) -> Settled {
    let namespace = namespace.to_string();
    Arc::new(move |apiserver: &FakeApiServer, _github: &FakeGitHub| {
        let in_ns =
            |v: &Value| v.pointer("/metadata/namespace").and_then(Value::as_str) == Some(namespace.as_str());
        let runners: Vec<Value> =
            apiserver.objects("ephemeralrunners").into_iter().filter(|v| in_ns(v)).collect();
        let deleting = runners.iter().any(|r| r.pointer("/metadata/deletionTimestamp").is_some());
        let pods = apiserver.objects("pods").into_iter().filter(|v| in_ns(v)).count();
        !deleting && runners.len() == min_runners && pods <= runners.len()
    })
}

/// Settled, for the legacy controller: every Runner in `namespace` has exactly one pod, running, and
/// none is deleting.
pub fn legacy_settled(namespace: &str) -> Settled {
    let namespace = namespace.to_string();
    Arc::new(move |apiserver: &FakeApiServer, _github: &FakeGitHub| {
        let in_ns =
            |v: &Value| v.pointer("/metadata/namespace").and_then(Value::as_str) == Some(namespace.as_str());
        let runners = apiserver.objects("runners").into_iter().filter(|v| in_ns(v)).count();
        let pods: Vec<Value> = apiserver.objects("pods").into_iter().filter(|v| in_ns(v)).collect();
        let running = pods
            .iter()
            .filter(|p| p.pointer("/status/phase").and_then(Value::as_str) == Some("Running"))
            .count();
        let deleting = pods.iter().any(|p| p.pointer("/metadata/deletionTimestamp").is_some());
        !deleting && running == runners && pods.len() == runners
    })
}
