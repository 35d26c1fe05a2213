//! The kubelet model against the fake API server and the fake GitHub: pods scheduled, started, run,
//! restarted and killed; runner processes that register, take jobs and shut down; evictions and
//! crashes; the status it writes; how late its watch shows it a deletion; determinism.
//!
//! - [`support`]: the node harness (API server, GitHub, kubelet, a listener's client).
//! - [`capacity`]: pods Pending Unschedulable until room frees or a node joins.
//! - [`init_containers`]: init containers in order, failed starts (`StartError`) under Never and
//!   OnFailure, and OOMKilled.
//! - [`lifecycle`]: binding, running, restarts, evictions, crashes, missing secrets.
//! - [`node_loss`]: a node cut off from the control plane: Ready False, taint eviction, its return,
//!   its machine's death and pod GC, an operator's force delete.
//! - [`regular_sidecars`]: a second container beside the runner: statuses sorted by name, a pod held
//!   Running after its runner exits, a crashed sidecar under Never and OnFailure.
//! - [`status`]: the sequence and shape of the kubelet's status writes.
//! - [`termination`]: SIGTERM after the watch lag and a delay, the grace period, SIGKILL, and jobs
//!   GitHub assigns inside that window.
//! - [`config_sh`]: a legacy runner's `config.sh` over the fake GitHub's HTTP interface, as the
//!   summerwind image's `startup.sh` runs it.
//! - [`runner_sessions`]: a runner's session created over the fake GitHub's HTTP interface, retried
//!   as actions/runner retries it.
//! - [`slow_starts`]: failed and slow image pulls, runners that boot before they are online.
//! - [`watch`]: the kubelet's own watch lag, resuming and relisting.
//! - [`determinism`]: same seed, same trace.

mod capacity;
mod config_sh;
mod determinism;
mod init_containers;
mod lifecycle;
mod node_loss;
mod regular_sidecars;
mod runner_sessions;
mod sidecars;
mod slow_starts;
mod status;
mod support;
mod termination;
mod watch;
