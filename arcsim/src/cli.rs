//! Command-line parsing shared by the `arcsim` subcommands: seeds and fault plans get clear errors.

use arc_sim::Seed;
use arc_sim::faults::FaultPlan;

/// Parses a seed (decimal or `0x` hex), with an error that says what a seed looks like.
pub fn parse_seed(text: &str) -> Result<Seed, String> {
    text.parse::<Seed>().map_err(|e| e.to_string())
}

/// Checks a scenario name, with an error listing the valid ones (as an unknown variant's does).
pub fn parse_scenario(text: &str) -> Result<String, String> {
    arc_scenarios::scenarios::find(text).map(|_| text.to_string())
}

/// Checks a scenario name or `all`.
pub fn parse_scenario_or_all(text: &str) -> Result<String, String> {
    if text == "all" {
        return Ok(text.to_string());
    }
    parse_scenario(text)
}

/// Parses a variant name, with an error listing the valid ones.
pub fn parse_variant(text: &str) -> Result<arc_scenarios::variant::Variant, String> {
    text.parse().map_err(|e: arc_scenarios::variant::UnknownVariant| e.to_string())
}

/// Parses a profile name, with an error listing the valid ones.
pub fn parse_profile(text: &str) -> Result<arc_controller::Profile, String> {
    text.parse().map_err(|e: arc_controller::switches::UnknownProfile| e.to_string())
}

/// Parses a fault plan given inline as JSON or as `@FILE`.
pub fn parse_fault_plan(text: &str) -> Result<FaultPlan, String> {
    FaultPlan::parse(&inline_or_file(text, "fault plan")?).map_err(|e| e.to_string())
}

/// `text` itself, or the content of the file it names as `@FILE` (`what` names it in the error).
fn inline_or_file(text: &str, what: &str) -> Result<String, String> {
    match text.strip_prefix('@') {
        Some(path) => std::fs::read_to_string(path).map_err(|e| format!("cannot read {what} {path}: {e}")),
        None => Ok(text.to_string()),
    }
}

/// A `--load` value: a priority level's load as JSON (`arcsim apiserver`), inline or `@FILE`.
pub fn parse_load(text: &str) -> Result<arc_sim::apiserver::load::LoadConfig, String> {
    serde_json::from_str(&inline_or_file(text, "load")?).map_err(|e| {
        format!("not a load ({e}); for example {{\"seats\":4,\"queue_length\":8,\"max_wait_ms\":15000,\"tenants\":{{\"gap_ms\":{{\"min_ms\":10000,\"max_ms\":60000}},\"length_ms\":{{\"min_ms\":2000,\"max_ms\":30000}},\"max_busy_seats\":4}}}}")
    })
}

/// A `--kubelet` value: the staged node's `KubeletConfig` as JSON (every field optional), inline or `@FILE`.
pub fn parse_kubelet(text: &str) -> Result<arc_sim::kubelet::KubeletConfig, String> {
    serde_json::from_str(&inline_or_file(text, "kubelet config")?).map_err(|e| {
        format!("not a kubelet config ({e}); for example {{\"node_capacity\":{{\"pods\":1}},\"slow_starts\":{{\"slow_pull_percent\":0,\"slow_pull\":{{\"min_ms\":0,\"max_ms\":0}},\"failed_pull_percent\":100,\"max_failed_pulls\":2,\"failed_pull\":{{\"min_ms\":1000,\"max_ms\":1000}},\"runner_boot\":{{\"min_ms\":2000,\"max_ms\":2000}}}}}}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_kubelet_config_is_a_clear_error_with_an_example() {
        let err = parse_kubelet(r#"{"node_capacity":{"pods":"one"}}"#).unwrap_err();
        assert!(err.contains("not a kubelet config") && err.contains("failed_pull_percent"), "{err}");
        assert!(parse_kubelet(r#"{"nodes":1}"#).unwrap_err().contains("unknown field"));
        assert!(parse_kubelet("@/nonexistent/kubelet.json").unwrap_err().contains("cannot read"));
        let capacity = parse_kubelet(r#"{"node_capacity":{"pods":1}}"#).unwrap().node_capacity;
        assert_eq!(capacity.map(|c| c.pods), Some(1));
    }

    #[test]
    fn bad_seeds_and_plans_get_clear_errors() {
        assert_eq!(parse_seed("12"), Ok(Seed(12)));
        assert!(parse_seed("twelve").unwrap_err().contains("unsigned 64-bit"));
        assert!(parse_fault_plan("{").unwrap_err().contains("not valid JSON"));
        assert!(parse_fault_plan("@/nonexistent/plan.json").unwrap_err().contains("cannot read"));
        assert!(parse_fault_plan(r#"{"api":[]}"#).is_ok());
    }

    #[test]
    fn a_bad_load_is_a_clear_error_with_an_example() {
        let example = parse_load("{").unwrap_err();
        assert!(example.contains("not a load") && example.contains("max_busy_seats"), "{example}");
        assert!(parse_load(r#"{"seats":4}"#).unwrap_err().contains("missing field"));
        assert!(parse_load("@/nonexistent/load.json").unwrap_err().contains("cannot read"));
        let whole = r#"{"seats":0,"queue_length":0,"max_wait_ms":15000,"tenants":{"gap_ms":{"min_ms":1,"max_ms":1},"length_ms":{"min_ms":1,"max_ms":1},"max_busy_seats":1}}"#;
        assert_eq!(parse_load(whole).map(|l| l.seats), Ok(0));
    }

    #[test]
    fn a_bad_profile_or_variant_is_an_error_listing_the_valid_names() {
        assert_eq!(parse_profile("arc-0.13.1"), Ok(arc_controller::Profile::Arc0131));
        let err = parse_profile("arc-0.14.0").unwrap_err();
        assert!(
            err.contains("unknown profile \"arc-0.14.0\"") && err.contains("arc-0.15.0, change-set, arcsim"),
            "{err}"
        );
        let err = parse_variant("bug-0").unwrap_err();
        assert!(err.contains("valid: fixed") && err.contains("bug-4580-short-circuit"), "{err}");
    }
}
