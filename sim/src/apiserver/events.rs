//! What the fake API server puts into the run's record: every answered request (with its actor, the
//! audit log of mutating ones), every watch opened and every item it sent, every object a client was
//! handed ([`ReadEntry`](super::reads::ReadEntry)), every read served from the watch cache, every
//! committed change, what the garbage collector and the other controllers did, discovery requests and
//! injected faults. Each renders one trace line (or none).

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
    /// Sim milliseconds when it reached the store (a write's commit, a read's snapshot); earlier than
    /// `ms` by the serving time after the commit.
    pub served_ms: u64,
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
    /// FNV-1a of the request body (JSON, without `metadata.resourceVersion`), when the trace renders
    /// lines or a judge keeps [`BodyHashes`]; `None` otherwise (no body is hashed for nothing).
    pub body_hash: Option<u64>,
    /// resourceVersion of the object in the answer (empty on errors).
    pub resource_version: String,
    /// `Warning` headers sent with the answer.
    pub warnings: usize,
    /// Whether the request changed the store and was then answered with a failure (`code` 500 or
    /// 504) or with nothing (`code` 0: the connection was dropped) by an injected fault.
    pub committed_then_failed: bool,
}

/// What a judge that reads [`AuditEntry::body_hash`] keeps besides the entries
/// (`Interest::of::<AuditEntry>().and::<BodyHashes>()`), so that the server hashes request bodies with
/// the trace off. Never recorded itself.
#[derive(Debug)]
pub struct BodyHashes;

impl Observed for BodyHashes {
    fn line(&self) -> Option<Line<'_>> {
        None
    }

    crate::observed_as_any!();
}

impl AuditEntry {
    /// Whether the request took effect: answered with success, or committed before a fault failed it.
    pub fn took_effect(&self) -> bool {
        self.code < 300 || self.committed_then_failed
    }
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
        if self.committed_then_failed {
            details.push_str(" after-commit");
        }
        if self.warnings > 0 {
            details.push_str(&format!(" warnings={}", self.warnings));
        }
        if self.verb.is_mutating()
            && let Some(hash) = self.body_hash
        {
            details.push_str(&format!(" body={hash:016x}"));
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
    /// An injected fault made the stream go silent (it ends at its timeout).
    Stalled,
    /// The server closed the stream: the watcher had fallen `backlog` events behind
    /// (`slow_watcher_backlog`).
    ClosedSlow {
        /// The events its cache had that it had not delivered.
        backlog: usize,
    },
    /// A perturbation dropped the parked event of `key` because the object changed again (the client
    /// gets only the later event).
    Coalesced {
        /// `namespace/name`.
        key: String,
    },
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
            WatchItem::Stalled => {
                ("stalled".into(), format!("{} injected fault: silent until its timeout", self.resource))
            }
            WatchItem::ClosedSlow { backlog } => {
                ("closed-slow".into(), format!("{} backlog={backlog}", self.resource))
            }
            WatchItem::Coalesced { key } => ("coalesced".into(), format!("{} {key}", self.resource)),
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
    /// The change, without its encoding ([`Change::without_encoding`]).
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

/// What one of the fake's kube-controller-manager controllers wrote (`serviceaccount-controller`
/// creating a namespace's `default` ServiceAccount, `resourcequota-controller` recalculating a quota's
/// status).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerWrote {
    /// The controller, as the trace names its actor.
    pub controller: &'static str,
    /// What it did (`create`, `update-status`).
    pub action: &'static str,
    /// Resource plural.
    pub resource: String,
    /// `namespace/name`.
    pub key: String,
}

impl Observed for ControllerWrote {
    fn line(&self) -> Option<Line<'_>> {
        Some(Line::new(self.controller, self.action, format!("{} {}", self.resource, self.key)))
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

/// What an injected fault did to a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultEffect {
    /// Delayed it by this many milliseconds before serving it.
    Delayed {
        /// The delay.
        ms: u64,
    },
    /// Answered it with this code instead of serving it (nothing changed).
    Refused {
        /// 500, 502, 503, 504, 429 or 409.
        code: u16,
    },
    /// Served it (the store changed), then answered this code instead of the result.
    CommittedThenAnswered {
        /// 500 or 504.
        code: u16,
    },
    /// Served it (the store changed), then dropped the connection without an answer.
    CommittedThenDropped,
}

/// An injected fault of the fault plan fired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiFault {
    /// Who sent the request (`None` when unattributed).
    pub actor: Option<String>,
    /// The verb.
    pub verb: ApiVerb,
    /// Resource plural.
    pub resource: String,
    /// Namespace (empty for cluster-scoped kinds and collections across namespaces).
    pub namespace: String,
    /// The object's name (for a create, the name it was given); empty for collections.
    pub name: String,
    /// What the request path named (`ns/name`, `ns/*`…).
    pub target: String,
    /// What the fault did.
    pub effect: FaultEffect,
}

impl ApiFault {
    /// Whether the request had changed the store before the fault failed it.
    pub fn after_commit(&self) -> bool {
        matches!(self.effect, FaultEffect::CommittedThenAnswered { .. } | FaultEffect::CommittedThenDropped)
    }
}

impl Observed for ApiFault {
    fn line(&self) -> Option<Line<'_>> {
        let (verb, plural, target) = (self.verb, &self.resource, &self.target);
        let what = match self.effect {
            FaultEffect::Delayed { ms } => format!("latency {ms}ms {verb} {plural}"),
            FaultEffect::Refused { code } => format!("{code} {verb} {plural} {target}"),
            FaultEffect::CommittedThenAnswered { code } => {
                format!("commit-then-{code} {verb} {plural} {target}")
            }
            FaultEffect::CommittedThenDropped => format!("commit-then-drop {verb} {plural} {target}"),
        };
        Some(Line::new("apiserver", "fault", what))
    }

    fn resource(&self) -> Option<&str> {
        Some(&self.resource)
    }

    crate::observed_as_any!();
}

/// A request that waited for a seat of the load's priority level, or was turned away
/// ([`load`](super::load)); a request seated at once leaves none. Only a rejection has a trace line
/// (its answer's has the 429 too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatWait {
    /// Who sent the request (`None` when unattributed).
    pub actor: Option<String>,
    /// The verb.
    pub verb: ApiVerb,
    /// Resource plural.
    pub resource: String,
    /// What the request path named.
    pub target: String,
    /// How long it waited, in sim ms.
    pub waited_ms: u64,
    /// Why it was rejected (`queue-full`, `waited-too-long`), or `None` when it was seated.
    pub rejected: Option<&'static str>,
}

impl Observed for SeatWait {
    fn line(&self) -> Option<Line<'_>> {
        let reason = self.rejected?;
        let (verb, plural, target, waited) = (self.verb, &self.resource, &self.target, self.waited_ms);
        Some(Line::new(
            "apiserver",
            "load",
            format!("429 {verb} {plural} {target} {reason} after {waited}ms"),
        ))
    }

    fn resource(&self) -> Option<&str> {
        Some(&self.resource)
    }

    crate::observed_as_any!();
}

/// A list or watch served from the watch cache (a `resourceVersion` of `0`, or `NotOlderThan`), with
/// how far the cache was behind the store for what was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheRead {
    /// Who asked (`None` when unattributed).
    pub actor: Option<String>,
    /// List or watch.
    pub verb: ApiVerb,
    /// Resource plural.
    pub resource: String,
    /// The namespace asked for (empty: all).
    pub namespace: String,
    /// The `resourceVersion` asked for, as sent.
    pub requested_rv: String,
    /// The cache's resourceVersion: what the answer (or the watch's first events) reflect.
    pub cache_rv: u64,
    /// The store's resourceVersion at the same moment.
    pub store_rv: u64,
    /// Changes in the scope asked for (namespace and selectors) that the store had committed and the
    /// cache had not received: how many objects the answer has older than the store's (or missing, or
    /// still present).
    pub behind: usize,
}

impl CacheRead {
    /// Whether the reader was handed a state older than the store's.
    pub fn stale(&self) -> bool {
        self.behind > 0
    }
}

impl Observed for CacheRead {
    fn line(&self) -> Option<Line<'_>> {
        let scope = if self.namespace.is_empty() { "*".to_string() } else { format!("{}/*", self.namespace) };
        let by = self.actor.as_ref().map(|a| format!(" by={a}")).unwrap_or_default();
        let details = format!(
            "{} {scope} at rv={} -> cache rv={} store rv={} behind={}{by}",
            self.resource, self.requested_rv, self.cache_rv, self.store_rv, self.behind
        );
        Some(Line::new("apiserver cache", self.verb.as_str(), details))
    }

    fn resource(&self) -> Option<&str> {
        Some(&self.resource)
    }

    crate::observed_as_any!();
}
