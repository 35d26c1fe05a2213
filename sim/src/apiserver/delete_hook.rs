//! A hook the world may set to hear of a client's delete of a named object just before it is served:
//! how a delayed-assignment perturbation (`crate::perturb`) lets the fake GitHub assign a held job
//! at the moment the controller deletes that job's runner. Nothing the API server answers depends on
//! the hook.

use std::sync::{Arc, Mutex};

/// Called with the client's actor, the resource plural and the object's name.
pub type DeleteHook = Arc<dyn Fn(&str, &str, &str) + Send + Sync>;

/// The hook, when one is set.
#[derive(Default)]
pub struct DeleteHookSlot(Mutex<Option<DeleteHook>>);

impl DeleteHookSlot {
    /// Sets the hook (replacing any earlier one).
    pub fn set(&self, hook: DeleteHook) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(hook);
    }

    /// Tells the hook, if any, that `actor` is deleting `plural` `name` (no lock is held meanwhile).
    pub fn before_delete(&self, actor: &str, plural: &str, name: &str) {
        let hook = self.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(hook) = hook {
            hook(actor, plural, name);
        }
    }
}
