//! Native sidecars that crash (issue 42, item 8; docs/windows.md "Sidecars"): the steady-state swarm's
//! draw of ARC's dind sidecar. In a share of the worlds the runner template gets the chart's `dind`
//! container as containerMode dind has rendered it since #3842 (an init container with `restartPolicy:
//! Always`, after any other init container), and 10–50% of its runs beside a running runner crash
//! after 5 s to 3 minutes (half of them OOM kills, which dind is prone to); the kubelet restarts each.

use arc_sim::Seed;
use arc_sim::apiserver::LagRange;
use arc_sim::kubelet::SidecarCrashes;
use rand::Rng;
use serde_json::{Value, json};

use crate::scenario::WorldPlan;

/// In a share `worlds` of seeds (from a stream of its own, so every other draw of a seed stays as it
/// was), runner pods run the dind sidecar, which crashes in some of its runs.
pub fn draw_sidecars(seed: Seed, plan: &mut WorldPlan, worlds: f64) {
    let mut rng = seed.named_rng("scenario/sidecars");
    if !rng.random_bool(worlds) {
        return;
    }
    let dind = json!({"name": "dind", "image": "docker:dind", "args": ["dockerd", "--host=unix:///var/run/docker.sock"],
        "restartPolicy": "Always", "securityContext": {"privileged": true}});
    for object in plan.config.objects.iter_mut().filter(|o| o["kind"] == "AutoscalingRunnerSet") {
        let spec = &mut object["spec"]["template"]["spec"];
        match spec["initContainers"].as_array_mut() {
            Some(init) => init.push(dind.clone()),
            None => spec["initContainers"] = Value::Array(vec![dind.clone()]),
        }
    }
    plan.config.kubelet.sidecar_crashes = Some(SidecarCrashes {
        percent: rng.random_range(10..=50),
        after: LagRange::between(5_000, 180_000),
        oom_percent: 50,
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_swarm_draws_it_in_some_worlds_and_the_race_worlds_never() {
        let drawn = |name| crate::scenarios::worlds_drawing(name, |c| c.kubelet.sidecar_crashes.is_some());
        for name in crate::scenarios::RACE_WORLDS.into_iter().chain(["legacy-steady-state"]) {
            assert_eq!(drawn(name), 0, "{name} runs no sidecar");
        }
        assert!((4..22).contains(&drawn("steady-state")), "steady-state draws it in about 30% of its worlds");
    }

    #[test]
    fn a_drawn_world_puts_dind_last_among_the_init_containers() {
        for s in 0..60 {
            let plan = crate::scenarios::find("steady-state")
                .unwrap()
                .world(arc_sim::Seed(s), crate::variant::Variant::Fixed);
            if plan.config.kubelet.sidecar_crashes.is_none() || plan.config.kubelet.init_containers.is_none()
            {
                continue;
            }
            let set = plan.config.objects.iter().find(|o| o["kind"] == "AutoscalingRunnerSet").unwrap();
            let init = set["spec"]["template"]["spec"]["initContainers"].as_array().unwrap();
            assert_eq!(init[0]["name"], "init-dind-externals");
            assert_eq!(
                (init[1]["name"].as_str(), init[1]["restartPolicy"].as_str()),
                (Some("dind"), Some("Always"))
            );
            return;
        }
        panic!("no world in 60 seeds draws both");
    }
}
