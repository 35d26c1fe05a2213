//! The page and the diagram in a real browser: headless Chromium loads the page, runs its script
//! without an error, draws the lanes and marks the violation; and Mermaid itself (its npm package,
//! run in Chromium, offline) parses and renders the diagram. Ignored by default: CI installs neither
//! a browser nor npm packages. `scripts/see-a-failure.sh` installs what is missing (Debian's
//! `chromium`, npm's `mermaid` into `target/see-a-failure/npm`) and runs them:
//!
//! ```sh
//! cargo test -p arcsim --test main see_a_failure::browser -- --ignored
//! ```
//!
//! with Chromium at `/usr/bin/chromium` (or `$CHROMIUM`) and Mermaid's browser bundle at
//! `target/see-a-failure/npm/node_modules/mermaid/dist/mermaid.min.js` (or `$MERMAID_JS`). They leave
//! the page, the diagram's page and screenshots of both in `target/see-a-failure/`.

use std::path::PathBuf;
use std::process::Command;

use arcsim::visual::mermaid::sequence_diagram;
use arcsim::visual::{build, page};

use super::failing_run;

fn out_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/see-a-failure");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn chromium() -> String {
    std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into())
}

fn headless(profile: &std::path::Path, extra: &[&str], url: &str) -> std::process::Output {
    Command::new(chromium())
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        .args(["--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1600,1000"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--virtual-time-budget=10000", "--enable-logging=stderr", "--v=0"])
        .args(extra)
        .arg(url)
        .output()
        .expect("chromium runs (set CHROMIUM to its path)")
}

#[test]
#[ignore = "needs Chromium: cargo test -p arcsim --test main see_a_failure::browser -- --ignored"]
fn chromium_draws_the_lanes_and_marks_the_violation_without_errors() {
    let dir = out_dir();
    let (verdict, record) = failing_run();
    let file = dir.join("timeline.html");
    std::fs::write(&file, page(&build(record, verdict))).unwrap();
    let url = format!("file://{}", file.canonicalize().unwrap().display());

    let profile = dir.join("profile-dom");
    let _ = std::fs::remove_dir_all(&profile);
    let dom = headless(&profile, &["--dump-dom"], &url);
    let html = String::from_utf8_lossy(&dom.stdout);
    let body = html.split("<body").nth(1).and_then(|b| b.split('>').next()).unwrap_or("");
    assert!(body.contains("data-ready=\"true\""), "the script ran to its end: <body{body}>");
    assert!(!body.contains("data-errors"), "no page errors: <body{body}>");
    let drawn: usize =
        body.split("data-drawn-lanes=\"").nth(1).and_then(|r| r.split('"').next()).unwrap().parse().unwrap();
    assert!(drawn >= 20, "lanes drawn: {drawn}");
    assert!(body.contains("data-violation-marked=\"true\""), "the violation is marked: <body{body}>");
    let console = String::from_utf8_lossy(&dom.stderr);
    let errors: Vec<&str> = console.lines().filter(|l| l.contains("CONSOLE") && l.contains("rror")).collect();
    assert!(errors.is_empty(), "console errors: {errors:?}");

    let profile = dir.join("profile-shot");
    let _ = std::fs::remove_dir_all(&profile);
    let shot = dir.join("timeline.png");
    headless(&profile, &[&format!("--screenshot={}", shot.display())], &url);
    assert!(std::fs::metadata(&shot).map(|m| m.len() > 10_000).unwrap_or(false), "a screenshot was taken");
}

/// The value of `attribute` on the dumped page's `<body>` tag.
fn body_attribute(html: &str, attribute: &str) -> Option<String> {
    let body = html.split("<body").nth(1)?.split('>').next()?;
    Some(body.split(&format!("{attribute}=\"")).nth(1)?.split('"').next()?.to_string())
}

/// A page that loads Mermaid's browser bundle, parses `diagram` and renders it, and records the
/// outcome on `<body>`: the diagram type, the messages, notes and participants drawn, or the error.
fn mermaid_page(bundle: &std::path::Path, diagram: &str) -> String {
    let script = r#"
mermaid.initialize({ startOnLoad: false, securityLevel: 'strict' });
const text = document.getElementById('diagram').textContent;
const body = document.body;
mermaid.parse(text)
  .then((parsed) => { body.dataset.type = parsed.diagramType; return mermaid.render('rendered', text); })
  .then(({ svg }) => {
    document.getElementById('out').innerHTML = svg;
    const out = document.getElementById('out');
    body.dataset.messages = out.querySelectorAll('.messageText').length;
    body.dataset.notes = out.querySelectorAll('.noteText').length;
    body.dataset.actors = new Set([...out.querySelectorAll('.actor')].map((a) => a.getAttribute('name')).filter(Boolean)).size;
    body.dataset.rendered = 'true';
  })
  .catch((e) => { body.dataset.error = String(e && e.message || e).replace(/"/g, "'"); });
"#;
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><script src=\"file://{}\"></script></head>\
         <body><script type=\"text/plain\" id=\"diagram\">{diagram}</script><div id=\"out\"></div>\
         <script>{script}</script></body></html>",
        bundle.display()
    )
}

#[test]
#[ignore = "needs Chromium and npm's mermaid: scripts/see-a-failure.sh"]
fn mermaid_parses_and_renders_the_diagram_as_a_sequence_diagram() {
    let dir = out_dir();
    let bundle = std::env::var("MERMAID_JS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| dir.join("npm/node_modules/mermaid/dist/mermaid.min.js"));
    assert!(
        bundle.exists(),
        "Mermaid's bundle at {} (scripts/see-a-failure.sh installs it)",
        bundle.display()
    );
    let (verdict, record) = failing_run();
    let diagram = sequence_diagram(record, verdict);
    assert!(!diagram.contains("</script"), "the diagram can sit in a script element");
    let file = dir.join("diagram.html");
    std::fs::write(&file, mermaid_page(&bundle.canonicalize().unwrap(), &diagram)).unwrap();
    let url = format!("file://{}", file.canonicalize().unwrap().display());

    let profile = dir.join("profile-mermaid");
    let _ = std::fs::remove_dir_all(&profile);
    let dom = headless(&profile, &["--dump-dom", "--allow-file-access-from-files"], &url);
    let html = String::from_utf8_lossy(&dom.stdout);
    assert_eq!(body_attribute(&html, "data-error"), None, "Mermaid refused the diagram");
    assert_eq!(body_attribute(&html, "data-type").as_deref(), Some("sequence"), "a sequence diagram");
    assert_eq!(body_attribute(&html, "data-rendered").as_deref(), Some("true"), "rendered to SVG");
    let count = |name| body_attribute(&html, name).and_then(|n| n.parse::<usize>().ok()).unwrap_or(0);
    let arrows = diagram.lines().filter(|l| l.contains(">>") || l.contains("-)")).count();
    assert_eq!(count("data-messages"), arrows, "every message is drawn");
    let notes = diagram.lines().filter(|l| l.trim_start().starts_with("Note over")).count();
    assert_eq!(count("data-notes"), notes, "every note is drawn, the violation's last");
    let participants = diagram.lines().filter(|l| l.trim_start().starts_with("participant ")).count();
    assert_eq!(count("data-actors"), participants, "every participant is drawn");

    let profile = dir.join("profile-mermaid-shot");
    let _ = std::fs::remove_dir_all(&profile);
    let shot = dir.join("diagram.png");
    headless(
        &profile,
        &[&format!("--screenshot={}", shot.display()), "--allow-file-access-from-files"],
        &url,
    );
    assert!(std::fs::metadata(&shot).map(|m| m.len() > 10_000).unwrap_or(false), "a screenshot was taken");
}
