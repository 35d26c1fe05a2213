#!/usr/bin/env python3
"""Shrinks a failing seed of every kill-table row (or those matching --only) and prints one line a row.

For each row of `arcsim list`'s kill table: the first seed from --from whose run fails the row's
oracle (searched up to the row's bound; a row whose bug survives its bound is reported, not shrunk),
then `arcsim shrink --oracle ORACLE --budget B`, its capsule written under --out. The summary gives
the seed, the size before and after (steps, jobs, simulated seconds), the reruns and how far the
1-minimality check got: `steps+jobs` (removing any one step or job passes), `steps` (every step
checked, the budget ran out on the jobs) or `unchecked`. Rows run --jobs at a time, cheapest worlds
first. Exit status 1 if any row found no failing seed within its bound or did not reach `steps`.

Usage: scripts/shrink-rows.py [--arcsim PATH] [--from SEED] [--jobs N] [--budget B] [--only TEXT]
                              [--out DIR]
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

# Worlds whose runs cost the most (simulated hours, or runs that never settle) go last.
SLOW_WORLDS = ("token-refresh-recreation", "legacy-steady-state", "legacy-standard")


def kill_rows(arcsim):
    """(variant, scenario, oracle, bound) of every kill-table row."""
    listing = subprocess.run([arcsim, "list", "kill-table", "--tsv"], check=True, capture_output=True,
                             text=True).stdout
    rows = []
    for line in listing.splitlines()[1:]:
        variant, scenario, oracle, _kills, bound = line.split("\t")[:5]
        rows.append((variant, scenario, oracle, int(bound)))
    return rows


def first_failing_seed(arcsim, variant, scenario, oracle, start, bound):
    """The first seed from `start` (at most `bound` of them) whose run fails `oracle`, or None."""
    with tempfile.TemporaryDirectory() as tmp:
        verdict_path = os.path.join(tmp, "verdict.json")
        for seed in range(start, start + bound):
            cmd = [arcsim, "run", "--scenario", scenario, "--variant", variant, "--seed", str(seed),
                   "--json", verdict_path]
            if os.path.exists(verdict_path):
                os.remove(verdict_path)
            done = subprocess.run(cmd, capture_output=True, text=True)
            if not os.path.exists(verdict_path):
                sys.exit(f"`{' '.join(cmd)}` wrote no verdict: {done.stderr.strip()}")
            with open(verdict_path) as f:
                verdict = json.load(f)
            if any(v["oracle"] == oracle for v in verdict["violations"]):
                return seed
    return None


def size(line):
    """(steps, jobs, simulated s) of a shrink report's before/after line."""
    m = re.search(r"(\d+) steps, (\d+) jobs, (\d+) s simulated", line)
    return tuple(int(x) for x in m.groups())


def shrink_row(args, row):
    variant, scenario, oracle, bound = row
    seed = first_failing_seed(args.arcsim, variant, scenario, oracle, args.start, bound)
    if seed is None:
        return row, None, f"no seed of {args.start}.. ({bound}, the bound) fails {oracle}"
    out = os.path.join(args.out, f"capsule-{scenario}-{variant}-{oracle}-{seed}.json")
    cmd = [args.arcsim, "shrink", "--scenario", scenario, "--variant", variant, "--seed", str(seed),
           "--oracle", oracle, "--budget", str(args.budget), "--out", out]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        return row, seed, f"shrink failed: {done.stderr.strip() or done.stdout.strip()}"
    report = done.stdout
    reruns = int(re.search(r"in (\d+) reruns", report).group(1))
    before = size(re.search(r"before: .*", report).group(0))
    after = size(re.search(r"after: .*", report).group(0))
    if "1-minimal: removing any one remaining step or job" in report:
        minimal = "steps+jobs"
    elif "1-minimal in its steps" in report:
        minimal = "steps"
    else:
        minimal = "unchecked"
    kept = "; ".join(line.strip()[len("kept: "):] for line in report.splitlines() if line.strip().startswith("kept: "))
    return row, seed, (before, after, reruns, minimal, kept or "nothing")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arcsim", default="target/release/arcsim")
    parser.add_argument("--from", dest="start", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--only", default="", help="shrink only rows whose 'variant scenario oracle' contains this")
    parser.add_argument("--out", default="target/shrink-rows")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows = [r for r in kill_rows(args.arcsim) if args.only in " ".join(map(str, r[:3]))]
    rows.sort(key=lambda r: r[1] in SLOW_WORLDS)
    bad = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for row, seed, result in pool.map(lambda r: shrink_row(args, r), rows):
            variant, scenario, oracle, _ = row
            if isinstance(result, str):
                bad += 1
                print(f"{variant} {scenario} {oracle}: {result}", flush=True)
                continue
            before, after, reruns, minimal, kept = result
            bad += minimal == "unchecked"
            print(f"{variant} {scenario} {oracle} seed {seed}: {before} -> {after} in {reruns} reruns, "
                  f"1-minimal: {minimal}; kept: {kept}", flush=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
