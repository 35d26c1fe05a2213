//! [`Connections`]: every live turmoil TCP connection of a run (both ends' tasks), so a partition can
//! reset the connections that cross it. Turmoil drops the segments of a partitioned link silently
//! and its TCP never retransmits, so without this a watch stream or a request in flight when the link
//! broke would hang forever, where a real client's keepalive or health check gives up and reconnects.
//! Simplified: the reset happens when the partition starts, not a keepalive timeout later.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::task::AbortHandle;

#[derive(Default)]
struct Live {
    next_id: u64,
    tasks: BTreeMap<u64, (IpAddr, IpAddr, AbortHandle)>,
}

/// The live connections' tasks, by the hosts at their two ends. Shared by a run's hosts.
#[derive(Default)]
pub struct Connections {
    live: Mutex<Live>,
}

impl Connections {
    fn live(&self) -> MutexGuard<'_, Live> {
        self.live.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs `task` (one end of a connection between `local` and `peer`) on the current runtime,
    /// registered until it ends.
    pub fn spawn<F>(self: &Arc<Self>, local: IpAddr, peer: IpAddr, task: F)
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        let id = {
            let mut live = self.live();
            live.next_id += 1;
            live.next_id
        };
        let registry = Arc::clone(self);
        let handle = tokio::spawn(async move {
            task.await;
            registry.live().tasks.remove(&id);
        });
        self.live().tasks.insert(id, (local, peer, handle.abort_handle()));
    }

    /// Aborts every connection task between `a` and `b` (either way); returns how many.
    pub fn reset_between(&self, a: IpAddr, b: IpAddr) -> usize {
        let mut live = self.live();
        let crossing: Vec<u64> = live
            .tasks
            .iter()
            .filter(|(_, (x, y, _))| (*x == a && *y == b) || (*x == b && *y == a))
            .map(|(id, _)| *id)
            .collect();
        for id in &crossing {
            if let Some((_, _, handle)) = live.tasks.remove(id) {
                handle.abort();
            }
        }
        crossing.len()
    }
}
