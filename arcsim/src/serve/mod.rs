//! # Serving a paused world
//!
//! `arcsim serve` runs a world to a simulated instant, pauses it, and serves it there: kubectl reads
//! the world's objects, a browser or curl reads the fake GitHub's state, and commands on stdin step the
//! world on. The world runs on its own paused runtime ([`arc_world::SteppedWorld`]); between steps
//! nothing polls it, so time stands still. What is served is a [`snapshot`] of the world taken at each
//! pause, answered by [`view`] (with kubectl's [`table`]s) from a server on a runtime of its own ([`server`]), so a request can
//! neither step the world nor draw from its seed. [`command`] reads the commands; [`sightings`]
//! reports the violations the world shows as it goes.

pub mod command;
pub mod server;
pub mod sightings;
pub mod snapshot;
pub mod table;
pub mod view;

pub use command::{Command, parse_duration};
pub use server::ViewServer;
pub use sightings::Sightings;
pub use snapshot::Snapshot;
pub use view::View;
