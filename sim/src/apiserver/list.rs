//! Lists: selectors, ordering, and `limit`/`continue` paging over a consistent snapshot.
//!
//! A paged list keeps its full result as a snapshot (as etcd serves later pages at the first page's
//! revision); continue tokens point into it. Snapshots are bounded in number; a token whose snapshot has
//! been evicted gets 410 Expired, as a compacted continue token does.

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use super::registry::ResourceId;
use super::selector::Selectors;
use super::status::{self, ApiError};
use super::{Shared, State};

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
    let (snapshot_id, offset, rv, items) = match &req.continue_token {
        Some(token) => resume(st, token, &scope)?,
        None => {
            let items: Vec<Arc<Value>> = st
                .store
                .list(req.resource, req.namespace.as_deref())
                .into_iter()
                .filter(|(_, obj)| req.selectors.matches(obj))
                .map(|(_, obj)| obj.clone())
                .collect();
            (None, 0, st.store.current_rv(), items)
        }
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
    Ok(json!({"kind": rt.list_kind, "apiVersion": rt.api_version(), "metadata": metadata, "items": page}))
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
