//! The world's wiring of a delayed-assignment perturbation (`arc_sim::perturb`): the fake API server
//! tells the fake GitHub of each delete by a named actor just before it is served, so a held job can
//! go to the runner that delete is about to take away.

use std::collections::BTreeSet;
use std::sync::Arc;

use arc_sim::apiserver::FakeApiServer;
use arc_sim::github::FakeGitHub;
use arc_sim::perturb::Perturbation;

/// Hooks `github` to `apiserver`'s deletes by the actors the plan's delayed assignments name (nothing
/// when it has none).
pub(super) fn release_held_assignments_on_delete(
    apiserver: &FakeApiServer,
    github: &FakeGitHub,
    plan: &[Perturbation],
) {
    let actors: BTreeSet<String> = plan
        .iter()
        .filter_map(|p| match p {
            Perturbation::DelayedAssignment { actor, .. } => Some(actor.clone()),
            _ => None,
        })
        .collect();
    if actors.is_empty() {
        return;
    }
    let github = github.clone();
    apiserver.on_delete(Arc::new(move |actor: &str, _plural: &str, name: &str| {
        if actors.contains(actor) {
            github.assign_held_to(name);
        }
    }));
}
