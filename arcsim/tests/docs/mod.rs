//! The commands the docs show a user: README, the findings and `docs/` (not the dated logs, which
//! record what was run then). Every `arcsim …` command they show, in a code block or inline, is read
//! as `arcsim` reads it: a concrete command parses with the real command line ([`Cli`]); a synopsis
//! (with placeholders such as `--seed N` or `[--json FILE]`) names only flags its subcommand takes.
//! What a command promises (`# fails ORACLE`, `# passes`) is checked where the docs say it: the first
//! screen's runs by `races::first_screen`, the findings' runs by `findings`. README stays a front door
//! (at most 250 lines; the rest is in `docs/`), and every relative link of these documents leads to a
//! file or directory that exists.

use std::path::{Path, PathBuf};

use arcsim::commands::app::Cli;
use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The Markdown files a user reads: README, findings, docs (not docs/log).
fn documents() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    for dir in ["findings", "docs"] {
        let mut stack = vec![root().join(dir)];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() && path.file_name().is_some_and(|n| n != "log") {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "md") {
                    files.push(path);
                }
            }
        }
    }
    files.sort();
    files
}

/// A command a document shows: where, its words after `arcsim` (comment and ellipsis cut), and
/// whether it stands alone (a line of a code block) or is mentioned in prose (where it may leave out
/// required arguments: `arcsim shrink --oracle O` names a flag, not a whole run).
#[derive(Debug)]
struct Shown {
    at: String,
    words: Vec<String>,
    in_prose: bool,
}

/// The `arcsim` commands in `text`: lines of code blocks, and inline code spans in prose (a span may
/// run on over a line break, so prose is read a paragraph at a time).
fn commands_in(file: &str, text: &str) -> Vec<Shown> {
    let mut out = Vec::new();
    let mut in_block = false;
    let mut paragraph: (usize, String) = (0, String::new());
    let flush = |paragraph: &mut (usize, String), out: &mut Vec<Shown>| {
        let at = format!("{file}:{}", paragraph.0);
        for span in paragraph.1.split('`').skip(1).step_by(2) {
            out.extend(command_of(span).map(|words| Shown { at: at.clone(), words, in_prose: true }));
        }
        paragraph.1.clear();
    };
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            flush(&mut paragraph, &mut out);
            in_block = !in_block;
            continue;
        }
        if in_block {
            let words = command_of(line.trim().trim_start_matches("$ "));
            out.extend(words.map(|words| Shown { at: format!("{file}:{}", n + 1), words, in_prose: false }));
        } else if line.trim().is_empty() {
            flush(&mut paragraph, &mut out);
        } else {
            if paragraph.1.is_empty() {
                paragraph.0 = n + 1;
            }
            paragraph.1.push_str(line);
            paragraph.1.push(' ');
        }
    }
    flush(&mut paragraph, &mut out);
    out
}

/// The words after `arcsim` of a command line (`arcsim …` or `cargo run … --bin arcsim -- …`), the
/// comment and a trailing ellipsis cut; `None` if it is not one.
fn command_of(line: &str) -> Option<Vec<String>> {
    let line = line.split(" # ").next().unwrap_or(line).trim().trim_end_matches('…').trim();
    let rest =
        line.strip_prefix("arcsim ").or_else(|| line.strip_prefix("cargo run --release -p arcsim -- "))?;
    let words: Vec<String> = rest.split_whitespace().map(str::to_string).collect();
    let looks_like_a_command = words.first().is_some_and(|w| w.chars().all(|c| c.is_ascii_lowercase()));
    looks_like_a_command.then_some(words)
}

/// Whether a word is a placeholder or synopsis syntax: `[--json FILE]`, `N`, `NAME=ALT`, `a|b`, `(x`.
fn is_synopsis_word(word: &str) -> bool {
    let letters: String = word.chars().filter(char::is_ascii_alphabetic).collect();
    word.contains(['[', ']', '|', '(', ')', '…', '<', '>'])
        || (!letters.is_empty() && letters.chars().all(|c| c.is_ascii_uppercase()))
}

/// The long flags of subcommand `name`.
fn flags_of(name: &str) -> Option<Vec<String>> {
    let cli = Cli::command();
    let sub = cli.find_subcommand(name)?;
    Some(sub.get_arguments().filter_map(|a| a.get_long().map(|l| format!("--{l}"))).collect())
}

/// Whether a parse failed only for what a mention leaves out: a required argument, or the value of
/// the flag it names last (`arcsim run --capsule`).
fn is_partial(error: &clap::Error) -> bool {
    error.kind() == ErrorKind::MissingRequiredArgument
        || error.to_string().contains("a value is required for")
}

/// The problems with `words` as a synopsis or a mention: a subcommand arcsim has, flags it takes.
fn flag_problems(at: &str, words: &[String]) -> Vec<String> {
    let Some(flags) = flags_of(&words[0]) else {
        return vec![format!("{at}: no subcommand {:?}", words[0])];
    };
    words
        .iter()
        .map(|word| word.trim_matches(['[', ']', '(', ')']).split('=').next().unwrap_or("").to_string())
        .filter(|flag| flag.starts_with("--") && flag != "--help" && !flags.contains(flag))
        .map(|flag| format!("{at}: `{}` has no {flag}", words[0]))
        .collect()
}

#[test]
fn every_command_the_docs_show_is_one_arcsim_takes() {
    let mut problems = Vec::new();
    let mut counted = (0, 0);
    for path in documents() {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = path.strip_prefix(root()).unwrap_or(&path).display().to_string();
        for shown in commands_in(&file, &text) {
            if shown.words.iter().any(|w| is_synopsis_word(w)) {
                counted.1 += 1;
                problems.extend(flag_problems(&shown.at, &shown.words));
                continue;
            }
            counted.0 += 1;
            let args = std::iter::once("arcsim".to_string()).chain(shown.words.iter().cloned());
            match Cli::try_parse_from(args) {
                Ok(_) => {}
                // A mention in prose may leave out what a run needs; its flags must still be real.
                Err(e) if shown.in_prose && is_partial(&e) => {
                    problems.extend(flag_problems(&shown.at, &shown.words));
                }
                Err(e) => {
                    let first = e.to_string().lines().next().unwrap_or_default().to_string();
                    problems.push(format!("{}: `arcsim {}`: {first}", shown.at, shown.words.join(" ")));
                }
            }
        }
    }
    assert!(counted.0 >= 20 && counted.1 >= 10, "the docs show commands and synopses: {counted:?}");
    assert!(
        problems.is_empty(),
        "{} command(s) arcsim does not take:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// `docs/catalog.md` is what `arcsim list --markdown` prints: the scenarios, profiles, switches,
/// variants, oracles, probes (with their measured shares), assumptions and the kill table, from the
/// code, never retyped.
#[test]
fn the_catalog_is_what_arcsim_list_markdown_prints() {
    let file = std::fs::read_to_string(root().join("docs/catalog.md")).expect("docs/catalog.md");
    let generated = arcsim::commands::list::catalogue_markdown();
    assert!(
        file == generated,
        "docs/catalog.md is stale: regenerate it with `cargo run --release -p arcsim -- list --markdown > docs/catalog.md`"
    );
}

/// README is the front door: what arcsim is, the first runs, the layout and the seams, the test
/// tiers and where to read on. Everything else lives in `docs/`, one subject a page.
#[test]
fn readme_is_a_front_door_of_at_most_250_lines() {
    let lines = std::fs::read_to_string(root().join("README.md")).unwrap().lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines (at most 250): move the detail into docs/ and link it"
    );
}

/// The relative link targets in `text`, each with its line: `](path)` or `](path#anchor)` outside code
/// blocks and code spans, not a web or mail address and not an anchor in the same page.
fn relative_links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let (mut in_block, mut in_span) = (false, false);
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            (in_block, in_span) = (!in_block, false);
            continue;
        }
        if in_block {
            continue;
        }
        if line.trim().is_empty() {
            in_span = false; // a code span never crosses a paragraph
        }
        let mut prose = String::new();
        for (i, piece) in line.split('`').enumerate() {
            if i > 0 {
                in_span = !in_span;
            }
            if !in_span {
                prose.push_str(piece);
            }
        }
        for rest in prose.split("](").skip(1) {
            let target = rest.split(')').next().unwrap_or_default();
            let target = target.split_whitespace().next().unwrap_or_default();
            let external = ["http://", "https://", "mailto:", "#"].iter().any(|p| target.starts_with(p));
            if !target.is_empty() && !external {
                out.push((n + 1, target.to_string()));
            }
        }
    }
    out
}

/// Every relative link in README, `docs/` (not the logs) and the findings resolves, from the linking
/// file's directory, to a file or directory of the repository (the anchor is not checked).
#[test]
fn every_relative_link_in_the_docs_leads_to_a_file() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for path in documents() {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = path.strip_prefix(root()).unwrap_or(&path).display().to_string();
        let dir = path.parent().expect("a document's directory");
        for (line, target) in relative_links(&text) {
            checked += 1;
            let without_anchor = target.split('#').next().unwrap_or_default();
            if !dir.join(without_anchor).exists() {
                problems.push(format!("{file}:{line}: ({target})"));
            }
        }
    }
    assert!(checked >= 50, "the docs link each other: {checked} relative links");
    assert!(problems.is_empty(), "{} link(s) lead nowhere:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn the_link_reader_sees_relative_links_outside_code() {
    let text = "See [a](guide/a.md#x), [`b/`](../b/README.md) and [web](https://x.org), [here](#top).\n\
                `[not](a-link.md)` and [c](c.md \"title\")\n```\n[d](in-a-block.md)\n```\n";
    let links: Vec<String> = relative_links(text).into_iter().map(|(_, t)| t).collect();
    assert_eq!(links, ["guide/a.md#x", "../b/README.md", "c.md"]);
}

#[test]
fn the_reader_sees_commands_and_synopses_apart() {
    assert_eq!(
        command_of("arcsim run --seed 3   # passes"),
        Some(vec!["run".into(), "--seed".into(), "3".into()])
    );
    assert_eq!(command_of("cargo run --release -p arcsim -- sweep").map(|w| w.len()), Some(1));
    assert_eq!(command_of("arcsim: 1 violation(s)"), None);
    assert!(is_synopsis_word("[--json") && is_synopsis_word("N") && is_synopsis_word("NAME=ALT"));
    assert!(!is_synopsis_word("--seed") && !is_synopsis_word("3") && !is_synopsis_word("bug-4201"));
}

/// The slow tier: the runs the docs promise fail.
mod slow {
    use std::process::Command;

    use super::{command_of, root};

    /// Each finding's "The run: `arcsim run …`" still fails (exit status 1, failures found): the
    /// finding's evidence, as a reader would replay it.
    #[test]
    #[ignore = "slow tier: one run per finding, some of 60 runners"]
    fn every_findings_run_still_fails() {
        let mut runs = 0;
        for entry in std::fs::read_dir(root().join("findings")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "md") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap().replace('\n', " ");
            for rest in text.split("The run: `").skip(1) {
                let line = rest.split('`').next().unwrap_or_default();
                let words = command_of(line).unwrap_or_else(|| panic!("{}: {line}", path.display()));
                let output = Command::new(env!("CARGO_BIN_EXE_arcsim")).args(&words).output().unwrap();
                let stderr = String::from_utf8_lossy(&output.stderr);
                assert_eq!(
                    output.status.code(),
                    Some(1),
                    "{}: `arcsim {line}` no longer fails: {stderr}",
                    path.display()
                );
                runs += 1;
            }
        }
        assert!(runs >= 8, "the findings name their runs ({runs})");
    }
}
