//! `arcsim serve`: a stepped world is the world, and the served view answers kubectl's requests from
//! the paused world, moving only when stdin says so.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

use arc_scenarios::scenarios;
use arc_scenarios::variant::Variant;
use arc_sim::github::GitHubEvent;
use arc_sim::record::Interest;
use arc_sim::{Seed, TraceMode};
use arc_world::{Progress, SteppedWorld};
use arcsim::runner::run_world;
use serde_json::Value;

const QUICK: &str = "watch-lag-duplicate-create";

fn stepped(seed: u64) -> SteppedWorld {
    let plan = scenarios::find(QUICK).unwrap().world(Seed(seed), Variant::Fixed);
    let keep = Interest::of::<GitHubEvent>();
    SteppedWorld::start(plan.config, plan.families, plan.settled, TraceMode::HashOnly, keep).unwrap()
}

#[test]
fn a_world_run_in_steps_is_the_same_world_run_at_once() {
    let plan = scenarios::find(QUICK).unwrap().world(Seed(1), Variant::Fixed);
    let whole = run_world(plan, TraceMode::HashOnly, Interest::none()).unwrap();
    let mut world = stepped(1);
    assert_eq!(world.run_until(30_000), Progress::Paused(30_000));
    assert_eq!(world.step(Duration::from_millis(1_234)), Progress::Paused(31_234));
    assert_eq!(world.step(Duration::from_secs(7)), Progress::Paused(38_234));
    let (progress, event) = world.run_until_event(|e| e.get::<GitHubEvent>().is_some());
    assert!(event.is_some(), "a GitHub event came before {progress:?}");
    let record = world.finish().unwrap();
    assert_eq!(record.end_ms, whole.end_ms);
    assert_eq!(record.trace.hash(), whole.trace.hash(), "pausing changed nothing the trace shows");
}

#[test]
fn simulated_time_stands_still_between_steps() {
    let mut world = stepped(2);
    world.run_until(20_000);
    let (rv, events) = (world.apiserver().resource_version(), world.record().emitted());
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(world.now_ms(), 20_000);
    assert_eq!((world.apiserver().resource_version(), world.record().emitted()), (rv, events));
}

/// `arcsim serve` as a child process, with its stdin to step it and its stdout to read.
struct Served {
    child: Child,
    stdin: ChildStdin,
    out: BufReader<std::process::ChildStdout>,
    addr: String,
}

impl Served {
    fn start(extra: &[&str]) -> Served {
        let mut child = Command::new(env!("CARGO_BIN_EXE_arcsim"))
            .args(["serve", "--scenario", QUICK, "--seed", "1", "--until", "30s", "--listen", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("arcsim runs");
        let stdin = child.stdin.take().unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let banner = read_line(&mut out);
        let addr =
            banner.split("http://").nth(1).and_then(|r| r.split_whitespace().next()).unwrap().to_string();
        let mut served = Served { child, stdin, out, addr };
        served.until_line("paused at");
        served
    }

    fn until_line(&mut self, prefix: &str) -> String {
        loop {
            let line = read_line(&mut self.out);
            if line.starts_with(prefix) {
                return line;
            }
        }
    }

    fn send(&mut self, command: &str) {
        writeln!(self.stdin, "{command}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// `method path` over plain HTTP/1.1: the status, the simulated-ms header and the JSON body.
    fn request(&self, method: &str, path: &str, accept: &str) -> (u16, u64, Value) {
        let mut stream = TcpStream::connect(&self.addr).unwrap();
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nAccept: {accept}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            self.addr
        );
        stream.write_all(request.as_bytes()).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let (head, body) = response.split_once("\r\n\r\n").unwrap();
        let code = head.split_whitespace().nth(1).unwrap().parse().unwrap();
        let sim_ms = head
            .lines()
            .find_map(|l| l.strip_prefix("x-arcsim-sim-ms: "))
            .map_or(0, |v| v.trim().parse().unwrap());
        (code, sim_ms, serde_json::from_str(body).unwrap_or(Value::Null))
    }

    fn get(&self, path: &str) -> (u16, u64, Value) {
        self.request("GET", path, "application/json")
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_line(out: &mut impl BufRead) -> String {
    let mut line = String::new();
    assert!(out.read_line(&mut line).unwrap() > 0, "arcsim serve ended early");
    line
}

#[test]
fn kubectl_reads_the_world_where_it_paused_and_step_moves_it_on() {
    let mut served = Served::start(&[]);
    let (code, at, pods) = served.get("/api/v1/pods");
    assert_eq!((code, at), (200, 30_000));
    assert_eq!(pods["kind"], "PodList");
    let rv_at_30: u64 = pods["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap();
    let (code, _, runners) =
        served.get("/apis/actions.github.com/v1alpha1/namespaces/arc-runners/ephemeralrunners");
    assert_eq!(code, 200);
    let name = runners["items"][0]["metadata"]["name"].as_str().expect("a runner at 30 s").to_string();
    let path = format!("/apis/actions.github.com/v1alpha1/namespaces/arc-runners/ephemeralrunners/{name}");
    assert_eq!(served.get(&path).2["metadata"]["name"], name.as_str());
    assert_eq!(served.get("/github/state").2["at_ms"], 30_000);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(served.get("/api/v1/pods").1, 30_000, "no request moves the world");

    served.send("step 10s");
    assert!(served.until_line("paused at").starts_with("paused at 40.000 s"));
    let (_, at, pods) = served.get("/api/v1/pods");
    assert_eq!(at, 40_000);
    let rv_at_40: u64 = pods["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap();
    assert!(rv_at_40 > rv_at_30, "the world moved on between 30 s and 40 s");

    served.send("until job-assigned");
    let line = read_line(&mut served.out);
    assert!(line.contains(" github job-assigned "), "the matching trace line: {line}");
    let at: u64 = line.split(' ').next().unwrap().parse().unwrap();
    assert!(
        served.until_line("paused at").starts_with(&format!("paused at {:.3} s", (at + 1) as f64 / 1000.0))
    );
    assert_eq!(served.get("/github/state").1, at + 1, "paused at the end of the event's millisecond");
}

#[test]
fn the_served_world_is_read_only_and_answers_kubectl_tables() {
    let served = Served::start(&[]);
    let (code, _, status) = served.request("POST", "/api/v1/namespaces/default/pods", "application/json");
    assert_eq!(code, 405);
    assert!(status["message"].as_str().unwrap().contains("read-only"), "{status}");
    let (code, _, status) = served.get("/api/v1/pods?watch=1");
    assert_eq!(code, 405, "{status}");
    let table = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
    let (code, _, pods) = served.request("GET", "/api/v1/namespaces/arc-runners/pods", table);
    assert_eq!((code, pods["kind"].as_str()), (200, Some("Table")));
    let columns: Vec<&str> =
        pods["columnDefinitions"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(columns, ["Name", "Ready", "Status", "Restarts", "Age"]);
    let (code, _, missing) = served.get("/api/v1/namespaces/arc-runners/pods/nope");
    assert_eq!((code, missing["reason"].as_str()), (404, Some("NotFound")));
    assert_eq!(served.get("/apis").0, 200);
}

#[test]
fn until_violation_pauses_where_the_first_violation_shows_and_status_reports_it() {
    use super::{SCENARIO, SEED, VARIANT, failing_run};
    let mut child = Command::new(env!("CARGO_BIN_EXE_arcsim"))
        .args(["serve", "--scenario", SCENARIO, "--variant", VARIANT.name(), "--seed", &SEED.to_string()])
        .args(["--until-violation", "--listen", "127.0.0.1:0"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("arcsim runs");
    child.stdin.take().unwrap().write_all(b"status\nquit\n").unwrap();
    let output = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    let (verdict, _) = failing_run();
    let first = &verdict.violations[0];
    let paused: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("paused at "))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|s| s.parse().ok())
        .expect("it says where it paused");
    let at = first.at_ms as f64 / 1000.0;
    assert!(
        paused >= at && paused - at < 0.1,
        "paused at {paused} s, just after the violation at {at} s:\n{text}"
    );
    assert!(text.contains(&format!("violation {} at {at:.3} s", first.oracle)), "with its story:\n{text}");
    assert!(text.contains("1 violation(s) so far:"), "status reports it:\n{text}");
    assert!(text.lines().any(|l| l.trim_start().starts_with(first.oracle)), "{text}");
}

#[test]
fn serving_a_non_loopback_address_needs_allow_remote() {
    let output = Command::new(env!("CARGO_BIN_EXE_arcsim"))
        .args(["serve", "--scenario", QUICK, "--seed", "1", "--until", "1s", "--listen", "0.0.0.0:0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("refusing to serve on 0.0.0.0:0") && stderr.contains("--allow-remote"),
        "{stderr}"
    );
}

#[test]
fn bad_serve_arguments_are_clear_errors() {
    let output = Command::new(env!("CARGO_BIN_EXE_arcsim"))
        .args(["serve", "--scenario", QUICK, "--seed", "1", "--until", "400"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("invalid duration \"400\"") && stderr.contains("400s"), "{stderr}");
}

#[test]
fn serve_takes_assumptions_names_them_and_refuses_unknown_ones() {
    let child = Command::new(env!("CARGO_BIN_EXE_arcsim"))
        .args(["serve", "--scenario", QUICK, "--seed", "1", "--until", "1s", "--listen", "127.0.0.1:0"])
        .args(["--assume", "service-reads=stale-30s"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("(assuming service-reads=stale-30s)"), "{stdout}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("standard input ended, so serving stopped"), "the end is said: {stderr}");
    let refused = Command::new(env!("CARGO_BIN_EXE_arcsim"))
        .args([
            "serve",
            "--scenario",
            QUICK,
            "--seed",
            "1",
            "--until",
            "1s",
            "--assume",
            "service-reads=never",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("linearizable, stale-30s"), "{stderr}");
}

#[test]
fn a_runs_page_shows_its_replay_line_with_the_assumptions() {
    let dir = std::env::temp_dir().join(format!("arcsim-page-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("run.html");
    let output = Command::new(env!("CARGO_BIN_EXE_arcsim"))
        .args(["run", "--scenario", QUICK, "--seed", "1", "--assume", "capacity-header=advisory", "--html"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("--seed 1 --assume capacity-header=advisory"), "the page's replay line names it");
    std::fs::remove_dir_all(&dir).unwrap();
}
