#!/usr/bin/env bash
# Runs the official Kubernetes Python client's own e2e tests against `arcsim apiserver`.
#
# The tests live in the client's repository (kubernetes-client/python, kubernetes/e2e_test/); they find
# their cluster through a kubeconfig (base.get_e2e_configuration reads $KUBECONFIG), so this script
# starts the fake on a free port, writes a kubeconfig pointing at it, and runs pytest from the
# client's checkout (the tests open their YAML files by relative path). Nothing of the client is copied
# into this repository.
#
# Usage (not part of CI; needs a venv with `pip install kubernetes pytest`):
#   git clone https://github.com/kubernetes-client/python /tmp/k8s-python   # any checkout
#   (a checkout missing the large generated files, kubernetes/client/api/core_v1_api.py among them,
#   can be completed from the venv: copy site-packages/kubernetes and add the checkout's
#   kubernetes/e2e_test to it; that is how the 13 tests were run on 2026-12-01)
#   cargo build --release -p arcsim
#   PYTHON=/tmp/pyk/bin/python scripts/python-e2e.sh /tmp/k8s-python [pytest args...]
# Without pytest args it runs the tests that use kinds the fake serves (namespaces, pods, RBAC,
# ConfigMaps, watches, informers); see docs/fakes/apiserver.md, "Using it with kubectl and the Python client".
set -euo pipefail

checkout=${1:?usage: scripts/python-e2e.sh CLIENT_CHECKOUT [pytest args...]}
shift
python=${PYTHON:-python3}
repo=$(cd "$(dirname "$0")/.." && pwd)
arcsim=${ARCSIM:-$repo/target/release/arcsim}
port=${PORT:-$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
work=$(mktemp -d)

"$arcsim" apiserver --listen "127.0.0.1:$port" 2>"$work/apiserver.log" &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 50); do
    curl -sf "http://127.0.0.1:$port/version" >/dev/null && break
    sleep 0.1
done

cat >"$work/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: arcsim, cluster: {server: "http://127.0.0.1:$port"}}]
users: [{name: arcsim, user: {}}]
contexts: [{name: arcsim, context: {cluster: arcsim, user: arcsim, namespace: default}}]
current-context: arcsim
EOF

if [ "$#" -eq 0 ]; then
    set -- \
        "kubernetes/e2e_test/test_utils.py::TestUtils::test_create_pod_from_yaml" \
        "kubernetes/e2e_test/test_utils.py::TestUtils::test_create_namespace_from_yaml" \
        "kubernetes/e2e_test/test_utils.py::TestUtils::test_create_namespace_list_from_yaml" \
        "kubernetes/e2e_test/test_utils.py::TestUtils::test_create_rbac_role_from_yaml" \
        "kubernetes/e2e_test/test_utils.py::TestUtils::test_create_rbac_role_from_yaml_with_verbose_enabled" \
        "kubernetes/e2e_test/test_client.py::TestClient::test_configmap_apis" \
        "kubernetes/e2e_test/test_watch.py" \
        "kubernetes/e2e_test/test_informer.py"
fi
cd "$checkout"
KUBECONFIG="$work/kubeconfig" PYTHONPATH="$checkout" "$python" -m pytest -v -p no:cacheprovider "$@"
