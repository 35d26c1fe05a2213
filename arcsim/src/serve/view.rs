//! What `arcsim serve` answers: the paused world's objects as the Kubernetes API serves them (discovery,
//! get and list with label and field selectors, for kubectl), and the fake GitHub's state at
//! `/github/state`. Read-only: the world moves only by the commands on stdin, so writes and watches
//! are refused with a `Status` that says why.

use arc_sim::apiserver::selector::{FieldSelector, LabelSelector, Selectors};
use arc_sim::apiserver::{Registry, ResourceType, discovery, status};
use arc_sim::json_at::At;
use serde_json::{Value, json};

use super::snapshot::Snapshot;
use super::table::{Columns, table};

/// The path of the fake GitHub's state.
pub const GITHUB_STATE_PATH: &str = "/github/state";

/// An answer: HTTP status and JSON body.
pub type Answer = (u16, Value);

/// A request, as far as the view reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Asked<'a> {
    /// The method.
    pub method: &'a str,
    /// The path.
    pub path: &'a str,
    /// The query string.
    pub query: &'a str,
    /// What the client called the server (for `/api`'s server address).
    pub host: &'a str,
    /// The `Accept` header (kubectl asks for tables).
    pub accept: &'a str,
}

/// What is served: the kinds, and the printer columns of the custom ones.
#[derive(Debug, Clone)]
pub struct View {
    registry: Registry,
    columns: Columns,
}

impl View {
    /// A view of a world whose kinds `registry` holds, with the printer columns of `columns`.
    pub fn new(registry: Registry, columns: Columns) -> View {
        View { registry, columns }
    }

    /// The answer to `asked` from `snapshot`.
    pub fn answer(&self, snapshot: &Snapshot, asked: &Asked<'_>) -> Answer {
        if asked.method != "GET" {
            let message = format!(
                "{} is not served: arcsim serve shows a paused world and is read-only; step it with the \
                 commands on its stdin",
                asked.method
            );
            return refused(405, "MethodNotAllowed", &message);
        }
        if asked.path == GITHUB_STATE_PATH {
            return (200, snapshot.github.clone());
        }
        let registry = &self.registry;
        let segs: Vec<&str> = asked.path.split('/').filter(|s| !s.is_empty()).collect();
        let found = match segs.as_slice() {
            ["version"] => Some(discovery::version()),
            ["healthz" | "readyz" | "livez"] => Some(json!("ok")),
            ["api"] => Some(discovery::core_versions(asked.host)),
            ["api", "v1"] => discovery::resource_list(registry, "", "v1"),
            ["apis"] => Some(discovery::groups(registry)),
            ["apis", g] => discovery::group(registry, g),
            ["apis", g, v] => discovery::resource_list(registry, g, v),
            ["api", "v1", rest @ ..] => return self.resource(snapshot, "", "v1", rest, asked),
            ["apis", g, v, rest @ ..] => return self.resource(snapshot, g, v, rest, asked),
            _ => None,
        };
        match found {
            Some(doc) => (200, doc),
            None => error(&status::unknown_resource()),
        }
    }

    fn resource(
        &self,
        snapshot: &Snapshot,
        group: &str,
        version: &str,
        rest: &[&str],
        asked: &Asked<'_>,
    ) -> Answer {
        let Some((rt, namespace, name)) = route(&self.registry, group, version, rest) else {
            return error(&status::unknown_resource());
        };
        let params = parse_query(asked.query);
        if params.iter().any(|(k, v)| k == "watch" && (v == "true" || v == "1")) {
            let message = "watch is not served: arcsim serve shows a paused world; get again after a step";
            return refused(405, "MethodNotAllowed", message);
        }
        let objects = snapshot.objects.get(&rt.plural).map(Vec::as_slice).unwrap_or(&[]);
        let in_namespace = |o: &&Value| {
            namespace.is_none_or(|ns| o.at("/metadata/namespace").and_then(Value::as_str) == Some(ns))
        };
        let as_table = asked.accept.contains("as=Table");
        if let Some(name) = name {
            let named = objects
                .iter()
                .filter(in_namespace)
                .find(|o| o.at("/metadata/name").and_then(Value::as_str) == Some(name));
            return match named {
                Some(o) if as_table => {
                    (200, table(rt, &self.columns, &[o], snapshot.now, snapshot.resource_version))
                }
                Some(o) => (200, o.clone()),
                None => error(&status::not_found(rt, name)),
            };
        }
        let selectors = match selectors(rt, &params) {
            Ok(s) => s,
            Err(message) => return error(&status::bad_request(message)),
        };
        let items: Vec<&Value> =
            objects.iter().filter(in_namespace).filter(|o| selectors.matches(o)).collect();
        if as_table {
            return (200, table(rt, &self.columns, &items, snapshot.now, snapshot.resource_version));
        }
        let list = json!({"kind": rt.list_kind, "apiVersion": rt.api_version(),
            "metadata": {"resourceVersion": snapshot.resource_version.to_string()}, "items": items});
        (200, list)
    }
}

fn error(e: &status::ApiError) -> Answer {
    (e.code, e.body.clone())
}

fn refused(code: u16, reason: &str, message: &str) -> Answer {
    let body = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code});
    (code, body)
}

/// Where a resource path points: the type, the namespace (if any) and the name (if any).
fn route<'a>(
    registry: &'a Registry,
    group: &str,
    version: &str,
    rest: &[&'a str],
) -> Option<(&'a ResourceType, Option<&'a str>, Option<&'a str>)> {
    let namespaced =
        rest.len() >= 3 && rest[0] == "namespaces" && registry.find(group, version, rest[2]).is_some();
    let (namespace, plural, tail) =
        if namespaced { (Some(rest[1]), rest[2], &rest[3..]) } else { (None, *rest.first()?, &rest[1..]) };
    let rt = registry.get(registry.find(group, version, plural)?);
    let name = match tail {
        [] => None,
        [name] => Some(*name),
        [name, "status"] if rt.status_subresource => Some(*name),
        _ => return None,
    };
    Some((rt, namespace, name))
}

fn selectors(rt: &ResourceType, params: &[(String, String)]) -> Result<Selectors, String> {
    let get = |key: &str| params.iter().find(|(k, _)| k == key).map_or("", |(_, v)| v.as_str());
    let labels = LabelSelector::parse(get("labelSelector")).map_err(|e| e.0)?;
    let fields = FieldSelector::parse(get("fieldSelector"), &rt.extra_field_selectors).map_err(|e| e.0)?;
    Ok(Selectors { labels, fields })
}

/// `a=b&c=d` decoded (`%XX` and `+`).
pub fn parse_query(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                i += 3;
            }
            (b'+', _, _) => {
                out.push(b' ');
                i += 1;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_strings_are_decoded() {
        let q = parse_query("labelSelector=app%3Drunner%2Ctier+in+%28a%29&watch=1&x");
        assert_eq!(q[0], ("labelSelector".into(), "app=runner,tier in (a)".into()));
        assert_eq!(q[1], ("watch".into(), "1".into()));
        assert_eq!(q[2], ("x".into(), String::new()));
        assert_eq!(decode("%zz%4"), "%zz%4");
        assert_eq!(decode("%C3%A9"), "é");
    }
}
