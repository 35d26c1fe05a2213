//! [`RunnerDraft`]: a reconcile's working copy of the cached EphemeralRunner, and the writes built from
//! it (ARC-MODEL §5.3).
//!
//! The draft wraps the cached `Arc` in a [`LazyCopy`], so reading costs nothing and the first change
//! takes the one copy of the reconcile. Two writes come out of it: a merge patch of the main resource
//! (no `status`) and a merge patch of the status subresource (only `status`). Each carries what changed
//! since the last write of that part in this reconcile, against the cached object before the first,
//! like ARC's `client.MergeFrom(original)` with a fresh `original` after each write. Nothing is sent when
//! nothing was mutated or the mutations changed nothing.

use crate::kit::meta::namespace_and_name;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::crd::{EphemeralRunner, EphemeralRunnerStatus};
use crate::kit::error::Result;
use crate::runtime::api::KubeApi;
use crate::runtime::lazy_copy::{CopyMode, LazyCopy, LazyCopyError};
use crate::runtime::merge_patch;
use crate::runtime::metrics::Metrics;

/// The member of a serialised object that the status subresource holds.
const STATUS: &str = "status";

/// The cached runner, its lazy copy, and what this reconcile already wrote.
#[derive(Debug)]
pub(super) struct RunnerDraft {
    lazy: LazyCopy<EphemeralRunner>,
    /// The object as the API server holds it after this reconcile's writes (as JSON); `None` before
    /// the first write, when the cached object is the baseline.
    written: Option<Value>,
}

impl RunnerDraft {
    /// A draft of the cached `runner`.
    pub(super) fn new(runner: Arc<EphemeralRunner>, mode: CopyMode, metrics: &Metrics) -> Self {
        RunnerDraft { lazy: LazyCopy::new(runner, mode, metrics), written: None }
    }

    /// The runner as this reconcile sees it now.
    pub(super) fn get(&self) -> &EphemeralRunner {
        self.lazy.get()
    }

    /// The runner, for changing (the first call takes the copy).
    pub(super) fn mutate(&mut self) -> &mut EphemeralRunner {
        self.lazy.mutate()
    }

    /// The runner's status, for changing; created empty when absent.
    pub(super) fn status_mut(&mut self) -> &mut EphemeralRunnerStatus {
        self.mutate().status.get_or_insert_with(EphemeralRunnerStatus::default)
    }

    /// Sends the unsent changes outside `status` as a merge patch; `false` when there were none.
    pub(super) async fn patch(&mut self, api: &KubeApi) -> Result<bool> {
        let Some((baseline, live)) = self.baseline_and_live()? else {
            return Ok(false);
        };
        let mut patch = merge_patch::diff(&baseline, &live);
        if let Value::Object(fields) = &mut patch {
            fields.remove(STATUS);
        }
        if is_empty(&patch) {
            return Ok(false);
        }
        let (namespace, name) = namespace_and_name(self.get());
        api.patch_merge::<EphemeralRunner>(namespace, name, &patch).await?;
        self.written = Some(with_status_of(live, &baseline));
        Ok(true)
    }

    /// Sends the unsent changes to `status` as a status merge patch; `false` when there were none.
    pub(super) async fn patch_status(&mut self, api: &KubeApi) -> Result<bool> {
        let Some((baseline, live)) = self.baseline_and_live()? else {
            return Ok(false);
        };
        let Some(status) = merge_patch::diff(&baseline, &live).get(STATUS).cloned() else {
            return Ok(false);
        };
        let patch = Value::Object(Map::from_iter([(STATUS.to_string(), status)]));
        let (namespace, name) = namespace_and_name(self.get());
        api.patch_merge_status::<EphemeralRunner>(namespace, name, &patch).await?;
        self.written = Some(with_status_of(baseline, &live));
        Ok(true)
    }

    /// What the server holds and what the draft holds, as JSON; `None` when nothing was mutated.
    fn baseline_and_live(&self) -> Result<Option<(Value, Value)>> {
        if !self.lazy.is_modified() {
            return Ok(None);
        }
        let baseline = match &self.written {
            Some(written) => written.clone(),
            None => serde_json::to_value(self.lazy.original()).map_err(LazyCopyError::from)?,
        };
        let live = serde_json::to_value(self.get()).map_err(LazyCopyError::from)?;
        Ok(Some((baseline, live)))
    }
}

/// `object` with the `status` of `source` (or none, if `source` has none).
fn with_status_of(mut object: Value, source: &Value) -> Value {
    if let Value::Object(fields) = &mut object {
        match source.get(STATUS) {
            Some(status) => fields.insert(STATUS.to_string(), status.clone()),
            None => fields.remove(STATUS),
        };
    }
    object
}

/// Whether a patch changes nothing.
fn is_empty(patch: &Value) -> bool {
    patch.as_object().is_some_and(Map::is_empty)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_status_part_moves_between_documents_and_the_rest_stays() {
        let draft = json!({"metadata": {"finalizers": ["a"]}, "status": {"runnerId": 2}});
        let server = json!({"metadata": {"finalizers": []}});
        assert_eq!(
            with_status_of(server.clone(), &draft),
            json!({"metadata": {"finalizers": []}, "status": {"runnerId": 2}})
        );
        assert_eq!(with_status_of(draft, &server), json!({"metadata": {"finalizers": ["a"]}}));
        assert!(is_empty(&json!({})));
        assert!(!is_empty(&json!({"status": {}})));
    }
}
