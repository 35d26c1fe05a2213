//! Named profiles: a controller build as a [`Switches`] value.
//!
//! | profile | what it is | sources |
//! |---|---|---|
//! | `arc-0.13.1` | ARC at tag `gha-runner-scale-set-0.13.1` (legacy: `0b9bef2c`, #1125) | the tag's `controllers/actions.github.com/*.go`, `cmd/ghalistener/{listener,worker}`; legacy `controllers/runner_controller.go`, `hash/` at `0b9bef2c` |
//! | `arc-0.15.0` | ARC `gha-runner-scale-set-0.15.0` (2026-10-01) | its pull requests (the tag is not in the stored snapshot): #4638/#4644 revision, #4642 cleanup-first and suppression, #4646 Running from the listener with a guarded write, #4647 predicates (with `452febd4`'s JobID), #4580 finalizers, #4664 background deregistration (from the PR's commits `72706a73`/`67af96c3` and tests; labelled merged, its merged code unread); #4681 and #4683 from ARC-MODEL §13's release list and #4653 (no PR text read) |
//! | `change-set` | exactly ARC-MODEL §5 on ARC HEAD `2ee6b3b8` | ARC-MODEL §5.1–§5.4 |
//! | `arcsim` | this project's controller (every fix on); the default | this repository |
//!
//! What a profile cannot express stays as the controller has it; docs/profiles.md lists
//! those remaining differences per profile (for `arc-0.13.1`: the ARS keeps HEAD's single runner
//! set updated in place instead of 0.13.1's new runner set per spec hash, the ARS and listener
//! controllers are HEAD's, 0.13.1's runner-set cleanup also removes busy runners through
//! RemoveRunner, and the proxy secret is updated on drift; for `arc-0.15.0`: #4664 is modelled from
//! its pull request's commits (`releases.deregister_in_background`) and #4571 from its description
//! (`releases.revalidate_scale_set`), #4692, #4696 and #4516's details are not modelled, and lazy
//! copy, the
//! deleting-aware scale-up and the count-less status are off for want of a source).

use std::fmt;
use std::str::FromStr;

use super::{Departures, Fixes, Optimisations, Releases, ScalingCore, Switches};

/// A named controller build.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Profile {
    /// ARC gha-runner-scale-set-0.13.1 (and the legacy controller at `0b9bef2c`).
    #[serde(rename = "arc-0.13.1")]
    Arc0131,
    /// ARC gha-runner-scale-set-0.15.0.
    #[serde(rename = "arc-0.15.0")]
    Arc0150,
    /// Exactly the \[V\] change set of ARC-MODEL §5, on ARC HEAD.
    #[serde(rename = "change-set")]
    ChangeSet,
    /// This project's controller: every fix on. The default.
    #[serde(rename = "arcsim")]
    #[default]
    Arcsim,
}

impl Profile {
    /// Every profile, oldest first, the default last.
    pub const ALL: [Profile; 4] = [Profile::Arc0131, Profile::Arc0150, Profile::ChangeSet, Profile::Arcsim];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Arc0131 => "arc-0.13.1",
            Profile::Arc0150 => "arc-0.15.0",
            Profile::ChangeSet => "change-set",
            Profile::Arcsim => "arcsim",
        }
    }

    /// One line on what the profile is.
    pub fn describe(self) -> &'static str {
        match self {
            Profile::Arc0131 => "ARC gha-runner-scale-set-0.13.1 (legacy: 0b9bef2c, #1125)",
            Profile::Arc0150 => "ARC gha-runner-scale-set-0.15.0 (2026-10-01), from its pull requests",
            Profile::ChangeSet => "exactly the [V] change set of ARC-MODEL §5, on ARC HEAD",
            Profile::Arcsim => "this project's controller: every fix on (the default)",
        }
    }

    /// The profile's switches.
    pub fn switches(self) -> Switches {
        match self {
            Profile::Arc0131 => arc_0_13_1(),
            Profile::Arc0150 => arc_0_15_0(),
            Profile::ChangeSet => change_set(),
            Profile::Arcsim => Switches::default(),
        }
    }
}

/// The fixes every upstream profile has: everything ARC merged before 0.13.1, none of arcsim's, and
/// none of the fixes of features 0.13.1 lacks (predicates, the listener's Running write).
const fn upstream_fixes() -> Fixes {
    Fixes {
        predicate_includes_job_id: false,
        ars_predicate_includes_counts: false,
        running_never_overwrites_terminal: false,
        reread_runner_before_removal: false,
        reread_runner_before_deregistration: false,
        // 0.15.0's finalizer never asks for id 0 through #4664 (`releases.deregister_in_background`).
        remove_runner_by_known_id: false,
        delete_removed_runner_first: false,
        keep_unlisted_running_runner: false,
        acquire_before_ack: false,
        reread_statistics_when_quiet: false,
        replace_runner_whose_registration_is_gone: false,
        acquire_acquirable_jobs_on_open: false,
        new_session_when_session_gone: false,
        recreate_crashed_runner_with_stale_token: false,
        writes_stop_at_lease_deadline: false,
        init_check_skips_sidecars: false,
        ..Fixes::all_on()
    }
}

fn arc_0_13_1() -> Switches {
    Switches {
        fixes: upstream_fixes(),
        optimisations: Optimisations::all_off(),
        scaling: ScalingCore::upstream(),
        releases: Releases::v0_13_1(),
        departures: Departures::upstream(),
    }
}

fn arc_0_15_0() -> Switches {
    Switches {
        fixes: Fixes {
            predicate_includes_job_id: true,
            running_never_overwrites_terminal: true,
            ..upstream_fixes()
        },
        optimisations: Optimisations { lazy_copy: false, ..Optimisations::all_on() },
        scaling: ScalingCore {
            actionable_revision: true,
            cleanup_finished_first: true,
            suppress_cleanup_scale_up: true,
            ..ScalingCore::upstream()
        },
        releases: Releases::v0_15_0(),
        departures: Departures::upstream(),
    }
}

fn change_set() -> Switches {
    Switches {
        fixes: Fixes { running_never_overwrites_terminal: true, ..upstream_fixes() },
        optimisations: Optimisations::all_on(),
        scaling: ScalingCore::change_set(),
        releases: Releases::default(),
        departures: Departures::upstream(),
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown profile name, with the valid ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown profile {0:?}; valid: {valid}", valid = Profile::ALL.map(Profile::name).join(", "))]
pub struct UnknownProfile(pub String);

impl FromStr for Profile {
    type Err = UnknownProfile;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Profile::ALL.into_iter().find(|p| p.name() == s).ok_or_else(|| UnknownProfile(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_parse_by_name_and_an_unknown_one_lists_the_valid_ones() {
        for profile in Profile::ALL {
            assert_eq!(profile.name().parse::<Profile>(), Ok(profile));
        }
        let err = "arc-0.14".parse::<Profile>().unwrap_err().to_string();
        assert!(
            err.contains("unknown profile \"arc-0.14\"") && err.contains("arc-0.13.1, arc-0.15.0"),
            "{err}"
        );
    }

    #[test]
    fn arc_0_13_1_has_no_change_set_and_no_later_release() {
        let s = Profile::Arc0131.switches();
        assert_eq!(s.optimisations, Optimisations::all_off());
        assert_eq!(s.scaling, ScalingCore::upstream());
        assert_eq!(s.releases, Releases::v0_13_1());
        assert_eq!(s.departures, Departures::upstream());
        assert!(
            s.fixes.already_exists_requeue && s.fixes.add_both_finalizers_at_once && s.fixes.patch_id_gate
        );
        assert!(!s.fixes.reread_runner_before_removal && !s.fixes.keep_unlisted_running_runner);
        assert!(!s.fixes.reread_runner_before_deregistration);
    }

    #[test]
    fn arc_0_15_0_takes_the_revision_cleanup_first_and_listener_running_upstream() {
        let s = Profile::Arc0150.switches();
        assert!(s.scaling.actionable_revision && s.scaling.cleanup_finished_first);
        assert!(s.scaling.suppress_cleanup_scale_up && !s.scaling.status_without_counts);
        assert!(s.optimisations.predicates && s.optimisations.running_from_listener);
        assert!(s.fixes.predicate_includes_job_id && !s.fixes.ars_predicate_includes_counts);
        assert_eq!(s.releases, Releases::v0_15_0());
    }

    #[test]
    fn the_change_set_is_exactly_section_five() {
        let s = Profile::ChangeSet.switches();
        assert_eq!(s.scaling, ScalingCore::change_set());
        assert_eq!(s.optimisations, Optimisations::all_on());
        assert!(!s.fixes.predicate_includes_job_id && !s.fixes.ars_predicate_includes_counts);
        assert!(s.fixes.running_never_overwrites_terminal);
    }

    #[test]
    fn every_profile_differs_from_every_other() {
        for a in Profile::ALL {
            for b in Profile::ALL.into_iter().filter(|b| *b != a) {
                assert_ne!(a.switches(), b.switches(), "{a} and {b}");
            }
        }
    }
}
