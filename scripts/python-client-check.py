#!/usr/bin/env python3
"""Drive `arcsim apiserver` with the official Kubernetes Python client.

A fake that only our own code has talked to is not yet known to be faithful, so this script checks the
fake API server against a second, independent client: create, get, list with selectors, merge patch,
status patch, optimistic-lock conflict, AlreadyExists/NotFound/Invalid statuses, finalizers and
deletionTimestamp, watch, and custom objects.

Usage (needs `pip install kubernetes` in a venv; not part of CI):
    cargo run -p arcsim -- apiserver --listen 127.0.0.1:16443 &
    python3 scripts/python-client-check.py http://127.0.0.1:16443
"""
import sys

from kubernetes import client, watch
from kubernetes.client.rest import ApiException

host = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:6443"
cfg = client.Configuration()
cfg.host = host
api = client.ApiClient(cfg)
core = client.CoreV1Api(api)
custom = client.CustomObjectsApi(api)
checks = 0


def check(cond, what):
    global checks
    if not cond:
        sys.exit(f"FAILED: {what}")
    checks += 1
    print(f"ok  {what}")


def status_of(call):
    try:
        call()
    except ApiException as e:
        return e
    sys.exit("FAILED: expected an ApiException")


pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "py", "labels": {"app": "web", "suite": "python-check"}},
       "spec": {"containers": [{"name": "runner", "image": "ghcr.io/actions/actions-runner:2.330.0"}]}}
created = core.create_namespaced_pod("default", pod)
check(created.metadata.uid and created.metadata.resource_version, "create sets uid and resourceVersion")
e = status_of(lambda: core.create_namespaced_pod("default", pod))
check(e.status == 409 and e.reason == "Conflict" and '"reason":"AlreadyExists"' in e.body, "duplicate create is 409 AlreadyExists")
e = status_of(lambda: core.read_namespaced_pod("nope", "default"))
check(e.status == 404 and '"reason":"NotFound"' in e.body, "missing pod is 404 NotFound")
bad = {"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
e = status_of(lambda: core.create_namespaced_pod("default", bad))
check(e.status == 422 and "name or generateName is required" in e.body, "nameless create is 422 Invalid")
pods = core.list_namespaced_pod("default", label_selector="suite in (python-check),app")
check([p.metadata.name for p in pods.items] == ["py"], "list with a set-based label selector")
check(core.list_namespaced_pod("default", label_selector="suite=python-check", field_selector="metadata.name!=py").items == [], "list with a field selector")
patched = core.patch_namespaced_pod("py", "default", {"metadata": {"labels": {"tier": "front"}}})
check(patched.metadata.labels["tier"] == "front", "merge patch")
status = core.patch_namespaced_pod_status("py", "default", {"status": {"phase": "Running"}})
check(status.status.phase == "Running", "status patch")
stale = {"metadata": {"resourceVersion": created.metadata.resource_version}, "status": {"phase": "Failed"}}
e = status_of(lambda: core.patch_namespaced_pod_status("py", "default", stale))
check(e.status == 409, "patch with a stale resourceVersion is 409 Conflict")

er = {"apiVersion": "actions.github.com/v1alpha1", "kind": "EphemeralRunner",
      "metadata": {"name": "er", "finalizers": ["ephemeralrunner.actions.github.com/finalizer"]}, "spec": {}}
made = custom.create_namespaced_custom_object("actions.github.com", "v1alpha1", "default", "ephemeralrunners", er)
rv = made["metadata"]["resourceVersion"]
custom.delete_namespaced_custom_object("actions.github.com", "v1alpha1", "default", "ephemeralrunners", "er")
held = custom.get_namespaced_custom_object("actions.github.com", "v1alpha1", "default", "ephemeralrunners", "er")
check(held["metadata"].get("deletionTimestamp"), "a finalizer holds a deleted custom object with deletionTimestamp")
custom.patch_namespaced_custom_object("actions.github.com", "v1alpha1", "default", "ephemeralrunners", "er",
                                      {"metadata": {"finalizers": None}})
e = status_of(lambda: custom.get_namespaced_custom_object("actions.github.com", "v1alpha1", "default", "ephemeralrunners", "er"))
check(e.status == 404, "removing the last finalizer removes the object")

w = watch.Watch()
seen = []
for event in w.stream(custom.list_namespaced_custom_object, "actions.github.com", "v1alpha1", "default",
                      "ephemeralrunners", resource_version=rv, timeout_seconds=2):
    seen.append(event["type"])
    if len(seen) == 2:
        w.stop()
check(seen == ["MODIFIED", "DELETED"], f"watch resumed from a resourceVersion sees the mark then the removal: {seen}")
core.delete_namespaced_pod("py", "default")
print(f"all {checks} checks passed against {host}")
