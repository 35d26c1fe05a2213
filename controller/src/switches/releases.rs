//! [`Releases`]: upstream changes, by release, that are neither fixes of a bug the suite models nor
//! part of the \[V\] change set: on, the controller behaves as the release that brought the change;
//! off, as the releases before it. A profile of an older release turns the later ones off.

use serde::{Deserialize, Serialize};

use super::SwitchDoc;

/// Upstream changes by release. `Default` is this project's controller (0.14.2's behaviour: the
/// scale-set listener, the Outdated phase and init-container checks; none of 0.15.0's runner
/// lifecycle changes).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(default, deny_unknown_fields)]
pub struct Releases {
    /// #4383/#4390/#4405 (0.14.0): the listener is `actions/scaleset`'s: it acknowledges a message
    /// before acquiring its jobs, scales from the latest statistics on an empty long poll, marks its
    /// scaler dirty on every job event, and exits on a session conflict (ARC-MODEL §4.1, §4.3 \[SS\]).
    /// Off (0.13): `ghalistener`'s worker: AcquireJobs before DeleteMessage, an empty poll is an
    /// "empty batch" that reuses the last target (#3453) and asks for patch 0 only at the minimum,
    /// completions counted per message, and a session conflict retried every 30 s up to 10 times.
    pub scaleset_listener: bool,
    /// #4404 (0.14.0): a runner that exits 7 (deprecated version) is marked Outdated and removed
    /// from the service, and an Outdated runner makes its set Outdated. Off (0.13): exit 7 is one
    /// more non-zero exit.
    pub outdated_phase: bool,
    /// #4457 (0.14.2): an init container that terminated non-zero fails the runner's pod. Off: init
    /// containers are not inspected.
    pub init_container_check: bool,
    /// #4681 (0.15.0): a registered runner's pod is created before its runner id is recorded in the
    /// status (the id is recorded right after, in the same pass). Off: the id is recorded first.
    pub pod_before_identity: bool,
    /// #4683 (0.15.0): set cleanup (spec change, Outdated, deletion) leaves a runner with no
    /// recorded runner id alone, and its pod with it, until a later pass sees its id. Off: such a
    /// runner goes through RemoveRunner with id 0 (a no-op 204) and is deleted (#4653).
    pub cleanup_skips_unregistered: bool,
    /// #4664 (0.15.0; rests on the PR's commits `72706a73` and `67af96c3` and their tests, the
    /// merged code being outside the public snapshot): a deleting runner is deregistered by the id in
    /// its status, else the one in its JIT secret (none after a `Succeeded` phase: the runner removed
    /// itself). While its pod is live the service is asked first, as before (`JobStillRunning`: look
    /// again in 30 s); once the pod is gone or stopped, the registration finalizer goes at once and
    /// the id is removed by a background queue. No id: no call. Off: the status's id only, asked
    /// before the finalizer goes, whatever the pod.
    pub deregister_in_background: bool,
    /// #4571 (0.15.0; rests on the pull request's description, the merged code being outside the
    /// public snapshot): before it creates a missing AutoscalingListener, the ARS asks GitHub for its
    /// scale set by the id it recorded; if GitHub no longer knows it (404), the id is dropped and the
    /// next pass registers the scale set again by name, so the new listener gets a live id. A listener
    /// that already exists keeps its dead id until someone deletes it. Off: the recorded id is
    /// trusted whatever GitHub says (#4370).
    pub revalidate_scale_set: bool,
}

/// Every release switch, with its origin, in declaration order.
pub(super) const DOCS: &[SwitchDoc] = &[
    SwitchDoc::new(
        "scaleset_listener",
        "#4383/#4390/#4405 (0.14.0)",
        "the actions/scaleset listener, not ghalistener's worker",
    ),
    SwitchDoc::new("outdated_phase", "#4404 (0.14.0)", "exit 7 marks the runner (and its set) Outdated"),
    SwitchDoc::new(
        "init_container_check",
        "#4457 (0.14.2)",
        "a failed init container fails the runner's pod",
    ),
    SwitchDoc::new("pod_before_identity", "#4681 (0.15.0)", "create the pod before recording the runner id"),
    SwitchDoc::new(
        "cleanup_skips_unregistered",
        "#4683 (0.15.0)",
        "set cleanup leaves runners without a runner id",
    ),
    SwitchDoc::new(
        "deregister_in_background",
        "#4664 (0.15.0, PR commits)",
        "runner id from the JIT secret; stopped pods deregistered by a background queue",
    ),
    SwitchDoc::new(
        "revalidate_scale_set",
        "#4571 (0.15.0, PR description)",
        "a vanished scale set is registered again before a new listener is built",
    ),
];

impl Default for Releases {
    fn default() -> Self {
        Releases {
            scaleset_listener: true,
            outdated_phase: true,
            init_container_check: true,
            pod_before_identity: false,
            cleanup_skips_unregistered: false,
            deregister_in_background: false,
            revalidate_scale_set: false,
        }
    }
}

impl Releases {
    /// gha-runner-scale-set-0.13.1: none of the later changes.
    pub const fn v0_13_1() -> Self {
        Releases {
            scaleset_listener: false,
            outdated_phase: false,
            init_container_check: false,
            pod_before_identity: false,
            cleanup_skips_unregistered: false,
            deregister_in_background: false,
            revalidate_scale_set: false,
        }
    }

    /// gha-runner-scale-set-0.15.0: every change modelled here.
    pub const fn v0_15_0() -> Self {
        Releases {
            scaleset_listener: true,
            outdated_phase: true,
            init_container_check: true,
            pod_before_identity: true,
            cleanup_skips_unregistered: true,
            deregister_in_background: true,
            revalidate_scale_set: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switches::docs_match_fields;

    #[test]
    fn the_default_is_0_14_2_behaviour() {
        let default = Releases::default();
        assert!(default.scaleset_listener && default.outdated_phase && default.init_container_check);
        assert!(!default.pod_before_identity && !default.cleanup_skips_unregistered);
        assert_ne!(default, Releases::v0_13_1());
        assert_ne!(default, Releases::v0_15_0());
    }

    #[test]
    fn every_release_switch_is_documented_in_order() {
        docs_match_fields(&Releases::default(), DOCS);
    }
}
