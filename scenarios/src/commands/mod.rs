//! The `arcsim` subcommands, one module each.

pub mod apiserver;
pub mod list;
pub mod measure;
pub mod run;
pub mod sweep;
