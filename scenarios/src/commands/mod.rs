//! The `arcsim` subcommands, one module each.

pub mod apiserver;
