//! The `resourceVersion`, `resourceVersionMatch`, `sendInitialEvents` and `continue` parameters of
//! lists and watches: checked as kube-apiserver's `ValidateListOptions` checks them (422 Invalid on
//! `ListOptions.meta.k8s.io`), and turned into where the read is served from, as the cacher decides
//! (`staging/src/k8s.io/apiserver/pkg/storage/cacher/delegator.go`, `shouldDelegateList`):
//!
//! | list parameters | served from |
//! |---|---|
//! | no `resourceVersion` | the store: a consistent read, paged with `limit`/`continue` |
//! | `continue` (with no `resourceVersion` or `0`) | the paged list's snapshot |
//! | `resourceVersion=0` (match unset or `NotOlderThan`) | the watch cache as it is; `limit` ignored |
//! | `resourceVersion=N`, `NotOlderThan` (or match unset without `limit`) | the watch cache once it has reached `N` (504 after 3 s) |
//! | `resourceVersion=N`, `Exact` (or match unset with `limit`, the legacy form) | the store as it was at `N` (410 once `N` has left the history) |
//!
//! Watches: without `resourceVersion`, the store's current objects then what follows; at `0`, the
//! cache's objects then what follows; at `N`, what follows `N`; `sendInitialEvents=true` (with
//! `resourceVersionMatch=NotOlderThan`) sends the cache's objects once it has reached `N`, then a
//! bookmark. Simplification: reads without `resourceVersion` come straight from the store, where
//! kube-apiserver 1.31+ serves them from the cache after waiting for it to be fresh (same answer, no
//! wait).

use super::status::{self, ApiError, Cause};

/// Where a list is served from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListFrom {
    /// The store, now (consistent read), or a paged list's snapshot.
    Store,
    /// The watch cache, once its resourceVersion is at least `min_rv` (0: as it is).
    Cache {
        /// The version the cache must have reached.
        min_rv: u64,
    },
    /// The store as it was at this resourceVersion.
    Exact(u64),
}

/// Where a watch starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchFrom {
    /// The store's current objects as ADDED, then every later change.
    Store {
        /// Whether a bookmark marks the end of the initial objects (`sendInitialEvents=true`).
        bookmark: bool,
    },
    /// The watch cache's objects (once it has reached `min_rv`) as ADDED, then every later change.
    Cache {
        /// The version the cache must have reached.
        min_rv: u64,
        /// Whether a bookmark marks the end of the initial objects.
        bookmark: bool,
    },
    /// Every change after this resourceVersion (`None`: after the cache's current one).
    After(Option<u64>),
}

/// The raw parameters, as the query carries them (empty when absent).
#[derive(Debug, Clone, Copy, Default)]
pub struct VersionParams<'a> {
    /// `resourceVersion`.
    pub resource_version: &'a str,
    /// `resourceVersionMatch`.
    pub version_match: &'a str,
    /// `sendInitialEvents`, when given.
    pub send_initial_events: Option<bool>,
    /// `continue`.
    pub continue_token: &'a str,
    /// Whether `limit` is set (and positive).
    pub limited: bool,
}

const EXACT: &str = "Exact";
const NOT_OLDER_THAN: &str = "NotOlderThan";

/// Where a list with these parameters is served from, or the error kube-apiserver answers.
pub fn list_from(p: &VersionParams<'_>) -> Result<ListFrom, ApiError> {
    invalid_if_any(list_causes(p))?;
    let rv = parse_rv(p.resource_version)?;
    if !p.continue_token.is_empty() {
        return match rv {
            None | Some(0) => Ok(ListFrom::Store),
            Some(_) => {
                Err(status::bad_request("specifying resource version is not allowed when using continue"))
            }
        };
    }
    Ok(match (rv, p.version_match) {
        (None, _) => ListFrom::Store,
        (Some(n), EXACT) => ListFrom::Exact(n),
        (Some(0), _) => ListFrom::Cache { min_rv: 0 },
        (Some(n), "") if p.limited => ListFrom::Exact(n),
        (Some(n), _) => ListFrom::Cache { min_rv: n },
    })
}

/// Where a watch with these parameters starts, or the error kube-apiserver answers.
pub fn watch_from(p: &VersionParams<'_>) -> Result<WatchFrom, ApiError> {
    invalid_if_any(watch_causes(p))?;
    let rv = parse_rv(p.resource_version)?;
    Ok(match (rv, p.send_initial_events) {
        (None, None) => WatchFrom::Store { bookmark: false },
        (None, Some(true)) => WatchFrom::Store { bookmark: true },
        (Some(0), None) => WatchFrom::Cache { min_rv: 0, bookmark: false },
        (Some(n), Some(true)) => WatchFrom::Cache { min_rv: n, bookmark: true },
        (None | Some(0), Some(false)) => WatchFrom::After(None),
        (Some(n), _) => WatchFrom::After(Some(n)),
    })
}

/// A resourceVersion: empty is unset; anything but digits is the 400 the fake has always answered.
fn parse_rv(text: &str) -> Result<Option<u64>, ApiError> {
    if text.is_empty() {
        return Ok(None);
    }
    text.parse()
        .map(Some)
        .map_err(|_| status::bad_request(format!("invalid value for resourceVersion: {text:?}")))
}

fn list_causes(p: &VersionParams<'_>) -> Vec<Cause> {
    let mut causes = Vec::new();
    let m = p.version_match;
    if !m.is_empty() {
        if p.resource_version.is_empty() {
            causes.push(forbidden("resourceVersionMatch is forbidden unless resourceVersion is provided"));
        }
        if !p.continue_token.is_empty() {
            causes.push(forbidden("resourceVersionMatch is forbidden when continue is provided"));
        }
        if m != EXACT && m != NOT_OLDER_THAN {
            causes.push(not_supported(m, &[EXACT, NOT_OLDER_THAN, ""]));
        }
        if m == EXACT && p.resource_version == "0" {
            causes.push(forbidden("resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""));
        }
    }
    if p.send_initial_events.is_some() {
        causes.push(Cause {
            reason: "FieldValueForbidden",
            field: "sendInitialEvents".into(),
            message: "Forbidden: sendInitialEvents is forbidden for list".into(),
        });
    }
    causes
}

fn watch_causes(p: &VersionParams<'_>) -> Vec<Cause> {
    let mut causes = Vec::new();
    let m = p.version_match;
    if p.send_initial_events.is_some() && m != NOT_OLDER_THAN {
        causes.push(forbidden("sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"));
    }
    if !m.is_empty() {
        if p.send_initial_events.is_none() {
            causes.push(forbidden(
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ));
        }
        if m != NOT_OLDER_THAN {
            causes.push(not_supported(m, &[NOT_OLDER_THAN]));
        }
        if !p.continue_token.is_empty() {
            causes.push(forbidden("resourceVersionMatch is forbidden when continue is provided"));
        }
    }
    causes
}

fn forbidden(detail: &str) -> Cause {
    Cause {
        reason: "FieldValueForbidden",
        field: "resourceVersionMatch".into(),
        message: format!("Forbidden: {detail}"),
    }
}

fn not_supported(value: &str, supported: &[&str]) -> Cause {
    let values: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
    Cause {
        reason: "FieldValueNotSupported",
        field: "resourceVersionMatch".into(),
        message: format!("Unsupported value: {value:?}: supported values: {}", values.join(", ")),
    }
}

/// 422 Invalid on `ListOptions.meta.k8s.io ""` when any check failed.
fn invalid_if_any(causes: Vec<Cause>) -> Result<(), ApiError> {
    if causes.is_empty() {
        Ok(())
    } else {
        Err(status::invalid_of("meta.k8s.io", "ListOptions", "", &causes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(rv: &str, m: &str, limited: bool) -> Result<ListFrom, ApiError> {
        list_from(&VersionParams { resource_version: rv, version_match: m, limited, ..Default::default() })
    }

    #[test]
    fn lists_are_served_as_the_cacher_decides() {
        assert_eq!(list("", "", true), Ok(ListFrom::Store));
        assert_eq!(list("0", "", true), Ok(ListFrom::Cache { min_rv: 0 }));
        assert_eq!(list("0", "NotOlderThan", false), Ok(ListFrom::Cache { min_rv: 0 }));
        assert_eq!(list("7", "NotOlderThan", true), Ok(ListFrom::Cache { min_rv: 7 }));
        assert_eq!(list("7", "", false), Ok(ListFrom::Cache { min_rv: 7 }));
        assert_eq!(list("7", "", true), Ok(ListFrom::Exact(7)), "the legacy paged form is exact");
        assert_eq!(list("7", "Exact", false), Ok(ListFrom::Exact(7)));
    }

    #[test]
    fn bad_combinations_get_kube_apiservers_422() {
        let e = list("", "Exact", false).unwrap_err();
        assert_eq!(e.code, 422);
        assert_eq!(
            e.message(),
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
        );
        assert_eq!(e.body["details"]["group"], "meta.k8s.io");
        let e = list("0", "Exact", false).unwrap_err();
        assert!(
            e.message().contains(r#"resourceVersionMatch "exact" is forbidden for resourceVersion "0""#),
            "{}",
            e.message()
        );
        let e = list("1", "bogus", false).unwrap_err();
        assert!(e.message().ends_with(
            "resourceVersionMatch: Unsupported value: \"bogus\": supported values: \"Exact\", \"NotOlderThan\", \"\""
        ));
        let p = VersionParams { resource_version: "5", continue_token: "abc", ..Default::default() };
        assert_eq!(list_from(&p).unwrap_err().code, 400);
    }

    #[test]
    fn watches_start_where_the_cacher_starts_them() {
        let watch = |rv, m, sie| {
            watch_from(&VersionParams {
                resource_version: rv,
                version_match: m,
                send_initial_events: sie,
                ..Default::default()
            })
        };
        assert_eq!(watch("", "", None), Ok(WatchFrom::Store { bookmark: false }));
        assert_eq!(watch("0", "", None), Ok(WatchFrom::Cache { min_rv: 0, bookmark: false }));
        assert_eq!(watch("9", "", None), Ok(WatchFrom::After(Some(9))));
        assert_eq!(
            watch("9", "NotOlderThan", Some(true)),
            Ok(WatchFrom::Cache { min_rv: 9, bookmark: true })
        );
        assert_eq!(watch("0", "NotOlderThan", Some(false)), Ok(WatchFrom::After(None)));
        let e = watch("0", "", Some(true)).unwrap_err();
        assert!(
            e.message().contains("sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")
        );
        let e = watch("0", "NotOlderThan", None).unwrap_err();
        assert!(e.message().contains("forbidden for watch unless sendInitialEvents is provided"));
    }
}
