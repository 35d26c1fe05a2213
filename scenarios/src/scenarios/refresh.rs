//! Runner refreshes: a runner-spec change as the runner set sees it. The ARS bumps the set's
//! `spec.actionableRevision` when the runner spec changes (ARC-MODEL §5.4), and the set then removes
//! its idle and pending runners (RemoveRunner first) and creates fresh ones. A world makes one as a
//! user's merge patch of the set (assign-during-delete's seeded refreshes, `arcsim explore`'s rollout
//! plans); a controller without the revision step gets it in its own form.

use arc_sim::json_at::At;
use arc_world::Disruption;
use serde_json::json;

use crate::scenario::WorldPlan;

/// The integrity-hash annotation upstream's runner-spec step compares (ARC-MODEL §3.2 step 4).
const INTEGRITY_HASH: &str = "actions.github.com/integrity-hash";

/// A refresh of the runner set `namespace/name` to `revision` at `at_ms`.
pub fn runner_refresh(at_ms: u64, namespace: &str, name: &str, revision: u64) -> Disruption {
    Disruption::PatchObject {
        at_ms,
        plural: "ephemeralrunnersets".into(),
        namespace: namespace.into(),
        name: name.into(),
        patch: json!({"spec": {"actionableRevision": revision}}),
    }
}

/// Rewrites the runner refreshes of `plan` for its controller (see [`refresh_in_controller_form`]).
pub fn refreshes_in_controller_form(plan: &mut WorldPlan) {
    if plan.config.switches.scaling.actionable_revision {
        return;
    }
    plan.config.disruptions.iter_mut().for_each(refresh_in_controller_form);
}

/// One refresh for a controller without the revision step (`scaling.actionable_revision` off,
/// upstream): it notices a runner-spec change when the set's `integrity-hash` annotation no longer
/// matches its runner spec, so the refresh instead sets that annotation to a stale value
/// (`refresh-N`); the set cleans up its idle runners and writes the right hash back. (Upstream's ARS,
/// which patches the runner spec and the annotation together, never takes that step for its own
/// updates; the stale value is the nearest upstream analogue, and an ARS reconcile that sees it
/// before the set repairs it may delete the listener to drain.) Anything else is left alone.
pub fn refresh_in_controller_form(disruption: &mut Disruption) {
    let Disruption::PatchObject { plural, patch, .. } = disruption else { return };
    let Some(revision) = patch.at("/spec/actionableRevision").cloned() else { return };
    if plural == "ephemeralrunnersets" {
        *patch = json!({"metadata": {"annotations": {INTEGRITY_HASH: format!("refresh-{revision}")}}});
    }
}
