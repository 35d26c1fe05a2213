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
[ -x "$arcsim" ] || cargo build --release -p arc-scenarios --bin arcsim
budget=$("$arcsim" list | sed -n 's/^kill table .*bounds over \([0-9]*\) seeds.*/\1/p')
"$arcsim" list | sed -n '/^kill table/,$p' | tail -n +2 | while read -r variant scenario oracle rate bound median; do
  [ "$bound" -gt "$budget" ] || continue
  count=$bound
  if [ -n "$cap" ] && [ "$cap" -lt "$count" ]; then count=$cap; fi
  echo "== $variant in $scenario ($oracle, measured $rate, bound $bound): seeds $from.. ($count)"
  "$arcsim" sweep --scenario "$scenario" --variant "$variant" --from "$from" --count "$count"
done
