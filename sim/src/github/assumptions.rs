//! What the fake GitHub assumes where no public document says how the Actions service behaves: each
//! such behaviour is a named [`Assumption`] with two or more [`Alternative`]s, each citing the
//! evidence for it in one line. The first alternative is the default, what every world gets unless it
//! is told otherwise ([`Assumed`], `arcsim … --assume NAME=ALT`). An alternative sets the fake's own
//! knobs ([`GitHubConfig`]); a verdict holds under the alternatives its run had. An alternative the
//! evidence does not leave standing is not offered: RemoveRunner answering 404 for every id it does not
//! hold (PR #4399's wording) would wedge every ARC release on runners that removed themselves, and
//! released ARC works, so that stays a knob (`remove_unknown_runner: not-found`), a stress test.

use std::collections::BTreeMap;
use std::fmt;

use rand::Rng as _;
use serde::{Deserialize, Serialize};

use crate::seed::Seed;

use super::config::RestRateLimit;
use super::config::{GitHubConfig, UnknownRunnerAnswer};

/// One behaviour of the service that no public document fixes.
#[derive(Debug)]
pub struct Assumption {
    /// Its name on the command line.
    pub name: &'static str,
    /// What is not known, as a question.
    pub question: &'static str,
    /// The answers the evidence leaves standing; the first is the default.
    pub alternatives: &'static [Alternative],
}

/// One answer to an [`Assumption`].
#[derive(Debug)]
pub struct Alternative {
    /// Its name on the command line.
    pub name: &'static str,
    /// Why it is plausible, in one line, with its source.
    pub evidence: &'static str,
    /// What it sets in the fake.
    apply: fn(&mut GitHubConfig),
}

impl Assumption {
    /// The default alternative.
    pub fn default_alternative(&self) -> &'static Alternative {
        &self.alternatives[0]
    }

    /// The alternative named `name`.
    pub fn alternative(&self, name: &str) -> Option<&'static Alternative> {
        self.alternatives.iter().find(|a| a.name == name)
    }
}

/// Every assumption, in the order `arcsim list assumptions` prints them.
pub fn all() -> &'static [Assumption] {
    ASSUMPTIONS
}

/// The assumption named `name`.
pub fn find(name: &str) -> Option<&'static Assumption> {
    ASSUMPTIONS.iter().find(|a| a.name == name)
}

const ASSUMPTIONS: &[Assumption] = &[
    Assumption {
        name: "unregistered-runner-removal",
        question: "What does RemoveRunner answer for a runner id the service does not hold (id 0 included)?",
        alternatives: &[
            Alternative {
                name: "no-content",
                evidence: "ARC's ADR 2022-12-27 (runner deletion): removing a runner that is already gone succeeds",
                apply: |c| c.remove_unknown_runner = UnknownRunnerAnswer::NoContent,
            },
            Alternative {
                name: "refuse-id-zero",
                evidence: "ARC #4653 (maintainer, 2026-09-11): RemoveRunner(0) fails and the finalizer stalls; ids once registered still 204",
                apply: |c| c.remove_unknown_runner = UnknownRunnerAnswer::NotFoundForIdZero,
            },
        ],
    },
    Assumption {
        name: "removal-vs-assignment",
        question: "Are RemoveRunner and job assignment serialised, or can a removal win over an assignment not yet announced?",
        alternatives: &[
            Alternative {
                name: "atomic",
                evidence: "ARC-MODEL §6.3: an assigned runner is refused with 400 JobStillRunning (scale-set API, as ARC relies on)",
                apply: |c| c.weak_removal = false,
            },
            Alternative {
                name: "weak",
                evidence: "actions/runner #3448, #3539: jobs reach runners that are going away and are lost; the dispatcher may learn late",
                apply: |c| c.weak_removal = true,
            },
        ],
    },
    Assumption {
        name: "service-reads",
        question: "How old may the statistics in sessions and messages, and GetRunner/GetRunnerByName's runners, be?",
        alternatives: &[
            Alternative {
                name: "linearizable",
                evidence: "no public report of stale scale-set reads (actions/runner #4422 is about the REST list, not these endpoints)",
                apply: |c| c.service_read_staleness_ms = 0,
            },
            Alternative {
                name: "stale-30s",
                evidence: "ARC #4397: stale TotalAssignedJobs over-provisions; terraform-aws-github-runner #5228: busy lags 25-60 s",
                apply: |c| c.service_read_staleness_ms = 30_000,
            },
        ],
    },
    Assumption {
        name: "dead-runner-detection",
        question: "How long does a runner whose process died while idle stay online and assignable?",
        alternatives: &[
            Alternative {
                name: "instant",
                evidence: "ARC-MODEL §6.2: the service does not dispatch to offline runners (the fake's model before 2026-12)",
                apply: |c| c.dead_runner_detection_ms = 0,
            },
            Alternative {
                name: "after-3-min",
                evidence: "actions/runner #1406, #3539: a stopped runner stays idle a while and gets jobs, lost when the lease lapses",
                apply: |c| c.dead_runner_detection_ms = 180_000,
            },
        ],
    },
    Assumption {
        name: "unacknowledged-messages",
        question: "Does the scale set's next session get the messages a session received but never acknowledged?",
        alternatives: &[
            Alternative {
                name: "redelivered",
                evidence: "actions/scaleset #113 moved DeleteMessage after the message's work: an acknowledgement that matters means redelivery",
                apply: |c| c.redeliver_unacknowledged = true,
            },
            Alternative {
                name: "dropped",
                evidence: "ARC #4027: jobs queued for hours after a listener restart, as if what the dead listener received were gone",
                apply: |c| c.redeliver_unacknowledged = false,
            },
        ],
    },
    Assumption {
        name: "job-acquisition",
        question: "Must a listener acquire an offered job (AcquireJobs), or is it the scale set's once the offer is delivered?",
        alternatives: &[
            Alternative {
                name: "required",
                evidence: "actions/scaleset #90: AcquireJobs restored because several GHES versions depend on it (#75)",
                apply: |c| c.acquire_on_delivery = false,
            },
            Alternative {
                name: "on-delivery",
                evidence: "actions/scaleset #4 removed AcquireJobs and ARC 0.14.0's listener (scaleset v0.2.0) ran on github.com",
                apply: |c| c.acquire_on_delivery = true,
            },
        ],
    },
    Assumption {
        name: "unstarted-dispatch",
        question: "What becomes of a job a scale set acquired that no runner takes?",
        alternatives: &[
            Alternative {
                name: "held",
                evidence: "ARC-MODEL §6.2: an acquired job waits for an idle runner of its scale set",
                apply: |c| c.reoffer_unstarted_after_ms = None,
            },
            Alternative {
                name: "reoffered-every-5-min",
                evidence: "ARC #4602: GitHub's trace shows the job assigned to the scale set at 08:57:14, 09:02:14, 09:07:14",
                apply: |c| c.reoffer_unstarted_after_ms = Some(300_000),
            },
        ],
    },
    Assumption {
        name: "capacity-header",
        question: "Does the service hold a scale set to the X-ScaleSetMaxCapacity its listener sends?",
        alternatives: &[
            Alternative {
                name: "strict",
                evidence: "ARC-MODEL §4.1/§6.2: ARC sends maxRunners on every GetMessage so that the service offers no more",
                apply: |c| c.honour_max_capacity = true,
            },
            Alternative {
                name: "advisory",
                evidence: "no public document says the service enforces it; ARC also caps its own runner count at maxRunners",
                apply: |c| c.honour_max_capacity = false,
            },
        ],
    },
    Assumption {
        name: "registration-lifetime",
        question: "How long does a JIT registration live if no runner process ever connects with it?",
        alternatives: &[
            Alternative {
                name: "one-day",
                evidence: "GitHub docs (communicating with self-hosted runners): an ephemeral runner not connected for 1 day is removed",
                apply: |c| c.unconnected_registration_ttl_ms = None,
            },
            Alternative {
                name: "unconnected-5-min",
                evidence: "actions/runner #4726: JIT runners removed after minutes; ubicloud #2957: JIT configs valid for 5 minutes",
                apply: |c| c.unconnected_registration_ttl_ms = Some(300_000),
            },
        ],
    },
    Assumption {
        name: "session-refresh",
        question: "Does refreshing a message session whose queue token expired renew it, or is the session gone?",
        alternatives: &[
            Alternative {
                name: "renews",
                evidence: "actions/scaleset session_client.go: a 401 on the queue is answered by PATCH session, which ARC expects to work",
                apply: |c| c.session_ends_with_token = false,
            },
            Alternative {
                name: "ends-with-token",
                evidence: "actions/scaleset #123: the refresh PATCH answers 404 (session not in redis); the listener exits every ~50 min",
                apply: |c| c.session_ends_with_token = true,
            },
        ],
    },
    Assumption {
        name: "legacy-runner-list",
        question: "How old may the legacy REST runner list be?",
        alternatives: &[
            Alternative {
                name: "cached-60s",
                evidence: "ARC #1127: the list lags by up to a minute (GitHub's cache), so a registered runner may be missing",
                apply: |c| c.list_runners_staleness_ms = 60_000,
            },
            Alternative {
                name: "linearizable",
                evidence: "REST docs promise nothing about freshness; an uncached list is the other end",
                apply: |c| c.list_runners_staleness_ms = 0,
            },
        ],
    },
    Assumption {
        name: "rest-rate-limits",
        question: "Are the controller's REST calls (registration tokens, ListRunners, DeleteRunner) refused for volume?",
        alternatives: &[
            Alternative {
                name: "unmetered",
                evidence: "the scale-set path makes a few REST calls an hour and no report since 0.9 blames REST limits; only fault plans throttle",
                apply: |c| c.rest_rate_limit = None,
            },
            Alternative {
                name: "documented",
                evidence: "GitHub REST docs: 5,000 requests/hour per installation or token (403, X-RateLimit-Remaining: 0, X-RateLimit-Reset), secondary 900 points/min",
                apply: |c| {
                    c.rest_rate_limit =
                        Some(RestRateLimit { requests_per_hour: 5_000, points_per_minute: 900 })
                },
            },
            Alternative {
                name: "shared-installation",
                evidence: "ARC #206: the budget is the installation's, shared with its other clients; a tenth of it (500/hour) left for the controller",
                apply: |c| {
                    c.rest_rate_limit = Some(RestRateLimit { requests_per_hour: 500, points_per_minute: 900 })
                },
            },
        ],
    },
    Assumption {
        name: "removed-runner-poll",
        question: "What does an idle runner's message poll get once RemoveRunner has removed its registration?",
        alternatives: &[
            Alternative {
                name: "runner-not-found",
                evidence: "actions/runner v2.336.0 BrokerHttpClient.cs maps the broker's RunnerNotFound; BrokerMessageListener rethrows it and Runner.cs stops at once",
                apply: |c| c.removed_registration_retried = false,
            },
            Alternative {
                name: "registration-not-found",
                evidence: "actions/runner #4191, ARC #4307's logs: \"Registration … was not found\" is retried (10 errors, 15-60 s apart) while the pod runs on ~11 min",
                apply: |c| c.removed_registration_retried = true,
            },
        ],
    },
    Assumption {
        name: "unpolled-session",
        question: "How long does the service keep a runner session that no process ever polls (its creation's answer was lost) before it treats the runner's process as gone?",
        alternatives: &[
            Alternative {
                name: "one-long-poll",
                evidence: "actions/runner RunnerServer.cs:74 holds the message queue's connection 60 s: a service expecting a poll within one long poll (50 s) learns of the missing one then",
                apply: |c| c.unclaimed_session_ms = super::config::ONE_LONG_POLL_MS,
            },
            Alternative {
                name: "five-minutes",
                evidence: "actions/runner MessageListener.cs:338 recovers from TaskAgentSessionExpiredException: sessions expire on a clock of the service's own, whose length no public source gives",
                apply: |c| c.unclaimed_session_ms = 300_000,
            },
        ],
    },
];

/// The alternatives chosen for a run, by assumption name; an assumption not named keeps its default.
/// Read back from JSON (a sweep's plan, a capsule) only if every name and alternative is known.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "BTreeMap<String, String>", try_from = "BTreeMap<String, String>")]
pub struct Assumed(BTreeMap<String, String>);

impl From<Assumed> for BTreeMap<String, String> {
    fn from(assumed: Assumed) -> Self {
        assumed.0
    }
}

impl TryFrom<BTreeMap<String, String>> for Assumed {
    type Error = AssumeError;

    fn try_from(choices: BTreeMap<String, String>) -> Result<Self, AssumeError> {
        let pairs: Vec<String> = choices.iter().map(|(name, alt)| format!("{name}={alt}")).collect();
        Assumed::parse(pairs.iter().map(String::as_str))
    }
}

/// A `NAME=ALT` that names no assumption or no alternative of it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AssumeError {
    /// Not of the form `NAME=ALT`.
    #[error("--assume {0:?}: expected NAME=ALT (arcsim list assumptions)")]
    Form(String),
    /// No assumption of that name.
    #[error("--assume: no assumption {name:?}; the assumptions are: {known}")]
    Assumption {
        /// The name given.
        name: String,
        /// The names there are.
        known: String,
    },
    /// No such alternative.
    #[error("--assume {name}: no alternative {alternative:?}; its alternatives are: {known}")]
    Alternative {
        /// The assumption.
        name: String,
        /// The alternative given.
        alternative: String,
        /// Its alternatives.
        known: String,
    },
}

impl Assumed {
    /// Every default.
    pub fn defaults() -> Self {
        Assumed::default()
    }

    /// Whether no assumption is chosen: each keeps its default, or the world's own setting.
    pub fn is_default(&self) -> bool {
        self.0.is_empty()
    }

    /// These choices with `NAME=ALT` too (a later choice of the same assumption wins). Choosing an
    /// assumption's default pins it: a world that draws or sets that assumption itself (the
    /// steady-state swarm's `removed-runner-poll`, a field report's premise) runs under the default.
    pub fn with(mut self, choice: &str) -> Result<Self, AssumeError> {
        let (name, alternative) = choice.split_once('=').ok_or_else(|| AssumeError::Form(choice.into()))?;
        let assumption = find(name).ok_or_else(|| AssumeError::Assumption {
            name: name.into(),
            known: ASSUMPTIONS.iter().map(|a| a.name).collect::<Vec<_>>().join(", "),
        })?;
        let chosen = assumption.alternative(alternative).ok_or_else(|| AssumeError::Alternative {
            name: name.into(),
            alternative: alternative.into(),
            known: assumption.alternatives.iter().map(|a| a.name).collect::<Vec<_>>().join(", "),
        })?;
        self.0.insert(name.into(), chosen.name.into());
        Ok(self)
    }

    /// The choices of `NAME=ALT` strings, in order.
    pub fn parse<'a>(choices: impl IntoIterator<Item = &'a str>) -> Result<Self, AssumeError> {
        choices.into_iter().try_fold(Assumed::defaults(), Assumed::with)
    }

    /// The alternative in force for `assumption`.
    pub fn of(&self, assumption: &'static Assumption) -> &'static Alternative {
        self.0
            .get(assumption.name)
            .and_then(|alt| assumption.alternative(alt))
            .unwrap_or_else(|| assumption.default_alternative())
    }

    /// Sets `config` as the chosen alternatives (and only those: defaults leave the world's own
    /// setting alone) have it.
    pub fn apply(&self, config: &mut GitHubConfig) {
        for assumption in ASSUMPTIONS.iter().filter(|a| self.0.contains_key(a.name)) {
            (self.of(assumption).apply)(config);
        }
    }

    /// An alternative of every assumption drawn from `seed` (`arcsim sweep --assumptions drawn`):
    /// uniformly, from the seed's own stream `assumptions`, so a seed always draws the same.
    pub fn drawn(seed: Seed) -> Assumed {
        let mut rng = seed.named_rng("assumptions");
        let choices: Vec<String> = ASSUMPTIONS
            .iter()
            .map(|a| format!("{}={}", a.name, a.alternatives[rng.random_range(0..a.alternatives.len())].name))
            .collect();
        let mut drawn =
            Assumed::parse(choices.iter().map(String::as_str)).expect("drawn from the known alternatives");
        // A default drawn is no choice: the world's own setting stays, as it does without a draw.
        drawn.0.retain(|name, alt| find(name).is_some_and(|a| a.default_alternative().name != alt.as_str()));
        drawn
    }

    /// The command-line flags that choose these alternatives: ` --assume NAME=ALT` each, or nothing.
    pub fn flags(&self) -> String {
        self.0.iter().map(|(name, alt)| format!(" --assume {name}={alt}")).collect()
    }
}

impl fmt::Display for Assumed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_default() {
            return f.write_str("defaults");
        }
        let chosen: Vec<String> = self.0.iter().map(|(name, alt)| format!("{name}={alt}")).collect();
        f.write_str(&chosen.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_assumption_has_alternatives_with_evidence_and_distinct_names() {
        for assumption in all() {
            assert!(assumption.alternatives.len() >= 2, "{}", assumption.name);
            let mut names: Vec<&str> = assumption.alternatives.iter().map(|a| a.name).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), assumption.alternatives.len(), "{}", assumption.name);
            assert!(assumption.alternatives.iter().all(|a| !a.evidence.is_empty()), "{}", assumption.name);
        }
    }

    #[test]
    fn the_defaults_are_the_fakes_own_defaults() {
        let mut config = GitHubConfig::default();
        for assumption in all() {
            (assumption.default_alternative().apply)(&mut config);
        }
        assert_eq!(config, GitHubConfig::default());
    }

    #[test]
    fn a_choice_sets_its_knob_and_is_named_in_flags() {
        let assumed = Assumed::parse(["unregistered-runner-removal=refuse-id-zero"]).unwrap();
        let mut config = GitHubConfig::default();
        assumed.apply(&mut config);
        assert_eq!(config.remove_unknown_runner, UnknownRunnerAnswer::NotFoundForIdZero);
        assert_eq!(assumed.flags(), " --assume unregistered-runner-removal=refuse-id-zero");
        assert_eq!(assumed.to_string(), "unregistered-runner-removal=refuse-id-zero");
    }

    #[test]
    fn choosing_a_default_pins_it_over_a_worlds_own_setting() {
        let assumed = Assumed::parse([
            "removed-runner-poll=registration-not-found",
            "removed-runner-poll=runner-not-found",
        ])
        .unwrap();
        assert!(!assumed.is_default());
        assert_eq!(assumed.flags(), " --assume removed-runner-poll=runner-not-found");
        let mut drawn_by_the_world =
            GitHubConfig { removed_registration_retried: true, ..GitHubConfig::default() };
        assumed.apply(&mut drawn_by_the_world);
        assert!(!drawn_by_the_world.removed_registration_retried);
        assert!(Assumed::defaults().is_default());
    }

    #[test]
    fn bad_choices_say_what_is_valid() {
        let form = Assumed::parse(["weak"]).unwrap_err().to_string();
        assert!(form.contains("NAME=ALT"), "{form}");
        let name = Assumed::parse(["nope=x"]).unwrap_err().to_string();
        assert!(name.contains("unregistered-runner-removal"), "{name}");
        let alt = Assumed::parse(["removal-vs-assignment=maybe"]).unwrap_err().to_string();
        assert!(alt.contains("atomic, weak"), "{alt}");
    }

    #[test]
    fn a_seed_draws_the_same_alternatives_every_time_and_seeds_differ() {
        assert_eq!(Assumed::drawn(Seed(5)), Assumed::drawn(Seed(5)));
        let draws: std::collections::BTreeSet<String> =
            (1..=40).map(|n| Assumed::drawn(Seed(n)).to_string()).collect();
        assert!(draws.len() > 30, "{} distinct draws of 40", draws.len());
        for assumption in all() {
            let moved = (1..=40)
                .filter(|&n| Assumed::drawn(Seed(n)).of(assumption).name != assumption.alternatives[0].name);
            assert!(moved.count() > 5, "{} is drawn away from its default", assumption.name);
        }
    }

    #[test]
    fn choices_round_trip_through_json() {
        let assumed = Assumed::parse(["legacy-runner-list=linearizable"]).unwrap();
        let json = serde_json::to_string(&assumed).unwrap();
        assert_eq!(json, r#"{"legacy-runner-list":"linearizable"}"#);
        assert_eq!(serde_json::from_str::<Assumed>(&json).unwrap(), assumed);
        let unknown = serde_json::from_str::<Assumed>(r#"{"legacy-runner-list":"sometimes"}"#).unwrap_err();
        assert!(unknown.to_string().contains("cached-60s, linearizable"), "{unknown}");
    }
}
