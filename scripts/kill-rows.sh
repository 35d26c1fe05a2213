#!/usr/bin/env bash
# Kill rows whose bound is wider than `cargo test` spends (kill_table::CI_SEED_BUDGET): each is swept
# over its whole bound, from seed FROM (default 1), and the sweep fails if the bug survives it.
# Usage: scripts/kill-rows.sh [FROM] [COUNT]   (COUNT caps the seeds per row; CI passes a small one
# as a smoke run, which cannot fail a bound but proves the rows still run).
set -euo pipefail
cd "$(dirname "$0")/.."
from=${1:-1}
cap=${2:-}
arcsim=${ARCSIM:-target/release/arcsim}
[ -x "$arcsim" ] || cargo build --release -p arcsim
# The rows `cargo test` does not sweep whole (BY = script), their empty NEEDS left out (read would
# merge empty tab-separated fields).
"$arcsim" list kill-table --tsv | awk -F'\t' '$8 == "script" {print $1, $2, $3, $4, $5, $6}' |
while read -r variant scenario oracle rate bound median; do
  count=$bound
  if [ -n "$cap" ] && [ "$cap" -lt "$count" ]; then count=$cap; fi
  echo "== $variant in $scenario ($oracle, measured $rate, bound $bound): seeds $from.. ($count)"
  "$arcsim" sweep --scenario "$scenario" --variant "$variant" --from "$from" --count "$count"
done
