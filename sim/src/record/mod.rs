//! # The record of a run
//!
//! One typed, sequence-numbered stream of everything the simulated world observed: every fake emits
//! its events into the run's [`Recorder`] (API requests and their answers with the actor, watch
//! deliveries to each client, object reads, committed changes, GitHub calls, answers and state
//! changes, kubelet actions, injected faults, controller restarts and the world's own steps). Each
//! event has a simulated time and a sequence number that orders events within one instant.
//!
//! The trace is the stream's text form: every event that has a line renders it, in sequence order,
//! into the run's [`Trace`](crate::trace::Trace) (hashed always, kept in full on demand). Which
//! events are *kept* as values is decided by an [`Interest`]: oracles and probes say what they need,
//! the world keeps exactly that, and a sweep pays only for what its judges read.
//!
//! - [`observed`]: [`Observed`], what an event type implements (its actor, its line, its resource).
//! - [`recorder`]: the [`Recorder`] the fakes share, and the [`Event`]s it keeps.
//! - [`interest`]: [`Interest`], which event types (and resources) to keep.
//! - [`world`]: [`WorldEvent`], what the world itself does (config, restarts, disruptions, settling).
//!
//! The event types of the fakes live beside the fakes (an API request is the API server's, a runner
//! state change is GitHub's); this module knows none of them, so the fakes depend on it and not the
//! other way round.

pub mod interest;
pub mod observed;
pub mod recorder;
pub mod world;

pub use interest::Interest;
pub use observed::{Line, Observed};
pub use recorder::{Event, Recorder};
pub use world::WorldEvent;
