//! The timeline page's structure: self-contained, the embedded data parses, the lanes and the
//! violation are in the document.

use std::sync::OnceLock;

use arcsim::visual::html::embedded_json;
use arcsim::visual::{build, page};
use serde_json::Value;

use super::failing_run;

/// The page, built once per test binary (building it in a debug build takes a while).
fn document() -> &'static str {
    static PAGE: OnceLock<String> = OnceLock::new();
    PAGE.get_or_init(|| {
        let (verdict, record) = failing_run();
        page(&build(record, verdict))
    })
}

/// The page's embedded data, parsed once.
fn data() -> &'static Value {
    static DATA: OnceLock<Value> = OnceLock::new();
    DATA.get_or_init(|| embedded(document()))
}

/// The timeline inside the page's data element, unpacked.
fn embedded(html: &str) -> Value {
    let json = embedded_json(html).expect("the data element holds packed JSON");
    serde_json::from_str(&json).expect("the embedded data is JSON")
}

#[test]
fn the_page_of_a_ten_minute_run_stays_under_two_megabytes() {
    let (verdict, _) = failing_run();
    assert!(verdict.sim_ms >= 600_000, "a run of ten minutes or more ({} ms)", verdict.sim_ms);
    let size = document().len();
    assert!(size < 2_000_000, "the page is {size} bytes");
    let events = data()["events"]["t"].as_array().unwrap().len();
    assert!(events > 10_000, "with every event ({events})");
}

#[test]
fn the_page_is_one_self_contained_file() {
    let html = document();
    assert!(html.starts_with("<!DOCTYPE html>"));
    for remote in ["<script src", "<link", "http://", "https://cdn", "<iframe", "<img"] {
        assert!(!html.contains(remote), "the page loads nothing from elsewhere ({remote})");
    }
    assert!(html.contains("default-src 'none'"), "a content security policy forbids fetching");
    assert_eq!(html.matches("<script>").count(), 1, "one inline script");
}

#[test]
fn the_embedded_timeline_has_a_lane_per_actor_stream_runner_and_object() {
    let data = data();
    let lanes: Vec<&str> =
        data["lanes"].as_array().unwrap().iter().map(|l| l["name"].as_str().unwrap()).collect();
    for lane in ["world", "controller", "listener", "kubelet", "user", "apiserver", "github"] {
        assert!(lanes.contains(&lane), "lane {lane} in {lanes:?}");
    }
    assert!(lanes.iter().any(|l| l.starts_with("watch#") && l.ends_with("→ controller")));
    assert!(lanes.iter().any(|l| l.starts_with("runner ")));
    assert!(lanes.iter().any(|l| l.starts_with("ephemeralrunner arc-runners/")));
    assert!(lanes.iter().any(|l| l.starts_with("pod arc-runners/")));
    let events = data["events"]["t"].as_array().unwrap().len();
    assert!(events > 10_000, "the whole record is drawn ({events} events)");
    for column in ["seq", "lane", "kind", "label", "subj", "body"] {
        assert_eq!(data["events"][column].as_array().unwrap().len(), events, "column {column}");
    }
    let n_lanes = lanes.len() as u64;
    assert!(data["events"]["lane"].as_array().unwrap().iter().all(|l| l.as_u64().unwrap() < n_lanes));
    assert!(!data["bands"].as_array().unwrap().is_empty(), "phase bands");
    let marks: Vec<&str> =
        data["marks"].as_array().unwrap().iter().map(|m| m["kind"].as_str().unwrap()).collect();
    assert!(marks.contains(&"probe") && marks.contains(&"world"), "probes and disruptions marked: {marks:?}");
}

#[test]
fn watch_deliveries_draw_arrows_from_their_commit_with_the_lag() {
    let data = data();
    let arrows = &data["arrows"];
    let kinds = data["kinds"].as_array().unwrap();
    let delivery = kinds.iter().position(|k| k == "delivery").unwrap() as u64;
    let lagged = (0..arrows["event"].as_array().unwrap().len())
        .filter(|&i| data["events"]["kind"][arrows["event"][i].as_u64().unwrap() as usize] == delivery)
        .filter(|&i| arrows["to_t"][i].as_u64() > arrows["from_t"][i].as_u64())
        .count();
    assert!(lagged > 100, "deliveries arrive after their commit ({lagged} lagged arrows)");
}

#[test]
fn the_violation_is_marked_with_its_window_lanes_and_cited_events() {
    let html = document();
    let (verdict, _) = failing_run();
    let v = &verdict.violations[0];
    assert!(html.contains(&format!("data-oracle=\"{}\"", v.oracle)), "the violation is in the HTML itself");
    let data = data();
    let view = &data["violations"][0];
    assert_eq!(view["oracle"], v.oracle);
    assert_eq!(view["at_ms"], v.at_ms);
    assert!(view["from_ms"].as_u64().unwrap() < v.at_ms);
    let lanes: Vec<&str> = view["lanes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| data["lanes"][l.as_u64().unwrap() as usize]["name"].as_str().unwrap())
        .collect();
    assert!(
        lanes.iter().any(|l| l.starts_with("ephemeralrunner "))
            && lanes.iter().any(|l| l.starts_with("runner "))
    );
    let cited = view["cited"].as_array().unwrap();
    assert!(cited.len() >= 3, "the container start, the assignment, the delete: {cited:?}");
    let last = cited.last().unwrap().as_u64().unwrap() as usize;
    let answered = data["events"]["t"][last].as_u64().unwrap();
    assert!(
        answered >= v.at_ms,
        "the delete it judged is cited (committed at the violation, answered after)"
    );
    assert!(data["events"]["label"][last].as_str().unwrap().starts_with("delete ephemeralrunners"));
    let labels: Vec<&str> = cited
        .iter()
        .map(|i| data["events"]["label"][i.as_u64().unwrap() as usize].as_str().unwrap())
        .collect();
    assert!(
        labels.iter().any(|l| l.starts_with("controller at github: remove-runner runner=0")),
        "the controller's RemoveRunner call, named as its, is highlighted as the story marks it: {labels:?}"
    );
}

#[test]
fn a_committed_change_carries_its_object_as_its_body() {
    let data = data();
    let kinds = data["kinds"].as_array().unwrap();
    let commit = kinds.iter().position(|k| k == "commit").unwrap() as u64;
    let cited = data["violations"][0]["cited"].as_array().unwrap();
    let i = cited
        .iter()
        .map(|i| i.as_u64().unwrap() as usize)
        .find(|&i| data["events"]["kind"][i] == commit)
        .expect("the violation cites a commit");
    let body: Value = serde_json::from_str(data["events"]["body"][i].as_str().unwrap()).unwrap();
    assert!(body["object"]["metadata"]["resourceVersion"].is_string() && body["rv"].is_u64(), "{body}");
}

/// A long run's page carries at most the body budget of event bodies: past it, bodies far from the
/// violation are left out (their events stay, labelled; the page says how many), the cited ones never.
#[test]
fn a_long_runs_page_keeps_its_bodies_near_the_violation_within_the_budget() {
    use arcsim::visual::body_budget::{BODY_BUDGET_BYTES, LEFT_OUT};
    let data = data();
    let bodies = data["events"]["body"].as_array().unwrap();
    let size: usize = bodies.iter().map(|b| b.as_str().unwrap().len()).sum();
    let left_out = bodies.iter().filter(|b| *b == LEFT_OUT).count();
    assert_eq!(data["meta"]["bodies_left_out"], left_out, "the page says how many");
    assert!(left_out > 0 && size <= BODY_BUDGET_BYTES, "{size} bytes, {left_out} left out");
    for i in data["violations"][0]["cited"].as_array().unwrap() {
        assert_ne!(bodies[i.as_u64().unwrap() as usize], LEFT_OUT, "a cited body stays");
    }
}
