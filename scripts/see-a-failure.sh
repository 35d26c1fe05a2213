#!/usr/bin/env bash
# Issue 18's browser checks, outside CI (CI installs no browser and no npm package):
#   1. `arcsim run --html/--mermaid` on the failing run the issue names, into target/see-a-failure/;
#   2. headless Chromium loads the page: its script runs to the end with no page or console error,
#      draws the lanes and marks the violation (screenshot timeline.png);
#   3. Mermaid itself (npm's `mermaid`, its browser bundle run in Chromium, offline) parses the
#      diagram as a sequenceDiagram and draws every message, note and participant (diagram.png).
# Installs what is missing: Debian's `chromium` (apt-get, as root) and npm's `mermaid` into
# target/see-a-failure/npm. Set CHROMIUM or MERMAID_JS to use others.
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/see-a-failure
mkdir -p "$out"

chromium="${CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
  echo "== installing chromium (Debian package)"
  apt-get update && apt-get install -y chromium
fi
if [ -z "${MERMAID_JS:-}" ] && [ ! -f "$out/npm/node_modules/mermaid/dist/mermaid.min.js" ]; then
  echo "== installing mermaid (npm package) into $out/npm"
  mkdir -p "$out/npm"
  (cd "$out/npm" && { [ -f package.json ] || npm init -y >/dev/null; } && npm install --no-audit --no-fund mermaid@12)
fi

echo "== arcsim run --html --mermaid (the run fails: that is the point)"
cargo run -q -p arcsim -- run --scenario assign-during-delete \
  --variant bug-stale-removal-snapshot --seed 3 --html "$out/t.html" --mermaid "$out/t.mmd" >"$out/run.txt" || true
head -n 30 "$out/run.txt"
ls -l "$out/t.html" "$out/t.mmd"

echo "== headless Chromium on the file arcsim wrote"
"$chromium" --headless --no-sandbox --disable-gpu --no-first-run --window-size=1600,1000 --user-data-dir="$out/profile-cli" \
  --virtual-time-budget=10000 --enable-logging=stderr --v=0 --dump-dom "file://$PWD/$out/t.html" \
  >"$out/t.dom.html" 2>"$out/t.console.txt"
body=$(grep -o '<body[^>]*>' "$out/t.dom.html" | head -n 1)
echo "$body"
case "$body" in *'data-ready="true"'*'data-violation-marked="true"'*|*'data-violation-marked="true"'*'data-ready="true"'*) ;; *)
  echo "the page did not finish or did not mark the violation" >&2; exit 1 ;; esac
case "$body" in *data-errors*) echo "page errors: $body" >&2; exit 1 ;; esac
if grep CONSOLE "$out/t.console.txt" | grep -i error; then echo "console errors" >&2; exit 1; fi

echo "== headless Chromium: the page and the diagram (cargo test, ignored in CI)"
CHROMIUM="$chromium" cargo test -p arcsim --test main see_a_failure::browser -- --ignored
echo "== ok: $out/timeline.png and $out/diagram.png"
