//! Writing a run's pictures to files: the timeline page (`--html`) and the violation's sequence
//! diagram (`--mermaid`; fenced for Markdown when the file name ends in `.md`).

use std::path::{Path, PathBuf};

use arc_world::RunRecord;

use super::{build, mermaid, page};
use arc_scenarios::verdict::Verdict;

/// A picture that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {path}")]
pub struct WriteError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

fn write(path: &Path, text: &str) -> Result<(), WriteError> {
    std::fs::write(path, text).map_err(|source| WriteError { path: path.to_path_buf(), source })
}

/// Writes the timeline page of `run` to `path`; returns its size in bytes.
/// `replay` is the command the page shows (the verdict's own replay line with the run's flags: its
/// network, schedule and assumptions about GitHub).
pub fn write_html(
    path: &Path,
    run: &RunRecord,
    verdict: &Verdict,
    replay: &str,
) -> Result<usize, WriteError> {
    let mut timeline = build(run, verdict);
    timeline.meta.replay = replay.to_string();
    let html = page(&timeline);
    write(path, &html)?;
    Ok(html.len())
}

/// Writes the sequence diagram of `run`'s first violation to `path`; returns its line count.
pub fn write_mermaid(path: &Path, run: &RunRecord, verdict: &Verdict) -> Result<usize, WriteError> {
    let diagram = mermaid::sequence_diagram(run, verdict);
    let lines = diagram.lines().count();
    let markdown = path.extension().is_some_and(|e| e == "md");
    write(path, &if markdown { mermaid::fenced(&diagram) } else { diagram })?;
    Ok(lines)
}
