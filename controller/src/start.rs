//! The one wiring entry point of a controller process: [`start`] builds a manager on the process's
//! [`Inputs`], adds the controllers of the selected [`Families`] and starts it. The binary calls it
//! against a real cluster and GitHub; anything else that runs the controller calls it with its own
//! inputs, so what runs is wired exactly as what ships. (A listener pod's entry point is
//! [`crate::scaleset::listener::run`].)

use crate::inputs::Inputs;
use crate::legacy::{self, LegacySettings};
use crate::runtime::manager::Manager;
use crate::scaleset::{self, ScaleSetSettings};

/// Which controller families a process runs, each with its settings (`None`: not run).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Families {
    /// The scale-set family (AutoscalingRunnerSet, EphemeralRunnerSet, EphemeralRunner,
    /// AutoscalingListener).
    pub scale_set: Option<ScaleSetSettings>,
    /// The legacy Runner controller.
    pub legacy: Option<LegacySettings>,
}

impl Families {
    /// The scale-set family alone.
    pub fn scale_set(settings: ScaleSetSettings) -> Self {
        Families { scale_set: Some(settings), legacy: None }
    }

    /// The legacy Runner controller alone.
    pub fn legacy(settings: LegacySettings) -> Self {
        Families { scale_set: None, legacy: Some(settings) }
    }

    /// A short name for logs and traces: `scale-set`, `legacy`, `scale-set+legacy` or `none`.
    pub fn name(&self) -> &'static str {
        match (&self.scale_set, &self.legacy) {
            (Some(_), None) => "scale-set",
            (None, Some(_)) => "legacy",
            (Some(_), Some(_)) => "scale-set+legacy",
            (None, None) => "none",
        }
    }
}

/// Starts the controllers of `families` on a fresh manager over `inputs` and returns the running
/// manager (stop it with [`Manager::shutdown`]). Must be called inside the tokio runtime that will
/// drive it.
pub fn start(inputs: &Inputs, families: &Families) -> Manager {
    let mut manager = Manager::new(inputs.client.clone(), inputs.metrics.clone(), inputs.clock.clone())
        .wrapping_tasks(inputs.tasks.clone());
    if let Some(settings) = &families.scale_set {
        scaleset::start(&mut manager, inputs, settings.clone());
    }
    if let Some(settings) = &families.legacy {
        legacy::start(&mut manager, inputs, settings.clone());
    }
    manager.start();
    manager
}
