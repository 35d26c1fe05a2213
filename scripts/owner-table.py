#!/usr/bin/env python3
"""Charges each sample of a `perf script` dump (stdin) to the owner of its innermost known frame and
prints the owner table: how a seed's CPU splits between the code under test (the controller and its
real kube client) and the harness (the fakes, the world, the judges), and the ratio of the whole run to
the controller side.

A frame is known when its symbol names a crate below; frames of shared libraries (tokio, hyper, serde,
k8s-openapi, std) are charged to the innermost known frame above them, so serde work the kube client
asks for is the controller's and serde work the fake API server asks for is the fakes'. A sample in
tokio's runtime (scheduler, timers, task harness) under the runner that started the runtime is the
runtime's: it drives every task alike. A sample with no known frame is `elsewhere`; stacks are recorded deep enough (64 KB
of stack a sample) that serde's recursion into k8s-openapi types reaches its caller.

Usage: perf script -F comm,tid,ip,sym | scripts/owner-table.py
(scripts/owner-table.sh records and pipes it.)
"""

import re
import sys
from collections import Counter

# (owner, side, symbol pattern), first match wins; matched against a demangled symbol.
OWNERS = [
    ("the controller (arc_controller)", "controller", r"\barc_controller::"),
    ("its kube client (kube, kube-runtime)", "controller", r"\bkube_(client|runtime|core)::|\bkube::"),
    ("the fake API server (arc_sim::apiserver)", "fakes", r"\barc_sim::apiserver::"),
    ("the fake GitHub (arc_sim::github)", "fakes", r"\barc_sim::github::"),
    ("the kubelet (arc_sim::kubelet)", "fakes", r"\barc_sim::kubelet::"),
    ("the network (arc_sim::net)", "fakes", r"\barc_sim::net::"),
    ("the world and its record (arc_sim)", "world", r"\barc_sim::"),
    ("the judges: oracles, probes, runner (arc_scenarios)", "judges", r"\barc_scenarios::"),
]
COMPILED = [(owner, side, re.compile(pattern)) for owner, side, pattern in OWNERS]

# Shared helpers charged, like a library, to the frame that called them.
HELPERS = re.compile(r"\barc_sim::(json_at|fnv)::")


# tokio's scheduler, timer wheel and task harness: a sample in them whose first known frame is the
# runner that started the runtime is the runtime driving every task (the controller's and the fakes'
# alike), not the runner's own work.
RUNTIME = re.compile(r"\btokio::runtime::")
DRIVER = re.compile(r"\barc_scenarios::runner::")


def owner_of(stack):
    """The (owner, side) of a sample's stack, innermost frame first."""
    in_runtime = False
    for symbol in stack:
        in_runtime = in_runtime or bool(RUNTIME.search(symbol))
        if in_runtime and DRIVER.search(symbol):
            return "the runtime (tokio's scheduler, timers and task harness)", "runtime"
        if HELPERS.search(symbol):
            continue
        for owner, side, pattern in COMPILED:
            if pattern.search(symbol):
                return owner, side
    return "elsewhere (the kernel, no known frame)", "elsewhere"


def samples(lines):
    """Each sample's stack (innermost first) from `perf script` output: a header line, then one
    indented frame per line, then a blank line."""
    stack, in_sample = [], False
    for line in lines:
        if not line.strip():
            if in_sample:
                yield stack
            stack, in_sample = [], False
        elif line[0] in " \t":
            parts = line.strip().split(None, 1)
            stack.append(parts[1] if len(parts) > 1 else "")
        else:
            in_sample = True
    if in_sample:
        yield stack


def main():
    owners, sides = Counter(), Counter()
    total = 0
    for stack in samples(sys.stdin):
        owner, side = owner_of(stack)
        owners[owner] += 1
        sides[side] += 1
        total += 1
    if total == 0:
        sys.exit("no samples: is perf's output piped in?")
    print(f"{total} samples")
    print("| owner | share |")
    print("|---|---|")
    extra = [("the runtime (tokio's scheduler, timers and task harness)", "", ""),
             ("elsewhere (the kernel, no known frame)", "", "")]
    for owner, _, _ in OWNERS + extra:
        if owners[owner]:
            print(f"| {owner} | {100 * owners[owner] / total:.1f}% |")
    print()
    print("| side | share |")
    print("|---|---|")
    for side in ["controller", "fakes", "world", "judges", "runtime", "elsewhere"]:
        print(f"| {side} | {100 * sides[side] / total:.1f}% |")
    controller = sides["controller"]
    if controller:
        print(f"\nthe whole run costs {total / controller:.2f}x its controller side")


if __name__ == "__main__":
    main()
