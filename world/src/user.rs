//! [`User`]: the person at `kubectl`, as API actor `user`. It creates the world's initial objects (as
//! `kubectl create` would, retrying what the server refused for a moment), merge-patches an object,
//! and deletes every object of a kind in a namespace (`kubectl delete PLURAL --all`). It knows the API
//! server's kinds, nothing of who owns what.

use std::time::Duration;

use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use serde_json::Value;

use arc_sim::apiserver::FakeApiServer;

/// The user, on `apiserver`.
pub(crate) struct User<'a> {
    apiserver: &'a FakeApiServer,
}

/// Why the server did not create an initial object.
enum CreateRefusal {
    /// For a moment (5xx, 429, a dropped connection): worth retrying.
    Transient(String),
    /// 409 AlreadyExists.
    AlreadyExists(String),
    /// Anything else.
    Permanent(String),
}

impl CreateRefusal {
    fn into_message(self) -> String {
        match self {
            CreateRefusal::Transient(m) | CreateRefusal::AlreadyExists(m) | CreateRefusal::Permanent(m) => m,
        }
    }
}

impl<'a> User<'a> {
    /// The user of `apiserver`.
    pub(crate) fn new(apiserver: &'a FakeApiServer) -> Self {
        User { apiserver }
    }

    /// Creates `objects` in order; the error names the first that could not be created, by position.
    pub(crate) async fn create_all(&self, objects: &[Value]) -> Result<(), (usize, String)> {
        let client = self.apiserver.client_as("user");
        for (index, object) in objects.iter().enumerate() {
            let mut attempts = 0;
            loop {
                match self.create(&client, object).await {
                    Ok(()) => break,
                    // A retry of a create that committed before its answer failed finds it there.
                    Err(CreateRefusal::AlreadyExists(_)) if attempts > 0 => break,
                    // A user retries what the server refused for a moment (an injected 5xx or 429, or
                    // a dropped connection).
                    Err(CreateRefusal::Transient(_)) if attempts < 30 => {
                        attempts += 1;
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                    Err(refusal) => return Err((index, refusal.into_message())),
                }
            }
        }
        Ok(())
    }

    /// Creates one object; the error says whether retrying could help (5xx, 429) and what went wrong.
    async fn create(&self, client: &kube::Client, object: &Value) -> Result<(), CreateRefusal> {
        let permanent = CreateRefusal::Permanent;
        let api_version = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| permanent("no apiVersion".into()))?;
        let kind = object.get("kind").and_then(Value::as_str).ok_or_else(|| permanent("no kind".into()))?;
        let rt = self
            .apiserver
            .registry()
            .types()
            .iter()
            .find(|t| t.api_version() == api_version && t.kind == kind)
            .ok_or_else(|| permanent(format!("the fake API server does not serve {api_version} {kind}")))?;
        let gvk = GroupVersionKind::gvk(&rt.group, &rt.version, &rt.kind);
        let resource = ApiResource::from_gvk_with_plural(&gvk, &rt.plural);
        let obj: DynamicObject =
            serde_json::from_value(object.clone()).map_err(|e| permanent(e.to_string()))?;
        let api: Api<DynamicObject> = match (rt.namespaced, obj.metadata.namespace.as_deref()) {
            (true, Some(ns)) => Api::namespaced_with(client.clone(), ns, &resource),
            (true, None) => return Err(permanent(format!("{kind} needs metadata.namespace"))),
            (false, _) => Api::all_with(client.clone(), &resource),
        };
        api.create(&PostParams::default(), &obj).await.map(|_| ()).map_err(|e| match &e {
            kube::Error::Api(status) if status.code >= 500 || status.code == 429 => {
                CreateRefusal::Transient(e.to_string())
            }
            kube::Error::Api(status) if status.reason == "AlreadyExists" => {
                CreateRefusal::AlreadyExists(e.to_string())
            }
            kube::Error::Api(_) => CreateRefusal::Permanent(e.to_string()),
            _ => CreateRefusal::Transient(e.to_string()),
        })
    }

    /// `kubectl patch --type merge`: one merge patch of an object's main resource.
    pub(crate) async fn patch(
        &self,
        plural: &str,
        namespace: &str,
        name: &str,
        patch: &Value,
    ) -> Result<(), String> {
        let api = self.api(plural, namespace)?;
        api.patch(name, &kube::api::PatchParams::default(), &kube::api::Patch::Merge(patch))
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// `kubectl delete PLURAL --all -n NAMESPACE`: one list, then one delete per listed name; a name
    /// already gone is skipped, any other refusal ends the command (kubectl reports it and goes on, but
    /// the world only needs to say the command did not do everything).
    pub(crate) async fn delete_all(&self, plural: &str, namespace: &str) -> Result<(), String> {
        let api = self.api(plural, namespace)?;
        let listed = api.list(&kube::api::ListParams::default()).await.map_err(|e| e.to_string())?;
        let mut refused = Vec::new();
        for name in listed.items.iter().filter_map(|o| o.metadata.name.as_deref()) {
            match api.delete(name, &kube::api::DeleteParams::default()).await {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(e) => refused.push(format!("{name}: {e}")),
            }
        }
        if refused.is_empty() {
            Ok(())
        } else {
            Err(format!("delete {plural} --all: {}", refused.join("; ")))
        }
    }

    /// A namespaced API of `plural` as actor `user`.
    fn api(&self, plural: &str, namespace: &str) -> Result<Api<DynamicObject>, String> {
        let registry = self.apiserver.registry();
        let rt = registry.find_plural(plural).map(|id| registry.get(id).clone());
        let rt = rt.ok_or_else(|| format!("unknown resource {plural}"))?;
        let gvk = GroupVersionKind::gvk(&rt.group, &rt.version, &rt.kind);
        let resource = ApiResource::from_gvk_with_plural(&gvk, &rt.plural);
        Ok(Api::namespaced_with(self.apiserver.client_as("user"), namespace, &resource))
    }
}
