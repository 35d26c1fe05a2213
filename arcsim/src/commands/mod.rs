//! The `arcsim` subcommands, one module each.

pub mod apiserver;
pub mod app;
pub mod build_args;
pub mod columns;
pub mod exit;
pub mod explore;
pub mod list;
pub mod listen;
pub mod measure;
pub mod merge;
pub mod progress;
pub mod run;
pub mod serve;
pub mod shrink;
pub mod stage;
pub mod sweep;
