//! [`Derived`]: what judges derive from a run's events, made by the first judge that asks and shared
//! with every later one. Several oracles and probes read the same index of a run: seven judges built
//! the map of every pod or runner commit by object, and three judged the run's scale-downs, each on
//! its own (at 1,000 runners those two were 3.7% of a seed). Like
//! [`EventsByType`](crate::events_by_type), a derived value belongs to the events it was made from: a
//! record whose events were cut or filtered since makes it again.

use std::any::{Any, TypeId};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use arc_sim::record::Event;

/// What identifies a run's events: how many, and the sequence numbers of the first and the last.
pub(crate) type Shape = (usize, Option<u64>, Option<u64>);

/// The shape of `events`.
pub(crate) fn shape(events: &[Event]) -> Shape {
    (events.len(), events.first().map(|e| e.seq), events.last().map(|e| e.seq))
}

/// A derived value of any type, with the shape of the events it was made from.
type Kept = (Shape, Arc<dyn Any + Send + Sync>);

/// The values derived from a record, by type and key. A clone starts empty.
#[derive(Default)]
pub(crate) struct Derived {
    values: Mutex<BTreeMap<(TypeId, String), Kept>>,
}

impl Derived {
    /// The `T` kept under `key` for events of `shape`, or the one `derive` makes (then kept). `derive`
    /// runs without the lock held, so it may ask for other derived values.
    pub(crate) fn get_or_derive<T: Any + Send + Sync>(
        &self,
        shape: Shape,
        key: &str,
        derive: impl FnOnce() -> T,
    ) -> Arc<T> {
        let id = (TypeId::of::<T>(), key.to_string());
        let kept = self.lock().get(&id).filter(|(made_from, _)| *made_from == shape).map(|(_, v)| v.clone());
        if let Some(value) = kept.and_then(|v| v.downcast::<T>().ok()) {
            return value;
        }
        let value = Arc::new(derive());
        self.lock().insert(id, (shape, value.clone()));
        value
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<(TypeId, String), Kept>> {
        self.values.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Clone for Derived {
    fn clone(&self) -> Self {
        Derived::default()
    }
}

impl fmt::Debug for Derived {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Derived({} values)", self.lock().len())
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use arc_sim::kubelet::{KubeletEvent, KubeletEventKind};

    use crate::SyntheticRun;

    fn removed(ms: u64) -> KubeletEvent {
        KubeletEvent { ms, pod: "ns/p".into(), uid: "u".into(), kind: KubeletEventKind::PodRemoved }
    }

    #[test]
    fn a_value_is_made_once_per_key_and_again_for_other_events() {
        let run = SyntheticRun::new().event(1, removed(1)).event(2, removed(2)).build();
        let made = Cell::new(0);
        let count = |r: &crate::RunRecord| {
            made.set(made.get() + 1);
            r.kubelet_events().count()
        };
        assert_eq!(*run.derived("all", count), 2);
        assert_eq!(*run.derived("all", count), 2);
        assert_eq!(made.get(), 1, "the second judge shares the first one's value");
        assert_eq!(*run.derived("other key", count), 2);
        assert_eq!(made.get(), 2, "each key is made on its own");
        let mut cut = run.clone();
        cut.events.truncate(1);
        assert_eq!(*cut.derived("all", count), 1, "a record with other events makes it again");
        assert_eq!(*run.clone().before(2).derived("all", count), 1);
        assert_eq!(made.get(), 4);
    }
}
