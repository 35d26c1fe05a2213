//! The controller under test, as the world plugs it in: what to start on the controller's manager and
//! how a listener pod runs. The world itself knows no reconciler; scenarios choose the plug
//! (the scale-set family, or the legacy Runner controller).

use std::sync::Arc;

use arc_controller::runtime::manager::Manager;
use arc_controller::runtime::metrics::Metrics;
use arc_controller::{Fixes, Optimisations, SharedClock};
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::github::ScriptedGitHub;

/// What a plug gets to build the controller with.
#[derive(Clone)]
pub struct ControllerInputs {
    /// The controller's API client (actor `controller`).
    pub client: kube::Client,
    /// The shared metrics registry (survives controller restarts).
    pub metrics: Metrics,
    /// The clock seam.
    pub clock: SharedClock,
    /// The fake GitHub's HTTP face (with its script of canned answers).
    pub github: ScriptedGitHub,
    /// Historic-fix switches.
    pub fixes: Fixes,
    /// Optimisation switches.
    pub optimisations: Optimisations,
}

/// What a listener pod's process gets.
#[derive(Clone)]
pub struct ListenerInputs {
    /// The listener's API client (actor `listener`).
    pub client: kube::Client,
    /// The listeners' metrics registry (apart from the controller's).
    pub metrics: Metrics,
    /// The clock seam.
    pub clock: SharedClock,
    /// The fake GitHub's HTTP face.
    pub github: ScriptedGitHub,
    /// Historic-fix switches.
    pub fixes: Fixes,
    /// Optimisation switches.
    pub optimisations: Optimisations,
}

/// Registers controllers on a fresh manager (called at start and after every controller restart).
pub type StartControllers = Arc<dyn Fn(&mut Manager, &ControllerInputs) + Send + Sync>;

/// Runs a listener process from its config file until it exits or is cancelled; yields the exit code.
pub type RunListener =
    Arc<dyn Fn(ListenerInputs, Vec<u8>, CancellationToken) -> BoxFuture<'static, i32> + Send + Sync>;

/// The controller under test.
#[derive(Clone)]
pub struct ControllerPlug {
    /// Name for traces and summaries (`scale-set`, `legacy`).
    pub name: &'static str,
    /// Starts the controllers.
    pub start: StartControllers,
    /// Runs listener pods; `None` when the plug has no listener (they then idle).
    pub listener: Option<RunListener>,
}

impl std::fmt::Debug for ControllerPlug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerPlug").field("name", &self.name).finish_non_exhaustive()
    }
}
