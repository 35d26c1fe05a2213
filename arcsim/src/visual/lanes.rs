//! The lanes of a timeline: one per actor, the API server, each watch stream, the GitHub service,
//! each runner, each EphemeralRunner and pod (its phase band) and the world, in sections drawn top to
//! bottom. Lanes are named as events arrive and numbered once all are known.

use std::collections::BTreeMap;

use serde::Serialize;

/// Where a lane is drawn, top to bottom.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Section {
    /// The world's own steps (config, restarts, disruptions, settling).
    World,
    /// What a violation is about: its runners and objects, lifted out of their sections.
    Involved,
    /// API clients: the controller, listeners, the kubelet, the user.
    Actors,
    /// The fake API server: answers, commits, garbage collection, faults.
    ApiServer,
    /// The fake GitHub service: jobs, sessions, messages, HTTP calls.
    #[serde(rename = "github")]
    GitHub,
    /// One lane per watch stream, its deliveries.
    Watches,
    /// One lane per GitHub runner.
    Runners,
    /// One lane per EphemeralRunner, pod or legacy Runner: its phase over time.
    Objects,
}

/// One lane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Lane {
    /// Its name (`controller`, `watch#3 pods → controller`, `runner 17`, `pod arc-runners/x`).
    pub name: String,
    /// Its section.
    pub section: Section,
}

/// The lanes named so far; each keeps the position it was first named at, for ordering within its
/// section.
#[derive(Debug, Default)]
pub struct Lanes {
    by_name: BTreeMap<String, (Section, u64, usize)>,
}

impl Lanes {
    /// The provisional id of lane `name` in `section`, named at `order` (a sequence number or an id)
    /// if it is new.
    pub fn id(&mut self, name: &str, section: Section, order: u64) -> usize {
        let next = self.by_name.len();
        self.by_name.entry(name.to_string()).or_insert((section, order, next)).2
    }

    /// Moves lane `name`, if it exists, into `section`.
    pub fn lift(&mut self, name: &str, section: Section) {
        if let Some(lane) = self.by_name.get_mut(name) {
            lane.0 = section;
        }
    }

    /// The lanes in drawing order, and for each provisional id its final index.
    pub fn finish(self) -> (Vec<Lane>, Vec<usize>) {
        let mut all: Vec<(Section, u64, String, usize)> =
            self.by_name.into_iter().map(|(name, (section, order, id))| (section, order, name, id)).collect();
        all.sort();
        let mut remap = vec![0; all.len()];
        let lanes = all
            .into_iter()
            .enumerate()
            .map(|(index, (section, _, name, id))| {
                remap[id] = index;
                Lane { name, section }
            })
            .collect();
        (lanes, remap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_come_out_by_section_then_first_appearance() {
        let mut lanes = Lanes::default();
        let github = lanes.id("github", Section::GitHub, 5);
        let controller = lanes.id("controller", Section::Actors, 9);
        let world = lanes.id("world", Section::World, 0);
        let runner = lanes.id("runner 3", Section::Runners, 7);
        assert_eq!(lanes.id("controller", Section::Actors, 99), controller, "a known lane keeps its id");
        lanes.lift("runner 3", Section::Involved);
        let (ordered, remap) = lanes.finish();
        let names: Vec<&str> = ordered.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, vec!["world", "runner 3", "controller", "github"]);
        assert_eq!((remap[world], remap[runner], remap[controller], remap[github]), (0, 1, 2, 3));
    }
}
