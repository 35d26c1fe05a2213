//! HTTP: routing kube-apiserver's paths to the engine, and the `tower::Service` clients drive.
//!
//! One request is: parse the path (discovery or a resource), pick the verb from the method, wait for a
//! seat of the load's priority level when there is one ([`load`]; a rejection is answered
//! at once), spend the serving time (stretched by the seats taken) before the commit ([`timing`](super::timing)), let the fault layer act (delay, error,
//! conflict, watch drop), run the verb (a read from the watch cache first waits for it to be fresh
//! enough), spend the serving time after the commit, let a commit-then-fail fault replace the answer,
//! answer JSON (or a watch stream), count it by verb, resource and code, and put one line in the trace.

use crate::json_at::At;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use serde_json::Value;

use super::admission::{self, Subresource};
use super::body::{Body, WriteBody};
use super::cache;
use super::engine::{self, PatchRequest};
use super::events::{ApiFault, AuditEntry, BodyHashes, DiscoveryServed, FaultEffect, SeatWait, WatchOpened};
use super::faults::{self, ConnectionDropped, Injection};
use super::field_validation::{self, FieldValidation, WriteKind};
use super::lifecycle::{DeleteOptions, Propagation};
use super::list::{self, ListRequest};
use super::load;
use super::patch::PatchType;
use super::reads::{self, ReadVia};
use super::registry::{ResourceId, ResourceType};
use super::selector::{FieldSelector, LabelSelector, Selectors};
use super::status::{self, ApiError};
use super::store::StoreKey;
use super::timing::Serving;
use super::versions::{self, ListFrom, VersionParams, WatchFrom};
use super::watch::{self, WatchFault, WatchRequest};
use super::watch_stream;
use super::{Shared, discovery, quota};
use crate::faults::ApiVerb;

pub use crate::actor::ACTOR_HEADER;

/// Who made a request and what it carried.
struct Requester {
    verb: ApiVerb,
    actor: Option<String>,
    body_hash: Option<u64>,
    /// For creates: the name (or `generateName` prefix followed by `*`) the body asks for.
    requested_name: Option<String>,
    /// Sim ms when the request reached the store (or was refused).
    served_ms: u64,
}

/// The response body type: a whole JSON document or a watch stream.
pub type ResponseBody = UnsyncBoxBody<Bytes, Infallible>;

/// The fake API server as a `tower::Service`. Cheap to clone.
#[derive(Clone)]
pub struct ApiService {
    shared: Arc<Shared>,
}

/// A successful answer: status code, JSON body, and `Warning` header texts. Simplification: warnings
/// are sent with successful answers only (kube-apiserver also sends them with errors).
struct Answer {
    code: StatusCode,
    /// The object (or list, or Status) answered: a stored object's own `Arc`, not a copy.
    body: Arc<Value>,
    /// `body`'s JSON when the store has it encoded already.
    encoded: Option<Bytes>,
    warnings: Vec<String>,
}

impl Answer {
    fn ok(body: impl Into<Arc<Value>>) -> Self {
        Answer { code: StatusCode::OK, body: body.into(), encoded: None, warnings: Vec::new() }
    }

    /// This answer of the object stored under `key`, with the store's encoding of it when it has one.
    fn stored(mut self, st: &super::State, key: &StoreKey) -> Self {
        self.encoded = st.store.encoded(key, &self.body);
        self
    }

    fn response(&self) -> Response<ResponseBody> {
        let mut response = match &self.encoded {
            Some(bytes) => json_bytes_response(self.code, bytes.clone()),
            None => json_response(self.code, &self.body),
        };
        for text in &self.warnings {
            let value = field_validation::warning_header(text);
            if let Ok(value) = HeaderValue::from_bytes(value.as_bytes()) {
                response.headers_mut().append(header::WARNING, value);
            }
        }
        response
    }
}

/// A resolved resource path.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ResourceRoute {
    resource: ResourceId,
    namespace: Option<String>,
    name: Option<String>,
    status: bool,
}

/// What a path names.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Route {
    Version,
    Health,
    CoreVersions,
    Groups,
    Group(String),
    ResourceList(String, String),
    Resource(ResourceRoute),
    Unknown,
}

type Query = BTreeMap<String, String>;

impl ApiService {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        ApiService { shared }
    }

    /// Serves one request whose body has been read; [`ConnectionDropped`] when an injected fault
    /// drops the connection instead of answering.
    pub async fn handle(
        &self,
        parts: http::request::Parts,
        body: Bytes,
    ) -> Result<Response<ResponseBody>, ConnectionDropped> {
        let path = parts.uri.path().to_string();
        let query = parse_query(parts.uri.query().unwrap_or(""));
        match self.route(&path) {
            Route::Resource(route) => self.serve_resource(&parts, &query, route, body).await,
            Route::Unknown => Ok(error_response(&status::unknown_resource())),
            discovery_route => Ok(self.serve_discovery(&parts, &path, discovery_route)),
        }
    }

    fn route(&self, path: &str) -> Route {
        // No route has more than eight segments (`/apis/g/v/namespaces/ns/plural/name/status`).
        let mut segs = [""; 8];
        let mut len = 0;
        for seg in path.split('/').filter(|s| !s.is_empty()) {
            let Some(slot) = segs.get_mut(len) else { return Route::Unknown };
            *slot = seg;
            len += 1;
        }
        match &segs[..len] {
            ["version"] => Route::Version,
            ["healthz" | "readyz" | "livez"] => Route::Health,
            ["api"] => Route::CoreVersions,
            ["api", "v1"] => Route::ResourceList(String::new(), "v1".into()),
            ["api", "v1", rest @ ..] => self.resource_route("", "v1", rest),
            ["apis"] => Route::Groups,
            ["apis", g] => Route::Group((*g).into()),
            ["apis", g, v] => Route::ResourceList((*g).into(), (*v).into()),
            ["apis", g, v, rest @ ..] => self.resource_route(g, v, rest),
            _ => Route::Unknown,
        }
    }

    fn resource_route(&self, group: &str, version: &str, rest: &[&str]) -> Route {
        let registry = &self.shared.registry;
        let namespaced = (rest.len() >= 3 && rest[0] == "namespaces")
            .then(|| registry.find(group, version, rest[2]))
            .flatten();
        let (namespace, resource, tail) = match namespaced {
            Some(resource) => (Some(rest[1].to_string()), Some(resource), &rest[3..]),
            None => (None, registry.find(group, version, rest[0]), &rest[1..]),
        };
        let Some(resource) = resource else { return Route::Unknown };
        if namespace.is_some() && !registry.get(resource).namespaced {
            return Route::Unknown;
        }
        let (name, status) = match tail {
            [] => (None, false),
            [name] => (Some((*name).to_string()), false),
            [name, "status"] if registry.get(resource).status_subresource => {
                (Some((*name).to_string()), true)
            }
            _ => return Route::Unknown,
        };
        if name.is_some() && namespace.is_none() && registry.get(resource).namespaced {
            return Route::Unknown;
        }
        Route::Resource(ResourceRoute { resource, namespace, name, status })
    }

    fn serve_discovery(
        &self,
        parts: &http::request::Parts,
        path: &str,
        route: Route,
    ) -> Response<ResponseBody> {
        if parts.method != Method::GET {
            return error_response(&status::method_not_allowed(parts.method.as_str()));
        }
        let registry = &self.shared.registry;
        let host = parts.headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("127.0.0.1:6443");
        let doc = match route {
            Route::Version => Some(discovery::version()),
            Route::Health => return text_response(StatusCode::OK, "ok"),
            Route::CoreVersions => Some(discovery::core_versions(host)),
            Route::Groups => Some(discovery::groups(registry)),
            Route::Group(g) => discovery::group(registry, &g),
            Route::ResourceList(g, v) => discovery::resource_list(registry, &g, &v),
            Route::Resource(_) | Route::Unknown => None,
        };
        let code = if doc.is_some() { 200 } else { 404 };
        self.shared.record.emit(DiscoveryServed { path: path.to_string(), code });
        match doc {
            Some(doc) => json_response(StatusCode::OK, &doc),
            None => error_response(&status::unknown_resource()),
        }
    }

    async fn serve_resource(
        &self,
        parts: &http::request::Parts,
        query: &Query,
        route: ResourceRoute,
        bytes: Bytes,
    ) -> Result<Response<ResponseBody>, ConnectionDropped> {
        let Some(verb) = verb_of(&parts.method, &route, query) else {
            return Ok(error_response(&status::method_not_allowed(parts.method.as_str())));
        };
        // The body parsed once, for the log, the fault layer and the write alike.
        // UTF-8 checked once for the whole body, not string by string as `from_slice` does; a body
        // that is not UTF-8 is no JSON either way.
        let parsed =
            std::str::from_utf8(&bytes).ok().and_then(|text| serde_json::from_str::<Value>(text).ok());
        let body = Body::new(&bytes, parsed.as_ref());
        let precondition = carries_precondition(verb, body.json);
        let requested_name = (verb == ApiVerb::Create).then(|| requested_name(body.json)).flatten();
        let mut who = Requester {
            verb,
            actor: parts.headers.get(ACTOR_HEADER).and_then(|v| v.to_str().ok()).map(str::to_string),
            body_hash: self.hashes_bodies().then(|| body.hash_without_resource_version()),
            requested_name,
            served_ms: 0,
        };
        let route = &route;
        let seat = match self.take_seat(&who, route).await {
            Ok(seat) => seat,
            Err(rejected) => return Ok(rejected),
        };
        let (serving, injection) = self.admit(verb, route);
        let serving = seat.as_ref().map_or(serving, |s| s.stretch(serving));
        tokio::time::sleep(serving.before_commit).await;
        if let Some(Injection::Delay(d)) = injection {
            self.emit_fault(&who, route, None, FaultEffect::Delayed { ms: d.as_millis() as u64 });
            tokio::time::sleep(d).await;
        }
        self.schedule_point(&who, route).await;
        let injection = injection.filter(|i| *i != Injection::Conflict || precondition);
        who.served_ms = self.shared.clock.elapsed_ms();
        let early = self.injected_answer(injection, &who, route);
        if verb == ApiVerb::Watch && early.is_none() && !query.contains_key("dryRun") {
            return Ok(self.serve_watch(query, route, injection, &who).await);
        }
        let result = match early {
            Some(early) => Err(early),
            None if query.contains_key("dryRun") => {
                Err(status::bad_request("dryRun is not supported by the arcsim fake API server"))
            }
            None => {
                let content_type =
                    parts.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
                let body = WriteBody { bytes: &bytes, json: parsed };
                self.serve(verb, route, query, content_type, body, &who).await
            }
        };
        tokio::time::sleep(serving.after_commit).await;
        self.schedule_point(&who, route).await;
        match (injection.filter(|i| i.after_commit()), result) {
            (Some(fault), Ok(served)) => self.fail_after_commit(&who, route, fault, &served),
            (_, result) => Ok(self.finish(&who, route, result)),
        }
    }

    /// A seat of the load's priority level for a request other than a watch (`None` without a load):
    /// waited for, or refused with priority and fairness's 429, counted, audited and traced.
    async fn take_seat(
        &self,
        who: &Requester,
        route: &ResourceRoute,
    ) -> Result<Option<load::Seat>, Response<ResponseBody>> {
        let Some(gate) = self.shared.load.as_ref().filter(|_| who.verb != ApiVerb::Watch) else {
            return Ok(None);
        };
        let start_ms = self.shared.clock.elapsed_ms();
        let entered = gate.enter().await;
        let waited_ms = self.shared.clock.elapsed_ms() - start_ms;
        let rejected = entered.as_ref().err().map(|r| r.as_str());
        if waited_ms > 0 || rejected.is_some() {
            self.shared.record.emit(SeatWait {
                actor: who.actor.clone(),
                verb: who.verb,
                resource: self.shared.registry.get(route.resource).plural.clone(),
                target: target_of(route),
                waited_ms,
                rejected,
            });
        }
        entered.map(Some).map_err(|_| self.reject_for_load(who, route))
    }

    /// Priority and fairness's rejection: 429, `Retry-After: 1`, a plain-text body (not a `Status`).
    fn reject_for_load(&self, who: &Requester, route: &ResourceRoute) -> Response<ResponseBody> {
        let code = StatusCode::TOO_MANY_REQUESTS;
        self.count(who.verb, route.resource, code.as_u16());
        let mut entry = self.audit_entry(who, route, code.as_u16(), "", None);
        entry.reason = "TooManyRequests".into();
        self.shared.record.emit(entry);
        let mut response = text_response(code, load::REJECTED_TEXT);
        response.headers_mut().insert(header::RETRY_AFTER, load::REJECTED_RETRY_AFTER_SECONDS.into());
        response
    }

    /// A scheduling point of the request's client on its resource (before the commit and before the
    /// answer).
    async fn schedule_point(&self, who: &Requester, route: &ResourceRoute) {
        let plural = &self.shared.registry.get(route.resource).plural;
        let actor = who.actor.as_deref().unwrap_or("-");
        self.shared.schedule.get().point(|| format!("api/{actor}/{plural}")).await;
    }

    /// Draws the request's serving time and lets the fault layer decide its fate.
    fn admit(&self, verb: ApiVerb, route: &ResourceRoute) -> (Serving, Option<Injection>) {
        let now_ms = self.shared.clock.elapsed_ms();
        let plural = &self.shared.registry.get(route.resource).plural;
        let mut st = self.shared.lock();
        let st = &mut *st;
        let serving =
            Serving::draw(self.shared.config.request_latency, &mut st.latency_rng, &mut st.commit_point_rng);
        (serving, st.faults.decide(verb, plural, now_ms))
    }

    /// Runs a verb other than watch; a list from the watch cache first waits for it to be fresh enough.
    async fn serve(
        &self,
        verb: ApiVerb,
        route: &ResourceRoute,
        query: &Query,
        content_type: &str,
        body: WriteBody<'_>,
        who: &Requester,
    ) -> Result<Answer, ApiError> {
        if let (ApiVerb::Delete, Some(actor), Some(name)) = (verb, who.actor.as_deref(), &route.name) {
            let plural = &self.shared.registry.get(route.resource).plural;
            self.shared.delete_hook.before_delete(actor, plural, name);
        }
        if verb != ApiVerb::List {
            return self.execute(verb, route, query, content_type, body);
        }
        let sh = &*self.shared;
        let req = ListRequest { actor: who.actor.clone(), ..list_request(sh, route, query)? };
        if let ListFrom::Cache { min_rv } = req.from {
            cache::wait_until_fresh(&sh.cache, sh.clock, req.resource, min_rv).await?;
        }
        Ok(Answer::ok(list::list(sh, &mut sh.lock(), &req)?))
    }

    /// Decodes a create or update body: type meta checked, unknown fields of a custom resource pruned
    /// and answered as the `fieldValidation` parameter says. Returns the object and the warnings.
    fn decode_write(
        &self,
        route: &ResourceRoute,
        query: &Query,
        content_type: &str,
        mut body: WriteBody<'_>,
        write: WriteKind,
    ) -> Result<(Value, Vec<String>), ApiError> {
        let rt = self.shared.registry.get(route.resource);
        let fields = directive(query, write)?;
        check_json_body(content_type)?;
        let mut object = admission::decode_object(rt, &mut body)?;
        let unknown = admission::prune_unknown(rt, &mut object);
        let warnings = fields.on_decode(rt, &unknown)?;
        Ok((object, warnings))
    }

    /// The answer an injected fault gives instead of serving the request, if any.
    fn injected_answer(
        &self,
        injection: Option<Injection>,
        who: &Requester,
        route: &ResourceRoute,
    ) -> Option<ApiError> {
        let rt = self.shared.registry.get(route.resource);
        let name = route
            .name
            .clone()
            .or_else(|| who.requested_name.as_deref().map(|n| n.trim_end_matches('*').to_string()));
        let name = name.unwrap_or_default();
        let answer = match injection? {
            Injection::ServerError(code) => status::server_error(code),
            Injection::Throttle(seconds) => status::too_many_requests(seconds),
            Injection::Conflict => status::conflict(rt, &name),
            Injection::ForbiddenQuota => {
                let namespace = route.namespace.as_deref().unwrap_or_default();
                let used = quota::live_usage(&self.shared, &self.shared.lock(), route.resource, namespace);
                faults::quota_exceeded(rt, &name, used)
            }
            Injection::Invalid => faults::invalid(rt, &name),
            Injection::Delay(_)
            | Injection::DropWatch(_)
            | Injection::StallWatch(_)
            | Injection::ExpireWatch
            | Injection::CommitThenError(_)
            | Injection::CommitThenDrop => return None,
        };
        self.emit_fault(who, route, None, FaultEffect::Refused { code: answer.code });
        Some(answer)
    }

    /// Counts, audits and traces a request that was served and then failed by a fault: answered 500 or
    /// 504, or not at all (the connection is dropped).
    fn fail_after_commit(
        &self,
        who: &Requester,
        route: &ResourceRoute,
        fault: Injection,
        served: &Answer,
    ) -> Result<Response<ResponseBody>, ConnectionDropped> {
        let failure = match fault {
            Injection::CommitThenError(504) => Some(status::request_timeout()),
            Injection::CommitThenError(code) => Some(status::server_error(code)),
            _ => None,
        };
        let code = failure.as_ref().map_or(0, |e| e.code);
        let effect = match failure {
            Some(_) => FaultEffect::CommittedThenAnswered { code },
            None => FaultEffect::CommittedThenDropped,
        };
        let name = served.body.at("/metadata/name").and_then(Value::as_str).map(str::to_string);
        self.emit_fault(who, route, name, effect);
        self.count(who.verb, route.resource, code);
        let mut entry = self.audit_entry(who, route, code, "", Some(&served.body));
        entry.reason = failure.as_ref().map(|e| e.reason().to_string()).unwrap_or_default();
        entry.committed_then_failed = true;
        self.shared.record.emit(entry);
        failure.map(|e| error_response(&e)).ok_or(ConnectionDropped)
    }

    /// Puts a fault that fired into the record; `name` names the object when the path does not.
    fn emit_fault(&self, who: &Requester, route: &ResourceRoute, name: Option<String>, effect: FaultEffect) {
        let name = route.name.clone().or(name).or_else(|| who.requested_name.clone()).unwrap_or_default();
        self.shared.record.emit(ApiFault {
            actor: who.actor.clone(),
            verb: who.verb,
            resource: self.shared.registry.get(route.resource).plural.clone(),
            namespace: route.namespace.clone().unwrap_or_default(),
            name,
            target: target_of(route),
            effect,
        });
    }

    fn execute(
        &self,
        verb: ApiVerb,
        route: &ResourceRoute,
        query: &Query,
        content_type: &str,
        body: WriteBody<'_>,
    ) -> Result<Answer, ApiError> {
        let sh = &*self.shared;
        let rt = sh.registry.get(route.resource);
        let sub = if route.status { Subresource::Status } else { Subresource::Main };
        let key = route.name.as_ref().map(|name| StoreKey {
            resource: route.resource,
            namespace: route.namespace.clone().unwrap_or_default(),
            name: name.clone(),
        });
        match verb {
            ApiVerb::Get => {
                let (st, key) = (sh.lock(), key.as_ref().expect("named"));
                Ok(Answer::ok(engine::get(sh, &st, key)?).stored(&st, key))
            }
            ApiVerb::List => unreachable!("lists are served by serve"),
            ApiVerb::Create => {
                let (object, warnings) =
                    self.decode_write(route, query, content_type, body, WriteKind::Create)?;
                let mut st = sh.lock();
                let created =
                    engine::create(sh, &mut st, route.resource, route.namespace.as_deref(), object)?;
                let key = StoreKey::of(route.resource, &created);
                let answer = Answer { code: StatusCode::CREATED, warnings, ..Answer::ok(created) };
                Ok(answer.stored(&st, &key))
            }
            ApiVerb::Update => {
                let (object, warnings) =
                    self.decode_write(route, query, content_type, body, WriteKind::Update)?;
                let (mut st, key) = (sh.lock(), key.as_ref().expect("named"));
                let updated = engine::update(sh, &mut st, key, object, sub)?;
                Ok(Answer { warnings, ..Answer::ok(updated) }.stored(&st, key))
            }
            ApiVerb::Patch => {
                let patch_type = PatchType::from_content_type(content_type, rt)?;
                let req = PatchRequest { patch_type, body, sub, fields: directive(query, WriteKind::Patch)? };
                let (mut st, key) = (sh.lock(), key.as_ref().expect("named"));
                let (patched, warnings) = engine::patch(sh, &mut st, key, req)?;
                Ok(Answer { warnings, ..Answer::ok(patched) }.stored(&st, key))
            }
            ApiVerb::Delete => {
                let opts = delete_options(query, body.bytes)?;
                let (mut st, key) = (sh.lock(), key.as_ref().expect("named"));
                let deleted = engine::delete(sh, &mut st, key, &opts)?;
                Ok(delete_answer(rt, &opts, &deleted, &st, key))
            }
            ApiVerb::Deletecollection => self.delete_collection(route, query, body.bytes),
            ApiVerb::Watch => unreachable!("watches are served by serve_watch"),
        }
    }

    fn delete_collection(
        &self,
        route: &ResourceRoute,
        query: &Query,
        body: &[u8],
    ) -> Result<Answer, ApiError> {
        let sh = &*self.shared;
        let opts = delete_options(query, body)?;
        let selectors = selectors(sh, route.resource, query)?;
        let mut st = sh.lock();
        let keys: Vec<StoreKey> = st
            .store
            .list(route.resource, route.namespace.as_deref())
            .into_iter()
            .filter(|(_, o)| selectors.matches(o))
            .map(|(k, _)| k.clone())
            .collect();
        let mut items = Vec::new();
        for key in keys {
            items.push((*engine::delete(sh, &mut st, &key, &opts)?.object).clone());
        }
        let rt = sh.registry.get(route.resource);
        let rv = st.store.current_rv().to_string();
        let list = serde_json::json!({"kind": rt.list_kind, "apiVersion": rt.api_version(), "metadata": {"resourceVersion": rv}, "items": items});
        Ok(Answer::ok(list))
    }

    async fn serve_watch(
        &self,
        query: &Query,
        route: &ResourceRoute,
        injection: Option<Injection>,
        who: &Requester,
    ) -> Response<ResponseBody> {
        let request = match watch_request(&self.shared, route, query) {
            Ok(r) => WatchRequest { actor: who.actor.clone(), ..r },
            Err(e) => return self.finish(who, route, Err(e)),
        };
        let mut fault = match injection {
            Some(Injection::DropWatch(d)) => Some(WatchFault::DropAfter(d)),
            Some(Injection::ExpireWatch) => Some(WatchFault::Expire),
            Some(Injection::StallWatch(d)) => Some(WatchFault::StallAfter(d)),
            _ => None,
        };
        if let (None, WatchFrom::Cache { min_rv, .. }) = (&fault, request.from) {
            let sh = &self.shared;
            if let Err(e) = cache::wait_until_fresh(&sh.cache, sh.clock, request.resource, min_rv).await {
                fault = Some(WatchFault::Fail(e.body));
            }
        }
        let from =
            if request.requested_rv.is_empty() { "now".to_string() } else { request.requested_rv.clone() };
        let (tx, rx) = watch_stream::watch_stream();
        let id = watch::start(&self.shared, request, fault, tx);
        let plural = &self.shared.registry.get(route.resource).plural;
        self.count(ApiVerb::Watch, route.resource, 200);
        let opened = WatchOpened {
            id,
            actor: who.actor.clone(),
            resource: plural.to_string(),
            target: target_of(route),
            from,
        };
        self.shared.record.emit(opened);
        stream_response(rx)
    }

    /// Counts, audits and traces a finished request and builds its response.
    fn finish(
        &self,
        who: &Requester,
        route: &ResourceRoute,
        result: Result<Answer, ApiError>,
    ) -> Response<ResponseBody> {
        let (code, response) = match &result {
            Ok(answer) => (answer.code.as_u16(), answer.response()),
            Err(e) => (e.code, error_response(e)),
        };
        self.count(who.verb, route.resource, code);
        if let Ok(answer) = &result {
            self.log_read(who, route, &answer.body);
        }
        let plural = &self.shared.registry.get(route.resource).plural;
        self.shared.record.emit_with(Some(plural), || {
            let object = result.as_ref().ok().map(|a| &*a.body);
            let rv = object.and_then(|o| o.at("/metadata/resourceVersion")).and_then(Value::as_str);
            let mut entry = self.audit_entry(who, route, code, rv.unwrap_or(""), object);
            if let Err(e) = &result {
                entry.reason = e.reason().to_string();
            }
            entry.warnings = result.as_ref().map_or(0, |a| a.warnings.len());
            entry
        });
        self.count_write(who, code);
        response
    }

    /// Counts a successful write for the perturbations, and asks the world for a controller restart
    /// when one must follow it.
    fn count_write(&self, who: &Requester, code: u16) {
        let Some(actor) = who.actor.as_deref().filter(|_| who.verb.is_mutating() && code < 400) else {
            return;
        };
        if self.shared.lock().perturbations.on_write(actor) {
            self.shared.restart_requested.notify_one();
        }
    }

    /// Adds a get's object or a list's items to the read log.
    fn log_read(&self, who: &Requester, route: &ResourceRoute, value: &Value) {
        let actor = who.actor.as_deref();
        match who.verb {
            ApiVerb::Get => reads::record(&self.shared, route.resource, actor, ReadVia::Get, [value]),
            ApiVerb::List => {
                let items = value.get("items").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
                reads::record(&self.shared, route.resource, actor, ReadVia::List, items);
            }
            _ => {}
        }
    }

    /// The record of an answered request (the `Status` reason and warnings are filled in by the caller).
    fn audit_entry(
        &self,
        who: &Requester,
        route: &ResourceRoute,
        code: u16,
        rv: &str,
        object: Option<&Value>,
    ) -> AuditEntry {
        let named = object.and_then(|o| o.at("/metadata/name")).and_then(Value::as_str);
        AuditEntry {
            ms: self.shared.clock.elapsed_ms(),
            served_ms: who.served_ms,
            actor: who.actor.clone().unwrap_or_else(|| "client".into()),
            attributed: who.actor.is_some(),
            verb: who.verb,
            resource: self.shared.registry.get(route.resource).plural.to_string(),
            namespace: route.namespace.clone().unwrap_or_default(),
            name: route
                .name
                .clone()
                .or_else(|| named.map(str::to_string))
                .or_else(|| who.requested_name.clone())
                .unwrap_or_default(),
            target: target_of(route),
            status_subresource: route.status,
            code,
            reason: String::new(),
            body_hash: who.body_hash,
            resource_version: rv.to_string(),
            warnings: 0,
            committed_then_failed: false,
        }
    }

    /// Whether request bodies are hashed: for the trace's lines, or for a judge that reads the hashes.
    fn hashes_bodies(&self) -> bool {
        let record = &self.shared.record;
        !record.trace().is_off() || record.wants::<BodyHashes>(None)
    }

    fn count(&self, verb: ApiVerb, resource: ResourceId, code: u16) {
        *self.shared.lock().counts.entry((verb, resource, code)).or_insert(0) += 1;
    }
}

/// A DELETE's answer, as kube-apiserver's delete handler gives it: 200, or 202 when the object stays
/// and the request set `orphanDependents: false`; the object, except that a kind whose registry does
/// not return deleted objects answers a removal with a `Status` of Success.
/// The answer to a DELETE: the object as it now is (with the store's encoding of it), or for a kind
/// that does not return it, a success `Status`.
fn delete_answer(
    rt: &ResourceType,
    opts: &DeleteOptions,
    deleted: &engine::Deleted,
    st: &super::State,
    key: &StoreKey,
) -> Answer {
    let accepted = !deleted.removed && opts.orphan_dependents == Some(false);
    let code = if accepted { StatusCode::ACCEPTED } else { StatusCode::OK };
    if deleted.removed && !rt.returns_deleted_object {
        return Answer { code, ..Answer::ok(status::delete_success(rt, &deleted.object)) };
    }
    let encoded = if deleted.removed {
        st.store.encoded_removal(key, &deleted.object)
    } else {
        st.store.encoded(key, &deleted.object)
    };
    Answer { code, encoded, ..Answer::ok(Arc::clone(&deleted.object)) }
}

/// Whether a write carries a precondition a real server could find stale: a resourceVersion in the
/// body of an update or patch, or preconditions in a delete. Only those can be answered Conflict (a
/// plain merge patch is applied to the latest version and never conflicts), so an injected Conflict
/// spares the rest.
fn carries_precondition(verb: ApiVerb, body: Option<&Value>) -> bool {
    let Some(value) = body else { return false };
    match verb {
        ApiVerb::Update | ApiVerb::Patch => {
            value.at("/metadata/resourceVersion").and_then(Value::as_str).is_some_and(|rv| !rv.is_empty())
        }
        ApiVerb::Delete => value.get("preconditions").is_some_and(|p| !p.is_null()),
        _ => false,
    }
}

/// The name a create body asks for: `metadata.name`, or `metadata.generateName` followed by `*`.
fn requested_name(body: Option<&Value>) -> Option<String> {
    let meta = body?.get("metadata")?;
    match (meta.get("name").and_then(Value::as_str), meta.get("generateName").and_then(Value::as_str)) {
        (Some(name), _) if !name.is_empty() => Some(name.to_string()),
        (_, Some(prefix)) => Some(format!("{prefix}*")),
        _ => None,
    }
}

fn target_of(route: &ResourceRoute) -> String {
    let mut target = String::with_capacity(64);
    if let Some(ns) = &route.namespace {
        target.push_str(ns);
        target.push('/');
    }
    match &route.name {
        Some(name) => {
            target.push_str(name);
            if route.status {
                target.push_str("/status");
            }
        }
        None => target.push('*'),
    }
    target
}

fn verb_of(method: &Method, route: &ResourceRoute, query: &Query) -> Option<ApiVerb> {
    let named = route.name.is_some();
    let watching = matches!(query.get("watch").map(String::as_str), Some("true" | "1"));
    match *method {
        Method::GET if named => Some(ApiVerb::Get),
        Method::GET if watching => Some(ApiVerb::Watch),
        Method::GET => Some(ApiVerb::List),
        Method::POST if !named => Some(ApiVerb::Create),
        Method::PUT if named => Some(ApiVerb::Update),
        Method::PATCH if named => Some(ApiVerb::Patch),
        Method::DELETE if named && !route.status => Some(ApiVerb::Delete),
        Method::DELETE if !named => Some(ApiVerb::Deletecollection),
        _ => None,
    }
}

/// The `fieldValidation` directive of a write.
fn directive(query: &Query, write: WriteKind) -> Result<FieldValidation, ApiError> {
    FieldValidation::parse(query.get("fieldValidation").map(String::as_str), write)
}

/// Bodies of POST and PUT must be JSON (YAML and protobuf, which kube-apiserver also takes, are
/// refused with 415 by this fake).
fn check_json_body(content_type: &str) -> Result<(), ApiError> {
    let media = content_type.split(';').next().unwrap_or("").trim();
    if media.is_empty() || media == "application/json" || media == "*/*" {
        Ok(())
    } else {
        Err(status::unsupported_media_type(media))
    }
}

fn selectors(sh: &Shared, resource: ResourceId, query: &Query) -> Result<Selectors, ApiError> {
    let rt = sh.registry.get(resource);
    let labels = LabelSelector::parse(query.get("labelSelector").map_or("", String::as_str))
        .map_err(|e| status::bad_request(e.0))?;
    let fields = FieldSelector::parse(
        query.get("fieldSelector").map_or("", String::as_str),
        &rt.extra_field_selectors,
    )
    .map_err(|e| status::bad_request(e.0))?;
    Ok(Selectors { labels, fields })
}

fn parse_number<T: std::str::FromStr>(query: &Query, key: &str) -> Result<Option<T>, ApiError> {
    match query.get(key).map(String::as_str) {
        None | Some("") => Ok(None),
        Some(text) => text
            .parse()
            .map(Some)
            .map_err(|_| status::bad_request(format!("invalid value for {key}: {text:?}"))),
    }
}

fn list_request(sh: &Shared, route: &ResourceRoute, query: &Query) -> Result<ListRequest, ApiError> {
    let limit: Option<usize> = parse_number(query, "limit")?;
    let from = versions::list_from(&VersionParams {
        limited: limit.is_some_and(|l| l > 0),
        ..version_params(query)
    })?;
    Ok(ListRequest {
        resource: route.resource,
        namespace: route.namespace.clone(),
        selectors: selectors(sh, route.resource, query)?,
        selector_text: format!(
            "{}|{}",
            query.get("labelSelector").map_or("", String::as_str),
            query.get("fieldSelector").map_or("", String::as_str)
        ),
        limit,
        continue_token: query.get("continue").filter(|c| !c.is_empty()).cloned(),
        from,
        requested_rv: query.get("resourceVersion").cloned().unwrap_or_default(),
        actor: None,
    })
}

fn watch_request(sh: &Shared, route: &ResourceRoute, query: &Query) -> Result<WatchRequest, ApiError> {
    let flag = |key: &str| matches!(query.get(key).map(String::as_str), Some("true" | "1"));
    Ok(WatchRequest {
        resource: route.resource,
        namespace: route.namespace.clone(),
        selectors: selectors(sh, route.resource, query)?,
        from: versions::watch_from(&version_params(query))?,
        requested_rv: query.get("resourceVersion").cloned().unwrap_or_default(),
        allow_bookmarks: flag("allowWatchBookmarks"),
        timeout: parse_number::<u64>(query, "timeoutSeconds")?.map(Duration::from_secs),
        actor: None,
    })
}

/// The version parameters of a list or watch query.
fn version_params(query: &Query) -> VersionParams<'_> {
    let text = |key: &str| query.get(key).map_or("", String::as_str);
    VersionParams {
        resource_version: text("resourceVersion"),
        version_match: text("resourceVersionMatch"),
        send_initial_events: query.get("sendInitialEvents").map(|v| matches!(v.as_str(), "true" | "1")),
        continue_token: text("continue"),
        limited: false,
    }
}

/// DeleteOptions from the body (if any), completed by query parameters.
fn delete_options(query: &Query, body: &[u8]) -> Result<DeleteOptions, ApiError> {
    let mut opts: DeleteOptions = if body.iter().all(u8::is_ascii_whitespace) {
        DeleteOptions::default()
    } else {
        serde_json::from_slice(body)
            .map_err(|e| status::bad_request(format!("invalid DeleteOptions: {e}")))?
    };
    if opts.grace_period_seconds.is_none() {
        opts.grace_period_seconds = parse_number(query, "gracePeriodSeconds")?;
    }
    if opts.orphan_dependents.is_none() {
        opts.orphan_dependents =
            match query.get("orphanDependents").map(String::as_str) {
                None | Some("") => None,
                Some(text) => Some(text.parse().map_err(|_| {
                    status::bad_request(format!("invalid value for orphanDependents: {text:?}"))
                })?),
            };
    }
    if opts.propagation_policy.is_none() {
        opts.propagation_policy = match query.get("propagationPolicy").map(String::as_str) {
            None | Some("") => None,
            Some("Background") => Some(Propagation::Background),
            Some("Foreground") => Some(Propagation::Foreground),
            Some("Orphan") => Some(Propagation::Orphan),
            Some(other) => return Err(status::bad_request(format!("unknown propagationPolicy {other:?}"))),
        };
    }
    Ok(opts)
}

/// Splits and percent-decodes a query string.
fn parse_query(raw: &str) -> Query {
    raw.split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = (bytes[i] == b'%' && i + 2 < bytes.len())
            .then(|| std::str::from_utf8(&bytes[i + 1..i + 3]).ok())
            .flatten()
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (_, Some(decoded)) => {
                out.push(decoded);
                i += 3;
                continue;
            }
            (b'+', None) => out.push(b' '),
            (b, None) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn full_body(bytes: Vec<u8>) -> ResponseBody {
    Full::new(Bytes::from(bytes)).boxed_unsync()
}

fn json_response(code: StatusCode, value: &Value) -> Response<ResponseBody> {
    json_bytes_response(code, Bytes::from(crate::compact_json::to_vec(value)))
}

fn json_bytes_response(code: StatusCode, bytes: Bytes) -> Response<ResponseBody> {
    let mut response = Response::new(Full::new(bytes).boxed_unsync());
    *response.status_mut() = code;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn text_response(code: StatusCode, text: &str) -> Response<ResponseBody> {
    Response::builder()
        .status(code)
        .header(header::CONTENT_TYPE, "text/plain")
        .body(full_body(text.as_bytes().to_vec()))
        .expect("valid response")
}

fn error_response(e: &ApiError) -> Response<ResponseBody> {
    let mut response =
        json_response(StatusCode::from_u16(e.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), &e.body);
    if let Some(seconds) = e.retry_after_seconds {
        response.headers_mut().insert(header::RETRY_AFTER, seconds.into());
    }
    response
}

fn stream_response(rx: watch_stream::WatchReceiver) -> Response<ResponseBody> {
    let frames = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|bytes| (Ok::<_, Infallible>(http_body::Frame::data(bytes)), rx))
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/json")
        .body(StreamBody::new(frames).boxed_unsync())
        .expect("valid response")
}

impl<B> tower::Service<Request<B>> for ApiService
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: std::fmt::Display,
{
    type Response = Response<ResponseBody>;
    type Error = ConnectionDropped;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, ConnectionDropped>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let service = self.clone();
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let bytes = match body.collect().await {
                Ok(collected) => collected.to_bytes(),
                Err(e) => {
                    return Ok(error_response(&status::bad_request(format!(
                        "could not read the request body: {e}"
                    ))));
                }
            };
            service.handle(parts, bytes).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_percent_decoded() {
        let q = parse_query("labelSelector=app%3Dweb%2Ctier+in+%28a%29&watch=true&x");
        assert_eq!(q["labelSelector"], "app=web,tier in (a)");
        assert_eq!(q["watch"], "true");
        assert_eq!(q["x"], "");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
    }
}
