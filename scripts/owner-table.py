#!/usr/bin/env python3
"""Charges each sample of a `perf script` dump (stdin) to the owner of its innermost known frame and
prints the owner table: how a seed's CPU splits between the code under test (the controller and its
real kube client) and the harness (the fakes, the world, the judges), and the ratio of the whole run to
the controller side.

A frame is known when its symbol starts with a project crate's path; frames of shared libraries
(tokio, hyper, serde, k8s-openapi, std, and the kube client) are charged to the innermost known frame
above them, so serde work the controller's kube client asks for is the controller's, and the kube
client the kubelet lists and watches pods with is the kubelet's. A sample in
tokio's runtime (scheduler, timers, task harness) under the runner that started the runtime is the
runtime's: it drives every task alike. A sample with no known frame is `elsewhere`; stacks are recorded deep enough (64 KB
of stack a sample) that serde's recursion into k8s-openapi types reaches its caller.

Usage: perf script -F comm,tid,ip,sym | scripts/owner-table.py
(scripts/owner-table.sh records and pipes it.)
"""

import re
import sys
from collections import Counter

# (owner, side, crate path), first match wins; matched against the path a frame's symbol starts with
# (`arc_sim::kubelet::pod::…`, or `<arc_sim::… as Trait>::…`), never against generic arguments.
OWNERS = [
    ("the controller (arc_controller)", "controller", "arc_controller::"),
    ("the fake API server (arc_sim::apiserver)", "fakes", "arc_sim::apiserver::"),
    ("the fake GitHub (arc_sim::github)", "fakes", "arc_sim::github::"),
    ("the kubelet (arc_sim::kubelet)", "fakes", "arc_sim::kubelet::"),
    ("the network (arc_sim::net)", "fakes", "arc_sim::net::"),
    ("the world and its record (arc_sim)", "world", "arc_sim::"),
    ("the judges: oracles, probes, the catalog, the runner (arc_judging, arc_scenarios, arcsim)", "judges", "arc_judging::"),
    ("the judges: oracles, probes, the catalog, the runner (arc_judging, arc_scenarios, arcsim)", "judges", "arc_scenarios::"),
    ("the judges: oracles, probes, the catalog, the runner (arc_judging, arc_scenarios, arcsim)", "judges", "arcsim::"),
]

# The kube client is a library like serde: its frames are charged to the project frame that called
# it. Called by the controller it is the controller's own client (`its kube client`, the controller's
# side); called by a fake (the kubelet lists, watches and writes pods through one) it is that fake's.
KUBE = ("kube_client::", "kube_runtime::", "kube_core::", "kube::")
KUBE_OF_CONTROLLER = ("its kube client (kube, kube-runtime)", "controller")
# kube-runtime's watcher streams run as tasks of their own, with no project frame above them; only the
# controller uses kube-runtime (the fakes use the plain client), so they are its client's.
KUBE_RUNTIME = "kube_runtime::"
# A watch event decoded with no caller on the stack (the unwinder stops inside the stream's task): the
# kubelet's informer, the only watch a fake opens, decodes its events as `WatchedPod`, a
# project frame, so a watch event with none decodes a typed object for the controller's watchers (the
# samples show them building PodTemplateSpecs and ObjectMetas: its custom resources and pods).
KUBE_WATCH_EVENT = "kube_core::watch::"
# Any other kube client frame with neither a caller nor kube-runtime on the stack: counted on no side's
# favour, as the harness's.
KUBE_UNCALLED = ("the kube client, no caller on the stack", "world")

# Shared helpers charged, like a library, to the frame that called them.
HELPERS = ("arc_sim::json_at::", "arc_sim::fnv::", "arc_sim::compact_json::")


# tokio's scheduler, timer wheel and task harness: a sample in them whose first known frame is the
# runner that started the runtime is the runtime driving every task (the controller's and the fakes'
# alike), not the runner's own work.
RUNTIME = "tokio::runtime::"
DRIVER = "arcsim::runner::"
RUNTIME_OWNER = ("the runtime (tokio's scheduler, timers and task harness)", "runtime")
ELSEWHERE = ("elsewhere (the kernel, no known frame)", "elsewhere")


def path_of(symbol):
    """The path a frame's symbol starts with: `<a::b as c::D>::e` and `a::b::e` both give `a::b…`."""
    return symbol.lstrip("<")


def owner_of(stack):
    """The (owner, side) of a sample's stack, innermost frame first."""
    in_runtime, in_kube, in_watcher = False, False, False
    for symbol in stack:
        path = path_of(symbol)
        in_runtime = in_runtime or path.startswith(RUNTIME)
        if path.startswith(KUBE):
            in_kube = True
            in_watcher = in_watcher or path.startswith((KUBE_RUNTIME, KUBE_WATCH_EVENT))
            continue
        if path.startswith(HELPERS):
            continue
        if in_runtime and path.startswith(DRIVER):
            break
        for owner, side, prefix in OWNERS:
            if path.startswith(prefix):
                return KUBE_OF_CONTROLLER if in_kube and side == "controller" else (owner, side)
    if in_watcher:
        return KUBE_OF_CONTROLLER
    if in_kube:
        return KUBE_UNCALLED
    return RUNTIME_OWNER if in_runtime else ELSEWHERE


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
    rows = [OWNERS[0][0], KUBE_OF_CONTROLLER[0], KUBE_UNCALLED[0]] + [o for o, _, _ in OWNERS[1:]]
    rows = list(dict.fromkeys(rows + [RUNTIME_OWNER[0], ELSEWHERE[0]]))  # the judges own three crates: one row
    for owner in rows:
        if owners[owner]:
            print(f"| {owner} | {100 * owners[owner] / total:.1f}% |")
    print()
    print("| side | share |")
    print("|---|---|")
    for side in ["controller", "fakes", "world", "judges", "runtime", "elsewhere"]:
        print(f"| {side} | {100 * sides[side] / total:.1f}% |")
    controller = sides["controller"]
    if controller:
        print(f"\nthe whole run costs {total / controller:.2f}x its controller side "
              f"(\u00b1{sampling_margin(controller, total):.2f} from sampling alone, 95%)")


def sampling_margin(controller, total):
    """The 95% margin of the ratio total/controller that the sample count alone leaves: the controller's
    share p read from n samples is off by about sqrt(p(1-p)/n), and the ratio 1/p by that over p
    squared. Runs of one binary spread further (the machine, where fresh pages are zeroed), so two
    builds are compared by profiling them in turn, more than once."""
    p = controller / total
    return 1.96 * (p * (1 - p) / total) ** 0.5 / p**2


if __name__ == "__main__":
    main()
