#!/usr/bin/env bash
# Records a CPU profile of N seeds of one scenario (the fixed controller, release, one thread) and prints
# the owner table: the share of samples charged to the controller and its kube client, to the fakes, to
# the world and to the judges, and the ratio of the whole run to its controller side
# (scripts/owner-table.py says how samples are charged).
# Usage: scripts/owner-table.sh [N] [FROM] [SCENARIO] [extra arcsim sweep flags…]
#   defaults: 20 seeds from 2,000,000 of `standard`, 999 samples a second: about 5,000 samples, enough
#   to tell 2× apart by ±0.06 (the ratio's line says its margin); the profile takes seconds and
#   `perf script` about 5 minutes. Needs perf (Debian's linux-perf).
#   PERF_FREQ=299 samples less often (the 1,000-runner world, about 7,500 samples and 500 MB of perf data:
#   `PERF_FREQ=299 scripts/owner-table.sh 1 2000000 standard --runners 1000`).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-20}
from=${2:-2000000}
scenario=${3:-standard}
shift $(( $# < 3 ? $# : 3 ))
arcsim=${ARCSIM:-target/release/arcsim}
[ -n "${ARCSIM:-}" ] || cargo build --release -p arcsim >&2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
perf record -F "${PERF_FREQ:-999}" --call-graph dwarf,65528 -o "$out/perf.data" -- \
  "$arcsim" sweep --scenario "$scenario" --variant fixed --from "$from" --count "$n" --jobs 1 "$@" >/dev/null 2>"$out/record.log" \
  || { cat "$out/record.log" >&2; exit 1; }
perf script -i "$out/perf.data" -F comm,tid,ip,sym 2>/dev/null | python3 scripts/owner-table.py
