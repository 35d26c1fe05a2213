//! The shipped binaries against a staging world, each as its own process, on loopback and wall-clock
//! time: `arcsim stage` serves the fake API server and fake GitHub over TCP with a small workload,
//! and `arc-controller run` (the real binary: its flags, kubeconfig loading, HTTP clients and
//! endpoints) must drive every job to completion. While it runs, its `/metrics` must show
//! `controller_runtime_reconcile_total` and `/readyz` must answer 200; SIGTERM (with the fakes still
//! up) must stop it cleanly, exit 0.
//!
//! Takes about 20-25 s of wall time on an idle machine (most of it the jobs themselves and pod start
//! delays), so it runs in CI. Nothing here asserts on a duration: every wait is a generous bound
//! against a hang only (stage ready 3 min, workload 10 min, SIGTERM 2 min), and a process that exits
//! early fails the test at once, naming the controller's log (`<tmp>/arcsim-staging-<pid>/`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Kills a child process when dropped (a failing test leaves nothing running).
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The `arc-controller` binary beside this test's target directory, built first if missing.
fn arc_controller_binary() -> PathBuf {
    let test_exe = std::env::current_exe().expect("the test executable");
    let profile_dir = test_exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>");
    let binary = profile_dir.join("arc-controller");
    if !binary.exists() {
        let status = Command::new(env!("CARGO"))
            .args(["build", "-p", "arc-controller", "--bin", "arc-controller"])
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building arc-controller failed");
    }
    binary
}

/// A free loopback port (bound and released; good enough on one machine).
fn free_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address")
}

/// `GET path` over plain HTTP/1.1: the status code and the body.
fn http_get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").ok()?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply).ok()?;
    let status = reply.split_whitespace().nth(1)?.parse().ok()?;
    let body = reply.split_once("\r\n\r\n").map_or("", |(_, b)| b).to_string();
    Some((status, body))
}

/// Lines of the child's stdout, as they come.
fn lines_of(child: &mut Child) -> mpsc::Receiver<String> {
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    #[allow(clippy::disallowed_methods)] // a reader thread for a child's pipe, outside any simulated run
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    rx
}

/// The slow tier (`cargo test --workspace -- --ignored slow::`).
mod slow {
    use super::*;

    #[test]
    #[ignore = "slow tier: the controller binary against a staged world"]
    fn the_controller_binary_drives_a_staged_workload_to_completion_and_serves_its_metrics() {
        let dir = std::env::temp_dir().join(format!("arcsim-staging-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let kubeconfig = dir.join("kubeconfig");
        let mut stage = Command::new(env!("CARGO_BIN_EXE_arcsim"))
            .args(["stage", "--listen", "127.0.0.1:0", "--kubeconfig"])
            .arg(&kubeconfig)
            .args(["--jobs", "4", "--timeout-seconds", "600"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("arcsim stage starts");
        let stage_lines = lines_of(&mut stage);
        let mut stage = Running(stage);
        let mut github = None;
        while let Ok(line) = stage_lines.recv_timeout(Duration::from_secs(180)) {
            if let Some(url) = line.strip_prefix("github: ") {
                github = Some(url.to_string());
            }
            if line.starts_with("ready:") {
                break;
            }
        }
        let github = github.expect("arcsim stage printed the GitHub URL");
        assert!(github.starts_with("http://127.0.0.1:"), "{github}");

        let (metrics, health) = (free_port(), free_port());
        let log_path = dir.join("controller.log");
        let log = std::fs::File::create(&log_path).expect("the controller's log file");
        let controller = Command::new(arc_controller_binary())
            .args(["run", "--controller-namespace", "arc-systems"])
            .arg(format!("--metrics-addr={metrics}"))
            .arg(format!("--health-probe-addr={health}"))
            .env("KUBECONFIG", &kubeconfig)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("arc-controller starts");
        let mut controller = Running(controller);

        let mut reconciles_seen = false;
        let mut ready_seen = false;
        let mut completed = None;
        // Polls every 0.5 s, up to 1200 times (10 min plus the HTTP calls): a bound against a hang.
        for _ in 0..1200 {
            if !reconciles_seen {
                reconciles_seen = http_get(metrics, "/metrics").is_some_and(|(code, body)| {
                    code == 200 && body.contains("controller_runtime_reconcile_total{")
                });
            }
            if !ready_seen {
                ready_seen = http_get(health, "/readyz").is_some_and(|(code, _)| code == 200);
            }
            while let Ok(line) = stage_lines.try_recv() {
                if line.starts_with("workload complete") {
                    completed = Some(line);
                }
            }
            if completed.is_some() && reconciles_seen && ready_seen {
                break;
            }
            if let Some(status) = stage.0.try_wait().expect("the stage process") {
                panic!("arcsim stage exited before the workload completed: {status}");
            }
            if let Some(status) = controller.0.try_wait().expect("the controller process") {
                panic!("arc-controller exited during the run: {status}; log: {}", log_path.display());
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        assert_eq!(
            completed.as_deref(),
            Some("workload complete: 4 jobs"),
            "every job completed (controller log: {})",
            log_path.display()
        );
        assert!(reconciles_seen, "/metrics showed controller_runtime_reconcile_total during the run");
        assert!(ready_seen, "/readyz answered 200");

        let pid = controller.0.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().expect("kill runs");
        let mut stopped = None;
        for _ in 0..240 {
            if let Some(status) = controller.0.try_wait().expect("the controller process") {
                stopped = Some(status);
                break;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        let stopped = stopped.expect("the controller stopped after SIGTERM (waited 2 min)");
        assert!(stopped.success(), "SIGTERM is a clean stop: {stopped}");
        drop(stage);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
