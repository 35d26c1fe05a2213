//! Sidecars that crash (issue 42, item 8; docs/windows.md "Sidecars"): the steady-state swarm's draws
//! of ARC's dind sidecar. In a share of the worlds the runner template gets the chart's `dind`
//! container as containerMode dind has rendered it since #3842 on clusters from 1.29 (a native
//! sidecar: an init container with `restartPolicy: Always`, after any other init container); in a
//! share of the others, as the chart renders it on clusters before 1.29 (a regular container after
//! `runner`). Either way 10–50% of its runs beside a running runner crash after 5 s to 3 minutes
//! (half of them OOM kills, which dind is prone to); the kubelet restarts a native one, and under
//! ARC's `restartPolicy: Never` never a regular one.

use arc_sim::Seed;
use arc_sim::apiserver::LagRange;
use arc_sim::kubelet::SidecarCrashes;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
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
    plan.config.kubelet.sidecar_crashes = Some(dind_crashes(&mut rng));
}

/// In a share `worlds` of the seeds without a native dind sidecar (from a stream of its own), runner
/// pods run dind as a regular container beside the runner, which crashes in some of its runs.
pub fn draw_regular_sidecars(seed: Seed, plan: &mut WorldPlan, worlds: f64) {
    let mut rng = seed.named_rng("scenario/regular-sidecars");
    if !rng.random_bool(worlds) || plan.config.kubelet.sidecar_crashes.is_some() {
        return;
    }
    let dind = json!({"name": "dind", "image": "docker:dind", "args": ["dockerd", "--host=unix:///var/run/docker.sock"],
        "securityContext": {"privileged": true}});
    for object in plan.config.objects.iter_mut().filter(|o| o["kind"] == "AutoscalingRunnerSet") {
        if let Some(containers) = object["spec"]["template"]["spec"]["containers"].as_array_mut() {
            containers.push(dind.clone());
        }
    }
    plan.config.kubelet.sidecar_crashes = Some(dind_crashes(&mut rng));
}

/// How dind crashes: 10–50% of its runs, after 5 s to 3 minutes, half of them OOM kills.
fn dind_crashes(rng: &mut ChaCha8Rng) -> SidecarCrashes {
    SidecarCrashes {
        percent: rng.random_range(10..=50),
        after: LagRange::between(5_000, 180_000),
        oom_percent: 50,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_swarm_draws_it_in_some_worlds_and_the_race_worlds_never() {
        let drawn = |name| crate::scenarios::worlds_drawing(name, |c| c.kubelet.sidecar_crashes.is_some());
        for name in crate::scenarios::RACE_WORLDS.into_iter().chain(["legacy-steady-state"]) {
            assert_eq!(drawn(name), 0, "{name} runs no sidecar");
        }
        assert!(
            (14..34).contains(&drawn("steady-state")),
            "steady-state draws one in about 58% of its worlds"
        );
    }

    #[test]
    fn a_regular_dind_follows_the_runner_and_never_beside_a_native_one() {
        let (mut regular, mut native) = (0, 0);
        for s in 0..60 {
            let plan = crate::scenarios::find("steady-state")
                .unwrap()
                .world(arc_sim::Seed(s), crate::variant::Variant::Fixed);
            let set = plan.config.objects.iter().find(|o| o["kind"] == "AutoscalingRunnerSet").unwrap();
            let spec = &set["spec"]["template"]["spec"];
            let names = |key: &str| -> Vec<String> {
                spec[key]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| c["name"].as_str().unwrap().to_string())
                    .collect()
            };
            let (containers, init) = (names("containers"), names("initContainers"));
            match (containers.contains(&"dind".to_string()), init.contains(&"dind".to_string())) {
                (true, true) => panic!("seed {s}: dind twice"),
                (true, false) => {
                    assert_eq!(containers, ["runner", "dind"], "seed {s}");
                    regular += 1;
                }
                (false, true) => native += 1,
                (false, false) => {}
            }
            let dind = containers.iter().chain(&init).any(|name| name == "dind");
            assert_eq!(
                plan.config.kubelet.sidecar_crashes.is_some(),
                dind,
                "seed {s}: crashes only beside dind"
            );
        }
        assert!(regular > 5 && native > 5, "both drawn: {regular} regular, {native} native");
    }

    #[test]
    fn a_native_dind_comes_last_among_the_init_containers() {
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
            if init.len() < 2 {
                continue; // dind drawn as a regular container
            }
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
