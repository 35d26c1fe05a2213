#!/usr/bin/env bash
# One nightly sweep on a Kubernetes cluster: the shard Job over tonight's seeds, then the merge Job,
# whose log is the report and whose status is the sweep's; beside them the slow test tier's Job. Run it
# from cron or a CI schedule with a kubeconfig for the cluster; it exits 0 exactly when the merged sweep
# and the slow tier both passed.
# Usage: deploy/sweep/nightly.sh [FROM] [COUNT]   (FROM: a new range each day by default; COUNT: 10000)
set -euo pipefail
cd "$(dirname "$0")"
from=${1:-$(( $(date -u +%s) / 86400 * 100000 ))}
count=${2:-10000}
ns=arcsim-sweep

# Waits for Job $1 to finish: status 0 when it completed, 1 when it failed.
finished() {
  while true; do
    kubectl wait -n "$ns" "job/$1" --for=condition=complete --timeout=0 >/dev/null 2>&1 && return 0
    kubectl wait -n "$ns" "job/$1" --for=condition=failed --timeout=0 >/dev/null 2>&1 && return 1
    sleep 30
  done
}

kubectl apply -f namespace.yaml -f results-pvc.yaml
kubectl delete job -n "$ns" arcsim-sweep arcsim-merge arcsim-slow-tests --ignore-not-found --wait
kubectl create -f slow-tests-job.yaml
sed -e "s/--from=[0-9]*/--from=$from/" -e "s/--count=[0-9]*/--count=$count/" sweep-job.yaml | kubectl create -f -
if ! finished arcsim-sweep; then
  echo "a shard failed past its retries: kubectl describe -n $ns job/arcsim-sweep" >&2
  exit 2
fi
kubectl create -f merge-job.yaml
status=0
finished arcsim-merge || status=1
kubectl logs -n "$ns" job/arcsim-merge
finished arcsim-slow-tests || status=1
kubectl logs -n "$ns" job/arcsim-slow-tests | tail -n 40
exit "$status"
