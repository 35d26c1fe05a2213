//! # Seeing a run
//!
//! A run's record drawn for a person: [`timeline`] lays it out (lanes per actor, the API server, each
//! watch stream, GitHub, each runner and object; arrows for requests and watch deliveries with their
//! lag; phase bands; faults, restarts and probes marked; each violation with its window and the events
//! its oracle used) and [`html`] writes it as one self-contained page, its data [`packed`]; [`mermaid`] draws a violation's
//! window as a sequence diagram for an issue. [`lanes`], [`placement`], [`bands`] and
//! [`probe_times`] are the timeline's parts.

pub mod bands;
pub mod body_budget;
pub mod files;
pub mod html;
pub mod lanes;
pub mod mermaid;
pub mod packed;
pub mod page_data;
pub mod placement;
pub mod probe_times;
pub mod timeline;

pub use html::page;
pub use mermaid::sequence_diagram;
pub use timeline::{Timeline, build};
