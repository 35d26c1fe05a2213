//! [`Told`]: one event of the record in one line — when, who (the lane it belongs to), what — worded
//! for a person reading a race rather than for the trace's hash: a committed change says the phase it
//! left the object in, a watch delivery whom it reached.

use arc_sim::apiserver::{AuditEntry, Committed, WatchItem, WatchSent};
use arc_sim::github::GitHubEvent;
use arc_sim::kubelet::KubeletEvent;
use arc_sim::record::Event;
use serde_json::Value;

use super::subject::singular_of;
use crate::view::{is_deleting, runner_id, str_at};

/// One event, told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Told {
    /// Its sequence number in the run.
    pub seq: u64,
    /// Sim ms.
    pub at_ms: u64,
    /// Who acted (`controller`, `apiserver`, `watch#3`, `github`, `kubelet`, `world`, …).
    pub who: String,
    /// What happened.
    pub what: String,
}

impl Told {
    /// The line a story prints: `  412.345 s  controller  delete ephemeralrunners ns/x -> 200`.
    pub fn line(&self) -> String {
        format!("{}  {:<12} {}", seconds(self.at_ms), self.who, self.what)
    }
}

/// Sim ms as seconds with milliseconds, right-aligned (`   412.345 s`).
pub fn seconds(ms: u64) -> String {
    format!("{:>6}.{:03} s", ms / 1000, ms % 1000)
}

/// `event` told in a line; `None` for events without a line of their own (reads are part of the
/// request or delivery that handed the object over).
pub fn tell(event: &Event) -> Option<Told> {
    let (who, what) = if let Some(a) = event.get::<AuditEntry>() {
        (a.actor.clone(), request_text(a))
    } else if let Some(c) = event.get::<Committed>() {
        ("apiserver".to_string(), committed(c))
    } else if let Some(w) = event.get::<WatchSent>() {
        (format!("watch#{}", w.id), delivery(w))
    } else if let Some(k) = event.get::<KubeletEvent>() {
        ("kubelet".to_string(), kubelet(k))
    } else if let Some((by, what)) = event.get::<GitHubEvent>().and_then(called_github) {
        (by, what)
    } else {
        let line = event.body.line()?;
        let who = line.actor.strip_prefix("apiserver ").unwrap_or(&line.actor).to_string();
        (who, format!("{} {}", line.event, line.details).trim_end().to_string())
    };
    Some(Told { seq: event.seq, at_ms: event.at_ms, who, what })
}

/// A request and its answer: `create pods ns/name -> 201 rv=12` (a create names the object the
/// server made rather than the collection it was sent to).
pub fn request_text(a: &AuditEntry) -> String {
    let mut out = format!("{} {} {} -> {}", a.verb.as_str(), a.resource, target(a), a.code);
    if !a.reason.is_empty() {
        out.push_str(&format!(" {}", a.reason));
    }
    if !a.resource_version.is_empty() {
        out.push_str(&format!(" rv={}", a.resource_version));
    }
    out
}

/// What a request addressed, with a create's `ns/*` replaced by the name it got.
pub fn target(a: &AuditEntry) -> String {
    match a.target.strip_suffix('*') {
        Some(prefix) if !a.name.is_empty() && (prefix.is_empty() || prefix.ends_with('/')) => {
            format!("{prefix}{}", a.name)
        }
        _ => a.target.clone(),
    }
}

fn committed(c: &Committed) -> String {
    let change = &c.change;
    format!(
        "commit {} {} {} rv={}{}",
        change.kind.as_str(),
        singular_of(&c.resource),
        change.key.display(),
        change.rv,
        state_of(&change.object)
    )
}

/// What a reader of a race wants of an object's state: phase, runner id, whether it is being deleted.
pub fn state_of(object: &Value) -> String {
    let mut out = String::new();
    if let Some(phase) = str_at(object, "/status/phase") {
        out.push_str(&format!(" phase={phase}"));
    }
    let id = runner_id(object);
    if id != 0 {
        out.push_str(&format!(" runnerId={id}"));
    }
    if is_deleting(object) {
        out.push_str(" deleting");
    }
    out
}

fn delivery(w: &WatchSent) -> String {
    let to = w.actor.as_deref().unwrap_or("client");
    match &w.item {
        WatchItem::Change { kind, key, rv } => {
            format!("{kind} {} {key} rv={rv} to {to}", singular_of(&w.resource))
        }
        WatchItem::Bookmark { rv } => format!("BOOKMARK {} rv={rv} to {to}", w.resource),
        WatchItem::Error { code, message } => format!("ERROR {code} {message} to {to}"),
        WatchItem::Timeout => format!("timeout {} to {to}", w.resource),
        WatchItem::Dropped => format!("dropped {} to {to} (injected fault)", w.resource),
        WatchItem::Stalled => {
            format!("stalled {} to {to}: silent until its timeout (injected fault)", w.resource)
        }
        WatchItem::ClosedSlow { backlog } => {
            format!("closed {} to {to}: {backlog} events behind (slow watcher)", w.resource)
        }
        WatchItem::Coalesced { key } => {
            format!("dropped {} {key} to {to}: coalesced into its next event (perturbation)", w.resource)
        }
    }
}

/// A GitHub event a call made, told as its caller's: (`controller`, `at github: remove-runner
/// runner=0 outcome=Unknown`); `None` for the service's own doing.
pub fn called_github(g: &GitHubEvent) -> Option<(String, String)> {
    let by = g.by.clone()?;
    let line = arc_sim::record::Observed::line(g)?;
    Some((by, format!("at github: {} {}", line.event, line.details).trim_end().to_string()))
}

fn kubelet(k: &KubeletEvent) -> String {
    let Ok(Value::Object(fields)) = serde_json::to_value(&k.kind) else { return format!("pod {}", k.pod) };
    let name = fields.get("event").and_then(Value::as_str).unwrap_or("event");
    let rest: Vec<String> = fields
        .iter()
        .filter(|(f, v)| f.as_str() != "event" && !v.is_null())
        .map(|(f, v)| format!("{f}={}", v.as_str().map_or_else(|| v.to_string(), str::to_string)))
        .collect();
    format!("{name} pod {} {}", k.pod, rest.join(" ")).trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_seconds_with_milliseconds() {
        assert_eq!(seconds(412_345), "   412.345 s");
        assert_eq!(seconds(7), "     0.007 s");
    }

    #[test]
    fn a_github_event_a_call_made_is_told_as_its_callers() {
        use arc_sim::github::{EventKind, RemoveOutcome};
        let kind = EventKind::RemoveRunner { runner_id: 0, outcome: RemoveOutcome::Unknown };
        let called = GitHubEvent { at_ms: 5, kind: kind.clone(), by: Some("controller".into()) };
        let (who, what) = called_github(&called).expect("a call's event");
        assert_eq!(who, "controller");
        assert!(what.starts_with("at github: remove-runner "), "{what}");
        assert!(what.contains("runner=0"), "{what}");
        assert_eq!(called_github(&GitHubEvent { at_ms: 5, kind, by: None }), None);
    }

    #[test]
    fn an_object_state_names_phase_runner_and_deletion() {
        let er = serde_json::json!({"metadata": {"deletionTimestamp": "x"}, "status": {"phase": "Running", "runnerId": 7}});
        assert_eq!(state_of(&er), " phase=Running runnerId=7 deleting");
        assert_eq!(state_of(&serde_json::json!({})), "");
    }
}
