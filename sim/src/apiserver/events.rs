//! What the fake API server puts into the run's record: every answered request (with its actor, the
//! audit log of mutating ones), every watch opened and every item it sent, every object a client was
//! handed ([`ReadEntry`](super::reads::ReadEntry)), every committed change, what the garbage
//! collector did, discovery requests and injected faults. Each renders the trace line it always had.

use std::sync::Arc;

use super::store::Change;
use crate::faults::ApiVerb;
use crate::record::{Line, Observed};

/// One answered request (every verb but watch, see [`WatchOpened`]). The mutating ones are what
/// kube-apiserver's audit log would record; their trace line carries the hash of the request body, so
/// a write whose content varied between two runs shows in the trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    /// Sim milliseconds when it was answered.
    pub ms: u64,
    /// Who sent it (the actor header; `client` when absent).
    pub actor: String,
    /// Whether the request named its actor.
    pub attributed: bool,
    /// The verb.
    pub verb: ApiVerb,
    /// Resource plural.
    pub resource: String,
    /// Namespace (empty for cluster-scoped kinds).
    pub namespace: String,
    /// Object name (for creates, the name the server gave, else the name asked for).
    pub name: String,
    /// What the request path named (`ns/name`, `ns/name/status`, `ns/*`, `*`).
    pub target: String,
    /// Whether it addressed `/status`.
    pub status_subresource: bool,
    /// HTTP status of the answer.
    pub code: u16,
    /// The `Status` reason of a failed answer (empty on success).
    pub reason: String,
    /// FNV-1a of the request body (JSON, without `metadata.resourceVersion`).
    pub body_hash: u64,
    /// resourceVersion of the object in the answer (empty on errors).
    pub resource_version: String,
    /// `Warning` headers sent with the answer.
    pub warnings: usize,
}

impl Observed for AuditEntry {
    fn line(&self) -> Option<Line<'_>> {
        let mut details = format!("{} {} -> {}", self.resource, self.target, self.code);
        if !self.resource_version.is_empty() {
            details.push_str(&format!(" rv={}", self.resource_version));
        }
        if !self.reason.is_empty() {
            details.push_str(&format!(" {}", self.reason));
        }
        if self.warnings > 0 {
            details.push_str(&format!(" warnings={}", self.warnings));
        }
        if self.verb.is_mutating() {
            details.push_str(&format!(" body={:016x}", self.body_hash));
        }
        if self.attributed {
            details.push_str(&format!(" by={}", self.actor));
        }
        Some(Line { actor: "apiserver".into(), event: self.verb.as_str().into(), details })
    }

    fn resource(&self) -> Option<&str> {
        Some(&self.resource)
    }

    crate::observed_as_any!();
}

/// A watch request accepted: its stream `watch#id` starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchOpened {
    /// The stream's id.
    pub id: u64,
    /// Who asked (`None` when unattributed).
    pub actor: Option<String>,
    /// Resource plural.
    pub resource: String,
    /// What the path named (`ns/*`, `*`).
    pub target: String,
    /// The resourceVersion it starts after (`now` when none was given).
    pub from: String,
}

impl Observed for WatchOpened {
    fn line(&self) -> Option<Line<'_>> {
        let by = self.actor.as_ref().map(|a| format!(" by={a}")).unwrap_or_default();
        let details =
            format!("{} {} -> 200 watch#{} from rv={}{by}", self.resource, self.target, self.id, self.from);
        Some(Line::new("apiserver", "watch", details))
    }

    fn resource(&self) -> Option<&str> {
        Some(&self.resource)
    }

    crate::observed_as_any!();
}

/// What a watch stream sent or did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchItem {
    /// `ADDED`, `MODIFIED` or `DELETED` of `key` at `rv`.
    Change {
        /// The event type's wire name.
        kind: &'static str,
        /// `namespace/name`.
        key: String,
        /// The object's resourceVersion.
        rv: String,
    },
    /// A `BOOKMARK` at `rv`.
    Bookmark {
        /// The bookmark's resourceVersion.
        rv: u64,
    },
    /// An `ERROR` event (the stream ends).
    Error {
        /// Its `Status` code.
        code: String,
        /// Its message.
        message: String,
    },
    /// The server-side timeout ended the stream.
    Timeout,
    /// An injected fault cut the stream.
    Dropped,
}

/// One item of watch `watch#id` sent to its client (or the stream's end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchSent {
    /// The stream.
    pub id: u64,
    /// Who is watching (`None` when unattributed).
    pub actor: Option<String>,
    /// Resource plural.
    pub resource: String,
    /// What was sent.
    pub item: WatchItem,
}

impl Observed for WatchSent {
    fn line(&self) -> Option<Line<'_>> {
        let (event, details) = match &self.item {
            WatchItem::Change { kind, key, rv } => {
                ((*kind).to_string(), format!("{} {key} rv={rv}", self.resource))
            }
            WatchItem::Bookmark { rv } => ("BOOKMARK".into(), format!("{} rv={rv}", self.resource)),
            WatchItem::Error { code, message } => ("ERROR".into(), format!("{code} {message}")),
            WatchItem::Timeout => ("timeout".into(), String::new()),
            WatchItem::Dropped => ("dropped".into(), "injected fault".into()),
        };
        Some(Line { actor: format!("apiserver watch#{}", self.id).into(), event: event.into(), details })
    }

    fn resource(&self) -> Option<&str> {
        Some(&self.resource)
    }

    crate::observed_as_any!();
}

/// A change committed to the store (no line: the request or the garbage collector that made it has
/// one).
#[derive(Debug, Clone)]
pub struct Committed {
    /// Resource plural.
    pub resource: String,
    /// The change.
    pub change: Arc<Change>,
}

impl Observed for Committed {
    fn line(&self) -> Option<Line<'_>> {
        None
    }

    fn resource(&self) -> Option<&str> {
        Some(&self.resource)
    }

    crate::observed_as_any!();
}

/// What the garbage collector did to one object (`delete`, `orphan`, `strip-dangling-owners`,
/// `finalize-foreground`, `finalize-orphan`, `finalize-namespace`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collected {
    /// The action.
    pub action: &'static str,
    /// Resource plural.
    pub resource: String,
    /// `namespace/name`.
    pub key: String,
}

impl Observed for Collected {
    fn line(&self) -> Option<Line<'_>> {
        Some(Line::new("apiserver gc", self.action, format!("{} {}", self.resource, self.key)))
    }

    fn resource(&self) -> Option<&str> {
        Some(&self.resource)
    }

    crate::observed_as_any!();
}

/// A discovery request and its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveryServed {
    /// The path asked for.
    pub path: String,
    /// 200 or 404.
    pub code: u16,
}

impl Observed for DiscoveryServed {
    fn line(&self) -> Option<Line<'_>> {
        Some(Line::new("apiserver", "discovery", format!("{} -> {}", self.path, self.code)))
    }

    crate::observed_as_any!();
}

/// An injected fault of the fault plan fired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiFault {
    /// What it did (`latency 40ms update pods`, `503 create pods ns/*`, …).
    pub what: String,
}

impl Observed for ApiFault {
    fn line(&self) -> Option<Line<'_>> {
        Some(Line::new("apiserver", "fault", &self.what))
    }

    crate::observed_as_any!();
}
