//! How a process runs its long-lived tasks: [`TaskWrap`], the seam the [`Manager`](super::manager::Manager)
//! hands every informer and controller task through before it spawns it.
//!
//! The binary runs each task as it is ([`AsIs`]). Whatever embeds the controller on a tokio runtime it
//! shares with other work can wrap them: to instrument each task, or to stop and resume all of one
//! process's tasks together, as an operating system stops a process and lets it go on (its timers
//! then fire late, at once, and its clock has jumped).

use std::sync::Arc;

use futures::future::BoxFuture;

/// Wraps each long-lived task of a process before it is spawned.
pub trait TaskWrap: Send + Sync {
    /// The task as it is to run.
    fn wrap(&self, task: BoxFuture<'static, ()>) -> BoxFuture<'static, ()>;
}

/// A process's task wrap, shared by everything it starts.
pub type SharedTaskWrap = Arc<dyn TaskWrap>;

/// Runs every task as it is: the binary's wrap.
#[derive(Debug, Clone, Copy, Default)]
pub struct AsIs;

impl TaskWrap for AsIs {
    fn wrap(&self, task: BoxFuture<'static, ()>) -> BoxFuture<'static, ()> {
        task
    }
}

impl AsIs {
    /// [`AsIs`] as a process's shared wrap.
    pub fn shared() -> SharedTaskWrap {
        Arc::new(AsIs)
    }
}
