//! The scale-set family of ARC (`actions.github.com`): what its controllers build and which
//! updates they care about.
//!
//! - [`resource_builder`]: pure builders for every object the scale-set controllers create.
//! - [`predicates`]: the \[V\] update predicates of the owned watches (ARC-MODEL §5.1).

pub mod predicates;
pub mod resource_builder;
