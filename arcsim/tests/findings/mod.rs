//! The findings (`findings/`): every capsule under `findings/capsules/` replays the failure its
//! finding reports, and every finding is linked from `findings/README.md`.

use std::path::{Path, PathBuf};

use arc_sim::TraceMode;
use arcsim::capsule::Capsule;

fn findings_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../findings")
}

/// The files in `dir` whose names end with `suffix`, sorted.
fn files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(suffix)))
        .collect();
    found.sort();
    found
}

#[test]
fn every_findings_capsule_replays_its_failure() {
    let capsules = files(&findings_dir().join("capsules"), ".json");
    assert!(!capsules.is_empty(), "findings/capsules holds the findings' capsules");
    for path in capsules {
        let capsule = Capsule::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let (verdict, _) = capsule.run(TraceMode::HashOnly, None).unwrap();
        assert!(
            capsule.fails(&verdict),
            "{} no longer fails {}: {:?}",
            path.display(),
            capsule.expected_oracle,
            verdict.violations
        );
    }
}

#[test]
fn every_finding_and_capsule_is_linked_from_the_index_and_the_index_from_the_front_door() {
    let index = std::fs::read_to_string(findings_dir().join("README.md")).unwrap();
    let findings = files(&findings_dir(), ".md").into_iter().filter(|p| !p.ends_with("README.md"));
    for path in findings {
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(index.contains(&format!("]({name})")), "findings/README.md links {name}");
        let text = std::fs::read_to_string(&path).unwrap();
        for capsule in text.split("capsules/").skip(1).filter_map(|rest| rest.split(".json").next()) {
            let file = findings_dir().join("capsules").join(format!("{capsule}.json"));
            assert!(file.exists(), "{name} names capsules/{capsule}.json, which exists");
        }
    }
    let front = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).unwrap();
    assert!(front.contains("findings/README.md"), "README links the findings");
}

#[test]
fn finding_12s_world_loses_no_job_without_the_init_container_check_or_with_the_sidecar_fix() {
    let path = findings_dir().join("capsules/12-crashed-sidecar-arc-0.15.0.json");
    let capsule = Capsule::load(&path).unwrap();
    for profile in [arc_controller::Profile::Arc0131, arc_controller::Profile::Arcsim] {
        let control = Capsule { profile, ..capsule.clone() };
        let (verdict, _) = control.run(TraceMode::HashOnly, None).unwrap();
        assert!(!control.fails(&verdict), "{profile}: {:?}", verdict.violations);
    }
}
