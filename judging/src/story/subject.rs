//! [`Subject`]: one thing a violation is about — a Kubernetes object, a GitHub runner or a job — read
//! from the words an oracle put in [`Violation::objects`](crate::violation::Violation::objects).

use std::fmt;

/// Something a violation names and events touch.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Subject {
    /// A stored object: its resource plural and `namespace/name`.
    Object {
        /// Resource plural (`ephemeralrunners`, `pods`).
        resource: String,
        /// `namespace/name`.
        key: String,
    },
    /// A GitHub runner, by id.
    Runner(i64),
    /// A GitHub job, by request id.
    Job(i64),
}

impl Subject {
    /// An object subject.
    pub fn object(resource: &str, key: &str) -> Subject {
        Subject::Object { resource: resource.to_string(), key: key.to_string() }
    }

    /// The subjects named in one of a violation's object strings (`ephemeralrunner ns/x`,
    /// `runner 17`, `runner 17 (name)`, `runners 3 and 4`, `job 4`, `pod ns/x`); none for words that
    /// name no single thing (`5 runners (2 deleting)`).
    pub fn parse(text: &str) -> Vec<Subject> {
        let mut words = text.split_whitespace();
        let Some(kind) = words.next() else { return Vec::new() };
        let rest: Vec<&str> = words.collect();
        match kind {
            "runner" | "runners" | "job" | "jobs"
                if rest.first().is_some_and(|w| w.parse::<i64>().is_ok()) =>
            {
                ids(&rest)
                    .map(|id| if kind.starts_with("job") { Subject::Job(id) } else { Subject::Runner(id) })
                    .collect()
            }
            _ => match rest.first() {
                Some(key) if key.contains('/') && kind.chars().all(|c| c.is_ascii_lowercase()) => {
                    vec![Subject::object(&plural_of(kind), key)]
                }
                _ => Vec::new(),
            },
        }
    }

    /// The subjects of every object string of a violation, deduplicated, in order.
    pub fn parse_all(objects: &[String]) -> Vec<Subject> {
        let mut out: Vec<Subject> = Vec::new();
        for subject in objects.iter().flat_map(|o| Subject::parse(o)) {
            if !out.contains(&subject) {
                out.push(subject);
            }
        }
        out
    }

    /// A short label (`ephemeralrunner arc-runners/x`, `runner 17`, `job 4`).
    pub fn label(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Object { resource, key } => write!(f, "{} {key}", singular_of(resource)),
            Subject::Runner(id) => write!(f, "runner {id}"),
            Subject::Job(id) => write!(f, "job {id}"),
        }
    }
}

/// The integers among `words` (`3 and 4` → 3, 4; `17 (name)` → 17).
fn ids<'a>(words: &'a [&'a str]) -> impl Iterator<Item = i64> + 'a {
    words
        .iter()
        .filter_map(|w| w.trim_matches(|c: char| matches!(c, '(' | ')' | ',' | ';' | ':' | '.')).parse().ok())
}

/// The resource plural of a kind word (`ephemeralrunner` → `ephemeralrunners`; plurals stay).
pub fn plural_of(kind: &str) -> String {
    if kind.ends_with('s') { kind.to_string() } else { format!("{kind}s") }
}

/// The singular of a resource plural (`ephemeralrunners` → `ephemeralrunner`).
pub fn singular_of(resource: &str) -> &str {
    resource.strip_suffix('s').unwrap_or(resource)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn violation_words_name_objects_runners_and_jobs() {
        assert_eq!(
            Subject::parse("ephemeralrunner arc-runners/r-1"),
            vec![Subject::object("ephemeralrunners", "arc-runners/r-1")]
        );
        assert_eq!(Subject::parse("pod arc-runners/r-1"), vec![Subject::object("pods", "arc-runners/r-1")]);
        assert_eq!(Subject::parse("runner 17"), vec![Subject::Runner(17)]);
        assert_eq!(Subject::parse("runner 17 (r-1)"), vec![Subject::Runner(17)]);
        assert_eq!(Subject::parse("runners 3 and 4"), vec![Subject::Runner(3), Subject::Runner(4)]);
        assert_eq!(Subject::parse("job 4"), vec![Subject::Job(4)]);
        assert!(Subject::parse("5 runners (2 deleting)").is_empty());
        assert!(Subject::parse("controller ephemeralrunner").is_empty());
        assert!(Subject::parse("runner name r-1").is_empty());
    }

    #[test]
    fn subjects_print_as_violations_name_them() {
        let all = Subject::parse_all(&["ephemeralrunner ns/x".into(), "runner 2".into(), "runner 2".into()]);
        let labels: Vec<String> = all.iter().map(Subject::label).collect();
        assert_eq!(labels, vec!["ephemeralrunner ns/x", "runner 2"]);
    }
}
