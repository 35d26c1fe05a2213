//! The ServiceAccount admission plugin (`plugin/pkg/admission/serviceaccount`) on pod creates: a pod
//! that names no account gets `default`, the account it names must exist in its namespace (else 403
//! `pods "x" is forbidden: error looking up service account ns/sa: serviceaccount "sa" not found`),
//! and a pod without image pull secrets takes the account's.
//!
//! Simplification: the projected token volume (`kube-api-access-xxxxx`) the plugin mounts is not
//! added, and mirror pods are not told apart.

use serde_json::{Value, json};

use super::admission::meta_str;
use super::registry::{ResourceId, ResourceType};
use super::status::{self, ApiError};
use super::store::StoreKey;
use super::{Shared, State};

/// The account every namespace gets, and the one pods use unless they name another.
pub const DEFAULT_ACCOUNT: &str = "default";

/// The id of the ServiceAccount kind.
pub fn service_account_id(sh: &Shared) -> ResourceId {
    sh.registry.find("", "v1", "serviceaccounts").expect("the registry serves service accounts")
}

/// Admits a pod create in `namespace`: defaults `spec.serviceAccountName` (and its deprecated twin
/// `spec.serviceAccount`, as the v1 conversion fills it), checks the account exists, copies its image
/// pull secrets.
pub fn admit_pod(
    sh: &Shared,
    st: &State,
    pods: &ResourceType,
    namespace: &str,
    pod: &mut Value,
) -> Result<(), ApiError> {
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else { return Ok(()) };
    let name = spec.get("serviceAccountName").and_then(Value::as_str).filter(|s| !s.is_empty());
    let account_name = name.unwrap_or(DEFAULT_ACCOUNT).to_string();
    spec.insert("serviceAccountName".into(), json!(account_name));
    spec.insert("serviceAccount".into(), json!(account_name));
    let key = StoreKey {
        resource: service_account_id(sh),
        namespace: namespace.into(),
        name: account_name.clone(),
    };
    let Some(account) = st.store.get(&key) else {
        let why = format!(
            "error looking up service account {namespace}/{account_name}: serviceaccount \"{account_name}\" not found"
        );
        return Err(status::forbidden(pods, &admission_name(pod), &why));
    };
    let pull_secrets = account.get("imagePullSecrets").and_then(Value::as_array).filter(|s| !s.is_empty());
    let spec = pod["spec"].as_object_mut().expect("spec is an object");
    let has_own = spec.get("imagePullSecrets").and_then(Value::as_array).is_some_and(|s| !s.is_empty());
    if let (Some(secrets), false) = (pull_secrets, has_own) {
        let names: Vec<Value> =
            secrets.iter().map(|s| json!({"name": s.get("name").cloned().unwrap_or(json!(""))})).collect();
        spec.insert("imagePullSecrets".into(), json!(names));
    }
    Ok(())
}

/// The name admission errors carry before the name is generated: the name, else the generateName
/// prefix (admission's `extractResourceName`).
pub fn admission_name(object: &Value) -> String {
    meta_str(object, "name").or(meta_str(object, "generateName")).unwrap_or_default().to_string()
}
