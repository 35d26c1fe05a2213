//! Integration tests of the controller against arcsim's fakes: each reconciler against the fake API
//! server and the fake GitHub (with canned answers where a test needs one exact reply).
//!
//! [`support`] builds the harness and the fixtures; each other module covers one controller.

#[allow(dead_code)] // each test module uses a different subset of the harness
mod support;

/// The allocator `arcsim` runs with: the simulated runs here allocate as much as a sweep's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod autoscaling_listener;
mod autoscaling_runner_set;
mod deploy_sweep;
mod docs;
mod end_to_end;
mod ephemeral_runner;
mod ephemeral_runner_set;
mod findings;
mod legacy_runner;
mod listener;
mod races;
mod see_a_failure;
mod sharding;
mod staging;
