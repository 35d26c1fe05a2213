//! [`Inputs`]: what a controller process is built from — its seams and its switches. The binary fills
//! them from a real cluster and GitHub; anything else that runs the controller (a test, a
//! simulation) fills them with its own client, transport and clock, and goes through the same
//! entry points ([`crate::start`], [`crate::scaleset::listener::run`]).

use crate::SharedClock;
use crate::github::GitHubTransport;
use crate::runtime::metrics::Metrics;
use crate::runtime::tasks::SharedTaskWrap;
use crate::switches::Switches;

/// The seams and switches of one controller or listener process.
#[derive(Clone)]
pub struct Inputs {
    /// The Kubernetes client (the kubeconfig's cluster in production).
    pub client: kube::Client,
    /// The wall-clock seam.
    pub clock: SharedClock,
    /// Where the process counts what it does.
    pub metrics: Metrics,
    /// How the process reaches GitHub.
    pub github: GitHubTransport,
    /// The behaviour switches (a profile's, by default this project's controller).
    pub switches: Switches,
    /// How the process runs its long-lived tasks ([`AsIs`](crate::runtime::tasks::AsIs) in the binary).
    pub tasks: SharedTaskWrap,
}

impl std::fmt::Debug for Inputs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inputs")
            .field("github", &self.github)
            .field("switches", &self.switches)
            .finish_non_exhaustive()
    }
}
