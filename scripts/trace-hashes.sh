#!/usr/bin/env bash
# Prints the trace hash (and each twin's) of a fixed set of runs: every scenario's fixed controller on
# seeds 1-3 and every kill row's bug variant on seeds 1-2, one line a run. A change that must not move a
# trace (a cost cut) leaves this output unchanged: run it before and after and diff.
# Usage: scripts/trace-hashes.sh [ARCSIM]   (default target/release/arcsim, built if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
arcsim=${1:-target/release/arcsim}
[ -x "$arcsim" ] || cargo build --release -p arcsim >&2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
line() {
  "$arcsim" run --scenario "$1" --variant "$2" --seed "$3" --json "$out/v.json" >/dev/null 2>&1 || true
  python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); print(sys.argv[2], sys.argv[3], sys.argv[4], "%016x" % v["trace_hash"], " ".join("%s=%016x" % kv for kv in sorted(v["twin_hashes"].items())))' \
    "$out/v.json" "$1" "$2" "$3"
  rm -f "$out/v.json"
}
scenarios=$("$arcsim" list scenarios --tsv | awk -F'\t' '$2 == "scenario" {print $1}')
for scenario in $scenarios; do
  for seed in 1 2 3; do line "$scenario" fixed "$seed"; done
done
"$arcsim" list kill-table --tsv | tail -n +2 | awk -F'\t' '{print $1, $2}' | sort -u | while read -r variant scenario; do
  for seed in 1 2; do line "$scenario" "$variant" "$seed"; done
done
