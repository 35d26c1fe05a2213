//! Init containers and OOM kills (issue 42, item 8; docs/windows.md): the steady-state swarm's draw of
//! a runner template with an init container (as ARC's dind mode copies the runner's externals with
//! `init-dind-externals`) on a node whose runtime sometimes fails to start it (`StartError`, #4452),
//! and of runner containers the kernel's OOM killer ends. In a share of the worlds the template gets
//! the init container, 0–20% of runner pods fail to start it (1–3 times; under the template's
//! `restartPolicy: Never` the first failure fails the pod), and 0–2 running runner pods are OOM-killed
//! while the swarm's jobs come. The template keeps `restartPolicy: Never`, ARC's default, so a failed
//! init container fails its pod at once: ARC's rule (a) reads it, and #4457's check (an init
//! container failed while the pod is Pending) stays for templates that restart (sim tests show that
//! window).

use arc_sim::Seed;
use arc_sim::apiserver::LagRange;
use arc_sim::kubelet::InitContainers;
use arc_world::Disruption;
use rand::Rng;
use serde_json::json;

use super::objects::{RUNNER_NAMESPACE, RUNNER_SET};
use crate::scenario::WorldPlan;

/// In a share `worlds` of seeds (from a stream of its own, so every other draw of a seed stays as it
/// was), runner pods have an init container that may fail, and some runners are OOM-killed before
/// `until_ms`.
pub fn draw_container_failures(seed: Seed, plan: &mut WorldPlan, worlds: f64, until_ms: u64) {
    let mut rng = seed.named_rng("scenario/container-failures");
    if !rng.random_bool(worlds) {
        return;
    }
    let init = json!({"name": "init-dind-externals", "image": "ghcr.io/actions/actions-runner:2.330.0",
        "command": ["cp", "-r", "/home/runner/externals/.", "/home/runner/tmpDir/"]});
    for object in plan.config.objects.iter_mut().filter(|o| o["kind"] == "AutoscalingRunnerSet") {
        object["spec"]["template"]["spec"]["initContainers"] = json!([init.clone()]);
    }
    plan.config.kubelet.init_containers = Some(InitContainers {
        run: LagRange::between(200, 3_000),
        failed_percent: rng.random_range(0..=20),
        max_failures: rng.random_range(1..=3),
    });
    for _ in 0..rng.random_range(0..=2) {
        plan.config.disruptions.push(Disruption::OomKillPod {
            at_ms: rng.random_range(30_000..until_ms),
            namespace: RUNNER_NAMESPACE.into(),
            prefix: format!("{RUNNER_SET}-runner-"),
        });
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_swarm_draws_it_in_some_worlds_and_the_race_worlds_never() {
        let drawn = |name| crate::scenarios::worlds_drawing(name, |c| c.kubelet.init_containers.is_some());
        for name in crate::scenarios::RACE_WORLDS {
            assert_eq!(drawn(name), 0, "{name} runs no init container");
        }
        assert!((4..22).contains(&drawn("steady-state")), "steady-state draws it in about 30% of its worlds");
    }

    #[test]
    fn a_drawn_world_puts_the_init_container_in_the_runner_template() {
        for s in 0..40 {
            let plan = crate::scenarios::find("steady-state")
                .unwrap()
                .world(arc_sim::Seed(s), crate::variant::Variant::Fixed);
            if plan.config.kubelet.init_containers.is_none() {
                continue;
            }
            let set = plan.config.objects.iter().find(|o| o["kind"] == "AutoscalingRunnerSet").unwrap();
            assert_eq!(set["spec"]["template"]["spec"]["initContainers"][0]["name"], "init-dind-externals");
            return;
        }
        panic!("no drawn world in 40 seeds");
    }
}
