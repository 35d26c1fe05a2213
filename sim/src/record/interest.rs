//! [`Interest`]: which events a run keeps as values. Every event is rendered into the trace either
//! way; an interest only decides what oracles, probes and later tools can read back. Interests
//! combine by union, so a scenario keeps what any of its judges needs.

use std::any::TypeId;
use std::collections::{BTreeMap, BTreeSet};

use super::observed::Observed;

/// Which resources of one event type to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Resources {
    /// Every event of the type.
    All,
    /// Only events about these resource plurals.
    Only(BTreeSet<String>),
}

/// Which events to keep.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Interest {
    everything: bool,
    types: BTreeMap<TypeId, (&'static str, Resources)>,
}

impl Interest {
    /// Keep nothing.
    pub fn none() -> Self {
        Interest::default()
    }

    /// Keep every event (tests and tools that read the whole stream).
    pub fn everything() -> Self {
        Interest { everything: true, types: BTreeMap::new() }
    }

    /// Keep every event of type `T`.
    pub fn of<T: Observed>() -> Self {
        Interest::none().and::<T>()
    }

    /// Keep events of type `T` about `resources` only.
    pub fn of_resources<T: Observed>(resources: &[&str]) -> Self {
        Interest::none().and_resources::<T>(resources)
    }

    /// This interest plus every event of type `T`.
    #[must_use]
    pub fn and<T: Observed>(mut self) -> Self {
        self.types.insert(TypeId::of::<T>(), (std::any::type_name::<T>(), Resources::All));
        self
    }

    /// This interest plus events of type `T` about `resources`.
    #[must_use]
    pub fn and_resources<T: Observed>(self, resources: &[&str]) -> Self {
        let only = Resources::Only(resources.iter().map(|r| (*r).to_string()).collect());
        self.union(&Interest {
            everything: false,
            types: [(TypeId::of::<T>(), (std::any::type_name::<T>(), only))].into(),
        })
    }

    /// Everything either interest keeps.
    #[must_use]
    pub fn union(mut self, other: &Interest) -> Self {
        self.everything |= other.everything;
        for (key, (name, theirs)) in &other.types {
            let merged = match (self.types.remove(key).map(|(_, r)| r), theirs) {
                (None, r) => r.clone(),
                (Some(Resources::All), _) | (_, Resources::All) => Resources::All,
                (Some(Resources::Only(mut a)), Resources::Only(b)) => {
                    a.extend(b.iter().cloned());
                    Resources::Only(a)
                }
            };
            self.types.insert(*key, (name, merged));
        }
        self
    }

    /// Whether an event of type `type_id` about `resource` is kept.
    pub fn wants(&self, type_id: TypeId, resource: Option<&str>) -> bool {
        if self.everything {
            return true;
        }
        match self.types.get(&type_id) {
            None => false,
            Some((_, Resources::All)) => true,
            Some((_, Resources::Only(only))) => resource.is_some_and(|r| only.contains(r)),
        }
    }

    /// What the interest keeps, one line per event type (for the run's config line and `arcsim list`).
    pub fn describe(&self) -> Vec<String> {
        if self.everything {
            return vec!["everything".into()];
        }
        let mut lines: Vec<String> = self
            .types
            .values()
            .map(|(name, resources)| {
                let short = name.rsplit("::").next().unwrap_or(name);
                match resources {
                    Resources::All => short.to_string(),
                    Resources::Only(only) => {
                        format!("{short} of {}", only.iter().cloned().collect::<Vec<_>>().join(", "))
                    }
                }
            })
            .collect();
        lines.sort();
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Line;

    #[derive(Debug)]
    struct A;
    impl Observed for A {
        fn line(&self) -> Option<Line<'_>> {
            None
        }
        crate::observed_as_any!();
    }
    #[derive(Debug)]
    struct B;
    impl Observed for B {
        fn line(&self) -> Option<Line<'_>> {
            None
        }
        crate::observed_as_any!();
    }

    #[test]
    fn interests_keep_what_any_part_keeps() {
        let a = TypeId::of::<A>();
        let b = TypeId::of::<B>();
        let pods = Interest::of_resources::<A>(&["pods"]);
        assert!(pods.wants(a, Some("pods")) && !pods.wants(a, Some("secrets")) && !pods.wants(a, None));
        assert!(!pods.wants(b, None));
        let both = pods.union(&Interest::of_resources::<A>(&["secrets"])).and::<B>();
        assert!(both.wants(a, Some("secrets")) && both.wants(a, Some("pods")) && both.wants(b, None));
        let all = both.union(&Interest::of::<A>());
        assert!(all.wants(a, Some("anything")) && all.wants(a, None));
        assert!(Interest::everything().wants(b, None) && !Interest::none().wants(b, None));
        assert_eq!(Interest::of::<B>().describe(), vec!["B".to_string()]);
    }
}
