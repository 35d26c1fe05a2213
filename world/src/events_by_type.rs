//! [`EventsByType`]: where each type's events sit in a run's record, found in one pass the first time
//! a judge asks, so that the sixty-odd oracles and probes that each read one or two types of event do
//! not each walk, and downcast, every event of the run (issue 40: the judges' scans were about 3% of a
//! standard seed). The positions belong to the events they were built from; a record whose events were
//! cut or filtered since (a prefix, a subset) no longer matches them and is read by a plain scan.

use std::any::TypeId;
use std::collections::BTreeMap;
use std::sync::OnceLock;

use arc_sim::record::Event;

use crate::derived::{Shape, shape};

/// The positions of each type's events in a record, built on first use.
#[derive(Debug, Clone, Default)]
pub(crate) struct EventsByType {
    built: OnceLock<Positions>,
}

/// The positions, with what identifies the events they were built from.
#[derive(Debug, Clone)]
struct Positions {
    /// How many events there were, and the sequence numbers of the first and the last.
    shape: Shape,
    by_type: BTreeMap<TypeId, Vec<usize>>,
}

impl EventsByType {
    /// Where the events of type `ty` sit in `events`, in order; `None` when the positions were built
    /// from other events than these (the caller then scans).
    pub(crate) fn positions(&self, events: &[Event], ty: TypeId) -> Option<&[usize]> {
        let built = self.built.get_or_init(|| Positions::of(events));
        (built.shape == shape(events)).then(|| built.by_type.get(&ty).map_or(&[][..], Vec::as_slice))
    }
}

impl Positions {
    fn of(events: &[Event]) -> Self {
        let mut by_type: BTreeMap<TypeId, Vec<usize>> = BTreeMap::new();
        for (i, event) in events.iter().enumerate() {
            by_type.entry(event.body.as_any().type_id()).or_default().push(i);
        }
        Positions { shape: shape(events), by_type }
    }
}

#[cfg(test)]
mod tests {
    use arc_sim::apiserver::EventType;
    use arc_sim::kubelet::{KubeletEvent, KubeletEventKind};
    use serde_json::json;

    use crate::SyntheticRun;

    fn removed(ms: u64) -> KubeletEvent {
        KubeletEvent { ms, pod: "ns/p".into(), uid: "u".into(), kind: KubeletEventKind::PodRemoved }
    }

    #[test]
    fn each_type_reads_its_own_events_in_order_and_a_cut_record_reads_its_own() {
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}});
        let run = SyntheticRun::new()
            .event(1, removed(1))
            .committed(2, "pods", EventType::Added, pod)
            .event(3, removed(3))
            .build();
        let times = |r: &crate::RunRecord| r.kubelet_events().map(|e| e.ms).collect::<Vec<_>>();
        assert_eq!(times(&run), [1, 3]);
        assert_eq!(run.committed().map(|(ms, plural, _)| (ms, plural)).collect::<Vec<_>>(), [(2, "pods")]);
        let mut prefix = run.without_events();
        prefix.set_events(&run.events[..2]);
        assert_eq!(times(&prefix), [1], "positions found again for the prefix");
        let mut stale = run.clone();
        stale.events.truncate(1);
        assert_eq!(times(&stale), [1], "positions of other events are not used");
        assert_eq!(times(&run.clone().before(3)), [1]);
    }
}
