//! `arcsim merge`: the JSON files of a sharded sweep's shards become the table, the JSON and the exit
//! status one unsharded sweep would have given.

use std::path::PathBuf;

use crate::commands::sweep::finish;
use crate::merge::merge_files;

/// Options of `arcsim merge`.
#[derive(Debug, Clone, clap::Args)]
pub struct MergeArgs {
    /// The shards' JSON files (`arcsim sweep --shard I/N --json FILE`), each shard once, in any order.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Write the merged report as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// Merges, prints the tables, writes the JSON, and fails as the unsharded sweep would.
pub fn run(args: MergeArgs) -> anyhow::Result<()> {
    let report = merge_files(&args.files)?;
    finish(&report, args.json.as_deref())
}
