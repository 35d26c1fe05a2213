//! The numbers the set reads from each runner's annotations: `patch-id` (which listener patch the
//! runner answers), the \[V\] `actionable-revision` (which runner spec it was made from) and arcsim's
//! removal mark (`removing-runner-id`). The digests and the revision step read them the same way.

use crate::crd::EphemeralRunner;
use crate::crd::constants::{
    ANNOTATION_ACTIONABLE_REVISION, ANNOTATION_PATCH_ID, ANNOTATION_REMOVING_RUNNER_ID,
};

/// The `patch-id` annotation as a number; absent, malformed or negative reads as 0 (ARC ignores what
/// `strconv.Atoi` rejects and only keeps values above its 0 start).
pub(crate) fn patch_id_of(runner: &EphemeralRunner) -> i64 {
    annotation_number(runner, ANNOTATION_PATCH_ID).max(0)
}

/// The \[V\] `actionable-revision` annotation as a number; absent or malformed reads as 0.
pub(crate) fn revision_of(runner: &EphemeralRunner) -> i64 {
    annotation_number(runner, ANNOTATION_ACTIONABLE_REVISION)
}

/// The runner id the removal mark names, 0 when the runner carries none
/// (`fixes.delete_removed_runner_first`).
pub(crate) fn removing_runner_id(runner: &EphemeralRunner) -> i64 {
    annotation_number(runner, ANNOTATION_REMOVING_RUNNER_ID)
}

/// Found by equality, not the map's ordered search: the keys share the `actions.github.com/` prefix,
/// so an ordered comparison reads it again for every key, and this runs for every runner on every pass.
fn annotation_number(runner: &EphemeralRunner, key: &str) -> i64 {
    let annotations = runner.metadata.annotations.iter().flatten();
    let value = annotations.filter(|(name, _)| name.as_str() == key).map(|(_, value)| value).next();
    value.and_then(|value| value.parse().ok()).unwrap_or(0)
}
