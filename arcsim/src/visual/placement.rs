//! Where each event of the record goes on the timeline: its lane, its kind (how it is drawn), its
//! label, its body (what a click shows: the committed object, the request's fields) and the arrow it
//! draws — a request from its actor to the API server, a watch delivery from the commit of its
//! resourceVersion to its stream, with the lag between the two.

use std::collections::BTreeMap;

use arc_sim::apiserver::{
    ApiFault, AuditEntry, Collected, Committed, DiscoveryServed, WatchItem, WatchOpened, WatchSent,
};
use arc_sim::github::{GitHubCall, GitHubEvent};
use arc_sim::kubelet::KubeletEvent;
use arc_sim::record::{Event, WorldEvent};
use serde::Serialize;
use serde_json::{Value, json};

use super::lanes::Section;
use arc_judging::story::involves::github_subjects;
use arc_judging::story::told::request_text;
use arc_judging::story::{Subject, tell};

/// How an event is drawn (the page has one style per kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// An API request answered 2xx.
    Request,
    /// An API request answered 4xx.
    Refused,
    /// An API request answered 5xx (or not at all).
    Failed,
    /// A change committed to the store.
    Commit,
    /// A watch stream opened.
    WatchOpen,
    /// A change delivered on a watch stream.
    Delivery,
    /// Anything else a watch stream sent or did (bookmark, error, timeout, drop).
    WatchOther,
    /// A GitHub state change.
    #[serde(rename = "github")]
    GitHub,
    /// An HTTP call the fake GitHub answered.
    #[serde(rename = "github-call")]
    GitHubCall,
    /// A kubelet action.
    Kubelet,
    /// A step of the world.
    World,
    /// An injected fault.
    Fault,
    /// The garbage collector acted.
    Gc,
    /// Anything else with a trace line.
    Other,
}

impl Kind {
    /// Every kind, in the order the page's legend lists them.
    pub const ALL: [Kind; 14] = [
        Kind::Request,
        Kind::Refused,
        Kind::Failed,
        Kind::Commit,
        Kind::WatchOpen,
        Kind::Delivery,
        Kind::WatchOther,
        Kind::GitHub,
        Kind::GitHubCall,
        Kind::Kubelet,
        Kind::World,
        Kind::Fault,
        Kind::Gc,
        Kind::Other,
    ];

    /// Its index in [`Kind::ALL`].
    pub fn index(self) -> u8 {
        Kind::ALL.iter().position(|k| *k == self).unwrap_or(0) as u8
    }
}

/// A lane as an event names it: name, section, and the order it sorts by within its section.
pub type LaneRef = (String, Section, u64);

/// An arrow between two lanes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrowSpec {
    /// Where it starts, and when.
    pub from: (LaneRef, u64),
    /// Where it ends, and when.
    pub to: (LaneRef, u64),
}

/// Where one event goes.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed {
    /// Its lane.
    pub lane: LaneRef,
    /// How it is drawn.
    pub kind: Kind,
    /// Its one-line label.
    pub label: String,
    /// What a click shows.
    pub body: Value,
    /// The arrow it draws, if any.
    pub arrow: Option<ArrowSpec>,
    /// Whether it is also marked across all lanes (faults, restarts, disruptions).
    pub marked: bool,
}

/// When each resourceVersion was committed (the start of a watch delivery's arrow).
pub type CommitTimes = BTreeMap<u64, u64>;

/// The lane of the API server.
pub fn apiserver_lane() -> LaneRef {
    ("apiserver".into(), Section::ApiServer, 0)
}

fn actor_lane(actor: &str) -> LaneRef {
    let order = ["controller", "listener", "kubelet", "user"].iter().position(|a| *a == actor).unwrap_or(9);
    (actor.to_string(), Section::Actors, order as u64)
}

/// The lane of watch stream `id`.
pub fn watch_lane(id: u64, resource: &str, actor: Option<&str>) -> LaneRef {
    (format!("watch#{id} {resource} → {}", actor.unwrap_or("client")), Section::Watches, id)
}

/// The lane of runner `id`.
pub fn runner_lane(id: i64) -> LaneRef {
    (format!("runner {id}"), Section::Runners, id.max(0) as u64)
}

/// Where `event` goes; `None` for events the timeline leaves out (reads: each is part of the request
/// or delivery that handed the object over).
pub fn place(event: &Event, commits: &CommitTimes) -> Option<Placed> {
    if let Some(a) = event.get::<AuditEntry>() {
        return Some(request(a, event.at_ms));
    }
    if let Some(w) = event.get::<WatchOpened>() {
        return Some(watch_opened(w, event.at_ms));
    }
    if let Some(w) = event.get::<WatchSent>() {
        return Some(delivery(w, event.at_ms, commits));
    }
    if let Some(c) = event.get::<Committed>() {
        return Some(committed(c, event));
    }
    if let Some(g) = event.get::<GitHubEvent>() {
        return Some(github(g, event));
    }
    if let Some(k) = event.get::<KubeletEvent>() {
        let body = serde_json::to_value(k).unwrap_or(Value::Null);
        return Some(simple(event, actor_lane("kubelet"), Kind::Kubelet, body));
    }
    other(event)
}

fn told(event: &Event) -> String {
    tell(event).map(|t| t.what).unwrap_or_default()
}

fn simple(event: &Event, lane: LaneRef, kind: Kind, body: Value) -> Placed {
    Placed { lane, kind, label: told(event), body, arrow: None, marked: false }
}

fn request(a: &AuditEntry, at_ms: u64) -> Placed {
    let kind = match a.code {
        200..=299 => Kind::Request,
        400..=499 => Kind::Refused,
        _ => Kind::Failed,
    };
    let body = json!({
        "actor": a.actor, "verb": a.verb.as_str(), "resource": a.resource, "namespace": a.namespace,
        "name": a.name, "target": a.target, "status_subresource": a.status_subresource, "code": a.code,
        "reason": a.reason, "resource_version": a.resource_version, "warnings": a.warnings,
        "body_hash": a.body_hash.map(|hash| format!("{hash:016x}")),
    });
    let lane = actor_lane(&a.actor);
    let arrow = ArrowSpec { from: (lane.clone(), at_ms), to: (apiserver_lane(), at_ms) };
    Placed { lane, kind, label: request_text(a), body, arrow: Some(arrow), marked: false }
}

fn watch_opened(w: &WatchOpened, at_ms: u64) -> Placed {
    let lane = watch_lane(w.id, &w.resource, w.actor.as_deref());
    let body =
        json!({"watch": w.id, "actor": w.actor, "resource": w.resource, "target": w.target, "from": w.from});
    let from = actor_lane(w.actor.as_deref().unwrap_or("client"));
    let arrow = ArrowSpec { from: (from, at_ms), to: (lane.clone(), at_ms) };
    let label = format!("watch {} {} from rv={}", w.resource, w.target, w.from);
    Placed { lane, kind: Kind::WatchOpen, label, body, arrow: Some(arrow), marked: false }
}

fn delivery(w: &WatchSent, at_ms: u64, commits: &CommitTimes) -> Placed {
    let lane = watch_lane(w.id, &w.resource, w.actor.as_deref());
    let (kind, label, arrow, body) = match &w.item {
        WatchItem::Change { kind, key, rv } => {
            let committed = rv.parse::<u64>().ok().and_then(|rv| commits.get(&rv).copied());
            let lag = committed.map(|c| at_ms.saturating_sub(c));
            let arrow =
                committed.map(|c| ArrowSpec { from: (apiserver_lane(), c), to: (lane.clone(), at_ms) });
            let lag_text = lag.map_or_else(String::new, |l| format!(" lag {l} ms"));
            let body = json!({"watch": w.id, "actor": w.actor, "resource": w.resource, "type": kind,
                "key": key, "rv": rv, "committed_ms": committed, "lag_ms": lag});
            (Kind::Delivery, format!("{kind} {key} rv={rv}{lag_text}"), arrow, body)
        }
        other => {
            let body = json!({"watch": w.id, "actor": w.actor, "resource": w.resource, "item": format!("{other:?}")});
            (Kind::WatchOther, format!("{other:?}"), None, body)
        }
    };
    Placed { lane, kind, label, body, arrow, marked: false }
}

fn committed(c: &Committed, event: &Event) -> Placed {
    let change = &c.change;
    let body = json!({"type": change.kind.as_str(), "resource": c.resource, "key": change.key.display(),
        "rv": change.rv, "object": &*change.object});
    simple(event, apiserver_lane(), Kind::Commit, body)
}

/// A GitHub event, on its runner's lane (or GitHub's); one a call made names its caller.
fn github(g: &GitHubEvent, event: &Event) -> Placed {
    let mut body = serde_json::to_value(&g.kind).unwrap_or(Value::Null);
    if let (Some(by), Value::Object(fields)) = (&g.by, &mut body) {
        fields.insert("by".into(), json!(by));
    }
    let runner = github_subjects(&g.kind).into_iter().find_map(|s| match s {
        Subject::Runner(id) => Some(id),
        _ => None,
    });
    let lane = runner.map_or_else(|| ("github".to_string(), Section::GitHub, 0), runner_lane);
    let placed = simple(event, lane, Kind::GitHub, body);
    match &g.by {
        Some(by) => Placed { label: format!("{by} {}", placed.label), ..placed },
        None => placed,
    }
}

/// Events of the API server, GitHub and the world that are neither requests nor changes.
fn other(event: &Event) -> Option<Placed> {
    let line = event.body.line()?;
    let text = json!({"line": format!("{} {} {}", line.actor, line.event, line.details)});
    let apiserver = apiserver_lane();
    let placed = if event.get::<ApiFault>().is_some() {
        Placed { marked: true, ..simple(event, apiserver, Kind::Fault, text) }
    } else if event.get::<Collected>().is_some() {
        simple(event, apiserver, Kind::Gc, text)
    } else if event.get::<DiscoveryServed>().is_some() {
        simple(event, apiserver, Kind::Other, text)
    } else if let Some(call) = event.get::<GitHubCall>() {
        let body = json!({"method": call.method, "path": call.path, "operation": call.operation, "status": call.status});
        simple(event, ("github".into(), Section::GitHub, 0), Kind::GitHubCall, body)
    } else if let Some(w) = event.get::<WorldEvent>() {
        world(event, w)
    } else {
        let lane = (line.actor.to_string(), Section::World, 1);
        simple(event, lane, Kind::Other, text)
    };
    Some(placed)
}

fn world(event: &Event, w: &WorldEvent) -> Placed {
    let lane = ("world".to_string(), Section::World, 0);
    let marked = matches!(w, WorldEvent::ControllerRestart { .. } | WorldEvent::Disruption(_));
    let body = match w {
        WorldEvent::Config(json) | WorldEvent::Disruption(json) => {
            serde_json::from_str(json).unwrap_or_else(|_| Value::String(json.clone()))
        }
        other => Value::String(format!("{other:?}")),
    };
    let mut placed = simple(event, lane, Kind::World, body);
    if matches!(w, WorldEvent::Config(_)) {
        placed.label = "config".into();
    }
    placed.marked = marked;
    placed
}
