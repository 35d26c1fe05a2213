//! Lists: selectors, ordering, `limit`/`continue` paging over a consistent snapshot, and the source
//! [`ListFrom`] picks: the store now, the store at an exact version, or the watch cache.
//!
//! A paged list keeps its full result as a snapshot (as etcd serves later pages at the first page's
//! revision); continue tokens point into it. Snapshots are bounded in number; a token whose snapshot has
//! been evicted gets 410 Expired, as a compacted continue token does. An exact list rewinds the store
//! through its history (410 once the version has left it). A list from the watch cache hands out what
//! the cache holds, at the cache's resourceVersion, ignoring `limit` as the cacher does, and is recorded
//! as a [`CacheRead`].

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use super::events::CacheRead;
use super::registry::ResourceId;
use super::selector::Selectors;
use super::status::{self, ApiError};
use super::versions::ListFrom;
use super::{Shared, State};
use crate::faults::ApiVerb;

/// A list request.
#[derive(Debug, Clone)]
pub struct ListRequest {
    /// The resource type.
    pub resource: ResourceId,
    /// The namespace, or all.
    pub namespace: Option<String>,
    /// Label and field selectors.
    pub selectors: Selectors,
    /// The raw selector strings, to check a continue token belongs to the same query.
    pub selector_text: String,
    /// Page size.
    pub limit: Option<usize>,
    /// Continue token from a previous page.
    pub continue_token: Option<String>,
    /// Where the list is served from.
    pub from: ListFrom,
    /// The resourceVersion asked for, as sent (for the record).
    pub requested_rv: String,
    /// Who asked (for the record).
    pub actor: Option<String>,
}

struct Snapshot {
    scope: String,
    rv: u64,
    items: Vec<Arc<Value>>,
}

/// The paged-list snapshots the server keeps.
pub struct ListSnapshots {
    entries: BTreeMap<u64, Snapshot>,
    next_id: u64,
    capacity: usize,
}

impl ListSnapshots {
    /// Keeps at most `capacity` snapshots.
    pub fn new(capacity: usize) -> Self {
        ListSnapshots { entries: BTreeMap::new(), next_id: 1, capacity: capacity.max(1) }
    }

    fn insert(&mut self, snapshot: Snapshot) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.entries.insert(id, snapshot);
        while self.entries.len() > self.capacity {
            self.entries.pop_first();
        }
        id
    }
}

/// Serves a list page: `{Kind}List` with `metadata.resourceVersion` and, when more remain, `continue`.
pub fn list(sh: &Shared, st: &mut State, req: &ListRequest) -> Result<Value, ApiError> {
    let rt = sh.registry.get(req.resource);
    let scope = format!("{}|{}|{}", rt.plural, req.namespace.as_deref().unwrap_or(""), req.selector_text);
    let (snapshot_id, offset, rv, items) = match (&req.continue_token, req.from) {
        (Some(token), _) => resume(st, token, &scope)?,
        (None, ListFrom::Store) => (None, 0, st.store.current_rv(), current(st, req)),
        (None, ListFrom::Exact(rv)) => (None, 0, rv, exact(st, req, rv)?),
        (None, ListFrom::Cache { .. }) => return Ok(from_cache(sh, st, req)),
    };
    let limit = req.limit.filter(|l| *l > 0).unwrap_or(usize::MAX);
    let end = offset.saturating_add(limit).min(items.len());
    let page: Vec<Value> = items[offset..end].iter().map(|o| (**o).clone()).collect();
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if end < items.len() {
        let id =
            snapshot_id.unwrap_or_else(|| st.snapshots.insert(Snapshot { scope, rv, items: items.clone() }));
        metadata["continue"] = json!(encode_token(id, end, rv));
        metadata["remainingItemCount"] = json!(items.len() - end);
    }
    Ok(list_body(sh, req, &metadata, page))
}

fn list_body(sh: &Shared, req: &ListRequest, metadata: &Value, items: Vec<Value>) -> Value {
    let rt = sh.registry.get(req.resource);
    json!({"kind": rt.list_kind, "apiVersion": rt.api_version(), "metadata": metadata, "items": items})
}

/// The matching objects in the store now.
fn current(st: &State, req: &ListRequest) -> Vec<Arc<Value>> {
    st.store
        .list(req.resource, req.namespace.as_deref())
        .into_iter()
        .filter(|(_, obj)| req.selectors.matches(obj))
        .map(|(_, obj)| obj.clone())
        .collect()
}

/// The matching objects as they stood at `rv`: 410 once it has left the history, and the 504 of a
/// version not reached yet. Simplification: kube-apiserver passes etcd's future-revision error on as
/// it comes; the fake answers it as the cacher answers a version it never reaches.
fn exact(st: &State, req: &ListRequest, rv: u64) -> Result<Vec<Arc<Value>>, ApiError> {
    let current = st.store.current_rv();
    if rv > current {
        return Err(status::too_large_resource_version(rv, current));
    }
    let objects = st
        .store
        .objects_at(req.resource, req.namespace.as_deref(), rv)
        .map_err(|_| status::list_too_old())?;
    Ok(objects.into_iter().map(|(_, o)| o).filter(|o| req.selectors.matches(o)).collect())
}

/// The whole list as the watch cache holds it now (no paging: the cacher ignores `limit`).
fn from_cache(sh: &Shared, st: &State, req: &ListRequest) -> Value {
    let now_ms = sh.clock.elapsed_ms();
    let view = sh.cache.lock().view(req.resource, req.namespace.as_deref(), &req.selectors, now_ms);
    let items: Vec<Value> =
        view.objects.iter().filter(|o| req.selectors.matches(o)).map(|o| (**o).clone()).collect();
    sh.record.emit(CacheRead {
        actor: req.actor.clone(),
        verb: ApiVerb::List,
        resource: sh.registry.get(req.resource).plural.clone(),
        namespace: req.namespace.clone().unwrap_or_default(),
        requested_rv: req.requested_rv.clone(),
        cache_rv: view.rv,
        store_rv: st.store.current_rv(),
        behind: view.behind,
    });
    list_body(sh, req, &json!({"resourceVersion": view.rv.to_string()}), items)
}

type Resumed = (Option<u64>, usize, u64, Vec<Arc<Value>>);

fn resume(st: &State, token: &str, scope: &str) -> Result<Resumed, ApiError> {
    let (id, offset, rv) = decode_token(token)
        .ok_or_else(|| status::bad_request(format!("continue key is not valid: {token:?}")))?;
    let Some(snapshot) = st.snapshots.entries.get(&id) else {
        return Err(status::expired(format!(
            "The provided continue parameter is too old to display a consistent list result (resourceVersion {rv}). You can start a new list without the continue parameter."
        )));
    };
    if snapshot.scope != scope || snapshot.rv != rv || offset > snapshot.items.len() {
        return Err(status::bad_request(
            "continue key is not valid: it does not belong to this list request",
        ));
    }
    Ok((Some(id), offset, snapshot.rv, snapshot.items.clone()))
}

fn encode_token(id: u64, offset: usize, rv: u64) -> String {
    URL_SAFE_NO_PAD.encode(format!("{id}:{offset}:{rv}"))
}

fn decode_token(token: &str) -> Option<(u64, usize, u64)> {
    let text = String::from_utf8(URL_SAFE_NO_PAD.decode(token).ok()?).ok()?;
    let mut parts = text.split(':');
    let id = parts.next()?.parse().ok()?;
    let offset = parts.next()?.parse().ok()?;
    let rv = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some((id, offset, rv))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_garbage_is_rejected() {
        assert_eq!(decode_token(&encode_token(3, 10, 99)), Some((3, 10, 99)));
        assert_eq!(decode_token("!!"), None);
        assert_eq!(decode_token(&URL_SAFE_NO_PAD.encode("1:2")), None);
    }
}
