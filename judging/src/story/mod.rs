//! # The story of a run
//!
//! What a failure is about and what led to it, read from the run's record: the subjects a violation
//! names ([`subject`]), the commits by resourceVersion ([`commits`]), which events touch them and how they relate ([`involves`]), the window and the
//! events an oracle used ([`evidence`]), each event in one readable line ([`told`]), and the story
//! `arcsim run` prints before its counters (`arcsim::failure_story`). The timeline page, the Mermaid diagram
//! (`arcsim::visual`) and the story all start from here.

pub mod commits;
pub mod evidence;
pub mod involves;
pub mod subject;
pub mod told;

pub use evidence::Evidence;
pub use subject::Subject;
pub use told::{Told, tell};
