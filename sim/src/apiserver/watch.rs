//! Watches: newline-delimited events resumed from a resourceVersion, delivered with seeded lag.
//!
//! Each watch is one task. It starts where [`WatchFrom`] says: the store's current objects (synthetic
//! ADDED, for a watch without a resourceVersion), the watch cache's objects (at `0`, or with
//! `sendInitialEvents`; they may be older than the store's), or the retained history after a
//! resourceVersion (410 Expired when it no longer reaches back far enough); then it follows the store.
//! Selectors are applied per event, so an object that stops matching is sent as DELETED and one that
//! starts matching as ADDED. A change is delivered once the watch cache has it (kube-apiserver serves
//! watches from its cacher) plus a lag drawn from the watch's own seeded stream, and never before the
//! item before it, so a watch is always in resourceVersion order however large its lag. Bookmarks
//! (at the cache's resourceVersion), server-side timeouts and injected drops end or punctuate the
//! stream; a watch that falls too far behind is closed, and a resume older than the watch cache's
//! window is answered 410, when the server is configured so. Every delivery goes into the trace.

use crate::json_at::At;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::channel::mpsc::UnboundedReceiver;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use tokio::time::{Instant, sleep_until};

use crate::clock::sleep_until_some;

use super::events::{CacheRead, WatchItem, WatchSent};
use super::reads::{self, ReadVia};
use super::registry::ResourceId;
use super::selector::Selectors;
use super::status;
use super::store::{Change, EventType};
use super::versions::WatchFrom;
use super::watch_stream::WatchSender;
use super::wire::{Wire, watch_line};
use super::{LagRange, Shared, State};
use crate::faults::ApiVerb;
use crate::perturb::EventFate;

/// A watch request, parsed from the query.
#[derive(Debug, Clone)]
pub struct WatchRequest {
    /// The resource type.
    pub resource: ResourceId,
    /// The namespace, or all.
    pub namespace: Option<String>,
    /// Label and field selectors.
    pub selectors: Selectors,
    /// Where the watch starts.
    pub from: WatchFrom,
    /// The `resourceVersion` asked for, as sent (empty when absent).
    pub requested_rv: String,
    /// `allowWatchBookmarks=true`.
    pub allow_bookmarks: bool,
    /// `timeoutSeconds`, in simulated time.
    pub timeout: Option<Duration>,
    /// Who asked (for the read log).
    pub actor: Option<String>,
}

/// A fault the fault layer attached to this watch, or an error the watch must end with at once.
#[derive(Debug, Clone, PartialEq)]
pub enum WatchFault {
    /// End the stream after this long.
    DropAfter(Duration),
    /// Go silent after this long, until the stream's timeout.
    StallAfter(Duration),
    /// Answer with the 410 Expired ERROR event at once.
    Expire,
    /// Answer with this `Status` as an ERROR event at once (how the cacher reports a watch it could not
    /// start, such as one waiting for a resourceVersion its cache never reached).
    Fail(Value),
}

/// Something a watch delivers.
#[derive(Debug, Clone)]
enum Item {
    /// An event of an object; with the change it came from, whose encoding every watch shares.
    Event(EventType, Arc<Value>, Option<Arc<Change>>),
    Bookmark {
        rv: u64,
        initial_events_end: bool,
    },
    Error(Value),
}

/// A small object (a bookmark, an error's Status) as JSON.
fn encode(object: &Value) -> Vec<u8> {
    crate::compact_json::to_vec(object)
}

/// An item on its way: when it goes out, and since when the watch cache has had it.
struct Queued {
    due: Instant,
    cached: Instant,
    item: Item,
}

/// Everything a watch task needs.
struct WatchTask {
    id: u64,
    shared: Arc<Shared>,
    request: WatchRequest,
    changes: UnboundedReceiver<Arc<Change>>,
    out: WatchSender,
    rng: ChaCha8Rng,
    lag: LagRange,
    pending: VecDeque<Queued>,
    last_due: Instant,
    /// When the watch falls further behind than `slow_watcher_backlog` allows, and how far: it ends
    /// then.
    too_slow: Option<(Instant, usize)>,
    /// The resourceVersion of the last change delivered (debug builds check the stream's order).
    last_rv: u64,
    /// Changes at or below this resourceVersion are already covered by the start.
    after: u64,
    deadline: Instant,
    drop_at: Option<Instant>,
    /// When the stream goes silent (a `stall-watch` fault): from then on nothing is sent and the
    /// stream waits for its timeout.
    stall_at: Option<Instant>,
    next_bookmark: Option<Instant>,
    /// An event a perturbation parked: its object's key, the event, and when it goes out if no later
    /// event of the object replaces it.
    parked: Option<(String, Item, Instant)>,
}

/// Starts a watch and returns its id; delivery bytes go to `out` until the stream ends (then `out` is
/// dropped, ending the HTTP body).
pub fn start(
    shared: &Arc<Shared>,
    request: WatchRequest,
    fault: Option<WatchFault>,
    out: WatchSender,
) -> u64 {
    let (tx, changes) = futures::channel::mpsc::unbounded();
    let plural = &shared.registry.get(request.resource).plural;
    let (id, opening, lag) = {
        let mut st = shared.lock();
        let lag = st.watch_lag(&shared.config, request.actor.as_deref(), plural);
        let id = st.next_watch_id;
        st.next_watch_id += 1;
        let opening = match &fault {
            Some(WatchFault::Expire) => {
                Opening::fails(expired_item(st.store.current_rv(), &request.requested_rv))
            }
            Some(WatchFault::Fail(status)) => Opening::fails(Item::Error(status.clone())),
            _ => opening(shared, &st, &request),
        };
        st.store.subscribe(Some(request.resource), request.namespace.clone(), tx);
        (id, opening, lag)
    };
    let mut rng = shared.seed.named_rng(&format!("apiserver/watch/{id}"));
    let now = Instant::now(); // allow-nondeterminism: tokio clock, paused in the sim
    let timeout = request.timeout.unwrap_or_else(|| Duration::from_secs(rng.random_range(1800..=3600)));
    let drop_at = match fault {
        Some(WatchFault::DropAfter(d)) => Some(now + d),
        _ => None,
    };
    let stall_at = match fault {
        Some(WatchFault::StallAfter(d)) => Some(now + d),
        _ => None,
    };
    let bookmark_every = Duration::from_millis(shared.config.bookmark_interval_ms.max(1));
    let mut task = WatchTask {
        id,
        lag,
        next_bookmark: request.allow_bookmarks.then_some(now + bookmark_every),
        shared: shared.clone(),
        request,
        changes,
        out,
        rng,
        pending: VecDeque::new(),
        last_due: now,
        too_slow: None,
        last_rv: 0,
        after: opening.after,
        deadline: now + timeout,
        drop_at,
        stall_at,
        parked: None,
    };
    for (item, visible_ms) in opening.items {
        task.schedule(item, visible_ms);
    }
    tokio::spawn(async move { task.run(opening.ends_at_once).await });
    id
}

/// How a watch opens: its first items (each with when the watch cache has it, if later than now),
/// the resourceVersion they cover, and whether the stream ends after them.
struct Opening {
    items: Vec<(Item, Option<u64>)>,
    after: u64,
    ends_at_once: bool,
}

impl Opening {
    fn fails(error: Item) -> Self {
        Opening { items: vec![(error, None)], after: u64::MAX, ends_at_once: true }
    }
}

fn expired_item(current: u64, requested: &str) -> Item {
    let e = status::expired(format!("too old resource version: {requested} ({current})"));
    Item::Error(e.body)
}

/// The items a new watch starts with, as [`WatchFrom`] says.
fn opening(shared: &Shared, st: &State, req: &WatchRequest) -> Opening {
    match req.from {
        WatchFrom::Store { bookmark } => from_store(st, req, bookmark),
        WatchFrom::Cache { bookmark, .. } => from_cache(shared, st, req, bookmark),
        WatchFrom::After(rv) => {
            let rv = rv.unwrap_or_else(|| cache_rv(shared, req.resource));
            if let Some(floor) = expired_in_cache(shared, req.resource, rv) {
                return Opening::fails(expired_item(floor, &rv.to_string()));
            }
            match history_after(shared, st, req, rv) {
                Ok(items) => Opening { items, after: rv, ends_at_once: false },
                Err(too_old) => Opening::fails(expired_item(too_old, &rv.to_string())),
            }
        }
    }
}

/// The store's current objects as ADDED (and the bookmark ending them, when asked for).
fn from_store(st: &State, req: &WatchRequest, bookmark: bool) -> Opening {
    let rv = st.store.current_rv();
    let objects = st.store.list(req.resource, req.namespace.as_deref()).into_iter().map(|(_, o)| o.clone());
    Opening { items: added(req, objects, rv, bookmark), after: rv, ends_at_once: false }
}

/// The watch cache's objects as ADDED (and the bookmark ending them), then the changes the store has
/// that the cache has not delivered yet. Simplification: when those changes have left the store's
/// history (more than `history_capacity` in flight), the watch starts from the store instead.
fn from_cache(shared: &Shared, st: &State, req: &WatchRequest, bookmark: bool) -> Opening {
    let now_ms = shared.clock.elapsed_ms();
    let view = shared.cache.lock().view(req.resource, req.namespace.as_deref(), &req.selectors, now_ms);
    let Ok(later) = history_after(shared, st, req, view.rv) else { return from_store(st, req, bookmark) };
    shared.record.emit(CacheRead {
        actor: req.actor.clone(),
        verb: ApiVerb::Watch,
        resource: shared.registry.get(req.resource).plural.clone(),
        namespace: req.namespace.clone().unwrap_or_default(),
        requested_rv: req.requested_rv.clone(),
        cache_rv: view.rv,
        store_rv: st.store.current_rv(),
        behind: view.behind,
    });
    let mut items = added(req, view.objects.into_iter(), view.rv, bookmark);
    items.extend(later);
    Opening { items, after: st.store.current_rv(), ends_at_once: false }
}

fn added(
    req: &WatchRequest,
    objects: impl Iterator<Item = Arc<Value>>,
    rv: u64,
    bookmark: bool,
) -> Vec<(Item, Option<u64>)> {
    let mut items: Vec<(Item, Option<u64>)> = objects
        .filter(|obj| req.selectors.matches(obj))
        .map(|obj| (Item::Event(EventType::Added, obj, None), None))
        .collect();
    if bookmark {
        items.push((Item::Bookmark { rv, initial_events_end: true }, None));
    }
    items
}

/// The retained changes after `rv` as this watch sees them, each with when its cache has it; the
/// oldest version still retained when `rv` is older.
fn history_after(
    shared: &Shared,
    st: &State,
    req: &WatchRequest,
    rv: u64,
) -> Result<Vec<(Item, Option<u64>)>, u64> {
    let changes = st.store.changes_since(req.resource, rv).map_err(|too_old| too_old.oldest)?;
    let cache = shared.cache.lock();
    Ok(changes
        .iter()
        .filter(|c| req.namespace.as_deref().is_none_or(|ns| ns == c.key.namespace))
        .filter_map(|c| Some((transform(&req.selectors, c)?, cache.visible_at(c.key.resource, c.rv))))
        .collect())
}

/// The resourceVersion whose eviction from `resource`'s watch-cache window makes a resume from `rv`
/// too old, if it does.
fn expired_in_cache(shared: &Shared, resource: ResourceId, rv: u64) -> Option<u64> {
    let mut cache = shared.cache.lock();
    cache.advance(shared.clock.elapsed_ms());
    cache.expired_below(resource, rv)
}

/// The resourceVersion of `resource`'s watch cache now.
fn cache_rv(shared: &Shared, resource: ResourceId) -> u64 {
    let mut cache = shared.cache.lock();
    cache.advance(shared.clock.elapsed_ms());
    cache.rv(resource)
}

/// The `namespace/name` of an event's object.
fn event_key(item: &Item) -> Option<String> {
    let Item::Event(_, obj, _) = item else { return None };
    let field = |f: &str| obj.at(f).and_then(Value::as_str).unwrap_or("").to_string();
    Some(format!("{}/{}", field("/metadata/namespace"), field("/metadata/name")))
}

/// An event object's namespace, name and resourceVersion: its change's key and version when it came
/// from one (the object is the change's), else read from the object (an initial event of a list).
fn identity<'a>(obj: &'a Value, change: Option<&'a Change>) -> (&'a str, &'a str, u64) {
    match change {
        Some(change) => {
            let known = (change.key.namespace.as_str(), change.key.name.as_str(), change.rv);
            debug_assert_eq!(known, reads::version_of(obj), "a change's key and version are its object's");
            known
        }
        None => reads::version_of(obj),
    }
}

/// What the record says of a change sent: its type, the object's `namespace/name` (`name` when
/// cluster-scoped, as [`super::store::StoreKey::display`]) and its resourceVersion.
fn change_item(kind: EventType, (namespace, name, rv): (&str, &str, u64)) -> WatchItem {
    let mut key = String::with_capacity(namespace.len() + 1 + name.len());
    if !namespace.is_empty() {
        key.push_str(namespace);
        key.push('/');
    }
    key.push_str(name);
    WatchItem::Change { kind: kind.as_str(), key, rv: rv.to_string() }
}

/// What a change looks like through a selector.
fn transform(selectors: &Selectors, change: &Arc<Change>) -> Option<Item> {
    let now_matches = selectors.matches(&change.object);
    let was_matching = change.old.as_deref().is_some_and(|old| selectors.matches(old));
    let kind = match (change.kind, was_matching, now_matches) {
        (EventType::Added, _, true) => EventType::Added,
        (EventType::Modified, true, true) => EventType::Modified,
        (EventType::Modified, false, true) => EventType::Added,
        (EventType::Modified, true, false) => EventType::Deleted,
        (EventType::Deleted, true, _) => EventType::Deleted,
        _ => return None,
    };
    Some(Item::Event(kind, change.object.clone(), Some(Arc::clone(change))))
}

impl WatchTask {
    async fn run(mut self, ends_at_once: bool) {
        if ends_at_once {
            while let Some(queued) = self.pending.pop_front() {
                self.deliver(queued.item);
            }
            return;
        }
        loop {
            let next_due = self.pending.front().map(|q| q.due);
            let parked_until = self.parked.as_ref().map(|(_, _, until)| *until);
            let too_slow_at = self.too_slow.map(|(at, _)| at);
            tokio::select! {
                biased;
                _ = self.out.closed() => break,
                _ = sleep_until_some(too_slow_at), if too_slow_at.is_some() => {
                    let backlog = self.too_slow.map_or(0, |(_, backlog)| backlog);
                    self.trace(|| WatchItem::ClosedSlow { backlog });
                    break;
                }
                _ = sleep_until(self.deadline) => {
                    self.trace(|| WatchItem::Timeout);
                    break;
                }
                _ = sleep_until_some(self.drop_at), if self.drop_at.is_some() => {
                    self.trace(|| WatchItem::Dropped);
                    break;
                }
                _ = sleep_until_some(self.stall_at), if self.stall_at.is_some() => {
                    self.trace(|| WatchItem::Stalled);
                    self.stay_silent().await;
                    break;
                }
                _ = sleep_until_some(next_due), if next_due.is_some() => {
                    self.schedule_point().await;
                    let queued = self.pending.pop_front().expect("a due item");
                    if !self.deliver(queued.item) {
                        break;
                    }
                }
                change = self.changes.next() => match change {
                    Some(change) => self.accept(&change),
                    None => break,
                },
                _ = sleep_until_some(self.next_bookmark), if self.next_bookmark.is_some() => {
                    self.bookmark();
                }
                _ = sleep_until_some(parked_until), if parked_until.is_some() => {
                    self.unpark();
                }
            }
        }
    }

    /// Sends nothing more until the stream's timeout (then traced as its end) or the client leaves.
    async fn stay_silent(&mut self) {
        tokio::select! {
            _ = self.out.closed() => {}
            _ = sleep_until(self.deadline) => self.trace(|| WatchItem::Timeout),
        }
    }

    /// A scheduling point of this stream, before it delivers an item.
    async fn schedule_point(&self) {
        let plural = &self.shared.registry.get(self.request.resource).plural;
        let actor = self.request.actor.as_deref().unwrap_or("-");
        self.shared.schedule.get().point(|| format!("watch/{actor}/{plural}")).await;
    }

    fn accept(&mut self, change: &Arc<Change>) {
        if change.rv <= self.after {
            return;
        }
        if let Some(item) = transform(&self.request.selectors, change) {
            let visible_ms = self.shared.cache.lock().visible_at(change.key.resource, change.rv);
            self.schedule(item, visible_ms);
            self.close_if_too_slow();
        }
    }

    /// Ends the watch when the item just queued reaches the watch cache with the watch's backlog
    /// (items its cache has that it has not delivered, that one included) past `slow_watcher_backlog`,
    /// as the cacher closes a watcher whose buffer is full when it dispatches an event to it
    /// (`Forcing watcher close due to unresponsiveness`). Simplified: the items queued are dropped
    /// with it, where the cacher lets the watcher's result buffer drain.
    fn close_if_too_slow(&mut self) {
        let (Some(limit), None, Some(last)) =
            (self.shared.config.slow_watcher_backlog, self.too_slow, self.pending.back())
        else {
            return;
        };
        let at = last.cached;
        let backlog = self.pending.iter().filter(|q| q.cached <= at && q.due > at).count();
        if backlog > limit {
            self.too_slow = Some((at, backlog));
        }
    }

    /// Ends the watch at once when its client has left `unread_watch_events` events unread (it
    /// stopped reading), as the cacher closes a watcher whose buffer stays full.
    fn close_if_unread(&mut self) {
        let (Some(limit), None) = (self.shared.config.unread_watch_events, self.too_slow) else { return };
        let unread = self.out.unread();
        if unread >= limit {
            self.too_slow = Some((Instant::now(), unread)); // allow-nondeterminism: tokio clock, paused in the sim
        }
    }

    /// Queues a bookmark at the watch cache's resourceVersion, after every change it covers (none when
    /// the cache is still behind where the watch started, as the cacher sends none then).
    fn bookmark(&mut self) {
        let rv = cache_rv(&self.shared, self.request.resource);
        while let Ok(change) = self.changes.try_recv() {
            self.accept(&change);
        }
        // It goes out after the changes queued before it, each of which the cache will have by then:
        // never behind them, as the cacher's bookmark never is behind an event it dispatched.
        let queued = self.pending.iter().filter_map(|q| match &q.item {
            Item::Event(_, _, Some(change)) => Some(change.rv),
            _ => None,
        });
        let rv = queued.max().unwrap_or(0).max(self.last_rv).max(rv);
        if rv >= self.after {
            self.schedule(Item::Bookmark { rv, initial_events_end: false }, None);
        }
        let every = Duration::from_millis(self.shared.config.bookmark_interval_ms.max(1));
        self.next_bookmark = self.next_bookmark.map(|t| t + every);
    }

    /// Queues `item` for delivery the watch's lag after the watch cache has it (`visible_ms`; now when
    /// it already has), never before the item queued before it.
    fn schedule(&mut self, item: Item, visible_ms: Option<u64>) {
        let lag_ms =
            if self.lag.max_ms == 0 { 0 } else { self.rng.random_range(self.lag.min_ms..=self.lag.max_ms) };
        let now = Instant::now(); // allow-nondeterminism: tokio clock, paused in the sim
        let fate = self.perturbed(&item);
        if let Some(park_ms) = fate.park_ms {
            let key = event_key(&item).unwrap_or_default();
            self.parked = Some((key, item, now + Duration::from_millis(park_ms)));
            return;
        }
        let cached =
            visible_ms.map_or(now, |ms| self.shared.clock.instant_at(Duration::from_millis(ms)).max(now));
        let held =
            fate.hold_until_ms.map_or(now, |ms| self.shared.clock.instant_at(Duration::from_millis(ms)));
        let due = (cached + Duration::from_millis(lag_ms)).max(self.last_due).max(held);
        self.last_due = due;
        self.pending.push_back(Queued { due, cached, item });
    }

    /// What the plan's perturbations make of queueing `item` (nothing for a watch without an actor or
    /// an item that is no event); a parked event of the same object is dropped, coalesced into it.
    fn perturbed(&mut self, item: &Item) -> EventFate {
        let (Item::Event(kind, _, _), Some(actor)) = (item, self.request.actor.as_deref()) else {
            return EventFate::default();
        };
        if let Some((parked_key, _, _)) = &self.parked
            && event_key(item).as_ref() == Some(parked_key)
        {
            let key = parked_key.clone();
            self.parked = None;
            self.trace(|| WatchItem::Coalesced { key });
        }
        let plural = &self.shared.registry.get(self.request.resource).plural;
        let now_ms = self.shared.clock.elapsed_ms();
        self.shared.lock().perturbations.on_event(actor, plural, *kind == EventType::Modified, now_ms)
    }

    /// Queues the parked event: no later event of its object came in its window. (Simplified: it goes
    /// out after events of other objects queued meanwhile.)
    fn unpark(&mut self) {
        if let Some((_, item, _)) = self.parked.take() {
            let now = Instant::now(); // allow-nondeterminism: tokio clock, paused in the sim
            let due = now.max(self.last_due);
            self.last_due = due;
            self.pending.push_back(Queued { due, cached: now, item });
        }
    }

    /// Sends one item; false when the client has gone or the stream must end (ERROR).
    fn deliver(&mut self, item: Item) -> bool {
        self.check_order(&item);
        let rt = self.shared.registry.get(self.request.resource);
        let (line, ends) = match &item {
            Item::Event(kind, obj, change) => {
                self.trace(|| change_item(*kind, identity(obj, change.as_deref())));
                let object = match change {
                    Some(change) => change.wire.of(&change.object),
                    None => Wire::default().of(obj),
                };
                (watch_line(kind.as_str(), &object), false)
            }
            Item::Bookmark { rv, initial_events_end } => {
                let mut meta = json!({"resourceVersion": rv.to_string()});
                if *initial_events_end {
                    meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
                }
                self.trace(|| WatchItem::Bookmark { rv: *rv });
                let object = json!({"kind": rt.kind, "apiVersion": rt.api_version(), "metadata": meta});
                (watch_line("BOOKMARK", &encode(&object)), false)
            }
            Item::Error(status) => {
                let code = status["code"].to_string();
                let message = status["message"].as_str().unwrap_or("").to_string();
                self.trace(|| WatchItem::Error { code, message });
                (watch_line("ERROR", &encode(status)), true)
            }
        };
        let sent = self.out.send(line);
        if sent && let Item::Event(_, obj, change) = &item {
            let (actor, read) = (self.request.actor.as_deref(), identity(obj, change.as_deref()));
            reads::record_version(&self.shared, self.request.resource, actor, ReadVia::Watch, read);
            self.close_if_unread();
        }
        sent && !ends
    }

    /// Debug builds check that a stream sends the changes it follows in resourceVersion order and
    /// that a bookmark never goes back behind one (the initial ADDED events of a list come in key
    /// order and are not checked).
    fn check_order(&mut self, item: &Item) {
        match item {
            Item::Event(_, _, Some(change)) => {
                debug_assert!(
                    change.rv > self.last_rv,
                    "watch#{} sent rv {} after {}",
                    self.id,
                    change.rv,
                    self.last_rv
                );
                self.last_rv = change.rv;
            }
            Item::Bookmark { rv, .. } => {
                debug_assert!(
                    *rv >= self.last_rv,
                    "watch#{} bookmarked {rv} after change {}",
                    self.id,
                    self.last_rv
                );
            }
            _ => {}
        }
    }

    /// Records what the stream did, `item` built only when the record renders or keeps it.
    fn trace(&self, item: impl FnOnce() -> WatchItem) {
        let resource = &self.shared.registry.get(self.request.resource).plural;
        self.shared.record.emit_with(Some(resource), || WatchSent {
            id: self.id,
            actor: self.request.actor.clone(),
            resource: resource.clone(),
            item: item(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::selector::LabelSelector;
    use crate::apiserver::store::StoreKey;

    #[test]
    fn a_sent_change_is_recorded_under_its_store_key_and_version() {
        for (namespace, name) in [("ns", "x"), ("", "cluster-wide")] {
            let obj = json!({"metadata": {"namespace": namespace, "name": name, "resourceVersion": "12"}});
            let store_key = StoreKey { resource: 0, namespace: namespace.into(), name: name.into() };
            let key = store_key.display();
            let WatchItem::Change { kind, key: recorded, rv } =
                change_item(EventType::Modified, identity(&obj, None))
            else {
                panic!("a change")
            };
            assert_eq!((kind, recorded, rv.as_str()), ("MODIFIED", key, "12"));
            let change = Change {
                rv: 12,
                kind: EventType::Modified,
                key: store_key,
                object: Arc::new(obj.clone()),
                old: None,
                wire: Wire::default(),
            };
            assert_eq!(identity(&obj, Some(&change)), identity(&obj, None), "a change's key and version");
        }
    }

    fn change(kind: EventType, old: Option<Value>, new: Value) -> Arc<Change> {
        Arc::new(Change {
            rv: 1,
            kind,
            key: StoreKey { resource: 0, namespace: "ns".into(), name: "x".into() },
            object: Arc::new(new),
            old: old.map(Arc::new),
            wire: Wire::default(),
        })
    }

    fn labelled(v: &str) -> Value {
        json!({"metadata": {"name": "x", "labels": {"app": v}}})
    }

    #[test]
    fn objects_moving_across_a_selector_become_added_or_deleted() {
        let sel = Selectors { labels: LabelSelector::parse("app=web").unwrap(), ..Default::default() };
        let kind_of = |c: &Arc<Change>| match transform(&sel, c) {
            Some(Item::Event(k, _, _)) => Some(k),
            _ => None,
        };
        let leaves = change(EventType::Modified, Some(labelled("web")), labelled("db"));
        let joins = change(EventType::Modified, Some(labelled("db")), labelled("web"));
        let stays = change(EventType::Modified, Some(labelled("web")), labelled("web"));
        let never = change(EventType::Modified, Some(labelled("db")), labelled("db"));
        assert_eq!(kind_of(&leaves), Some(EventType::Deleted));
        assert_eq!(kind_of(&joins), Some(EventType::Added));
        assert_eq!(kind_of(&stays), Some(EventType::Modified));
        assert_eq!(kind_of(&never), None);
        let deleted = change(EventType::Deleted, Some(labelled("web")), labelled("web"));
        assert_eq!(kind_of(&deleted), Some(EventType::Deleted));
    }
}
