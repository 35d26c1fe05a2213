#!/usr/bin/env python3
"""Lists import cycles between sibling modules of a crate (e.g. `github::admin` <-> `github::client`).

Usage: scripts/module-cycles.py controller/src
A module is a file `a/b.rs` or a directory `a/b/` (with its `mod.rs`); an edge runs from a module to
every sibling whose items it imports (`use crate::..`, `use super::..`, `crate::x::y` paths in code).
A module's own children are part of it. Prints each cycle and exits 1 if there is one.
"""
import os
import re
import sys


def module_of(root, path):
    rel = os.path.relpath(path, root)[:-3]
    parts = rel.split(os.sep)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def refs(root, path, mod):
    text = open(path).read()
    text = text.split("#[cfg(test)]")[0]
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    found = set()
    for m in re.finditer(r"\b(crate|super|self)((?:::\w+)+)", text):
        head, tail = m.group(1), m.group(2).split("::")[1:]
        base = list(mod)
        if head == "crate":
            target = tail
        elif head == "self":
            target = base + tail
        else:
            up = base[:-1]
            rest = tail
            while rest and rest[0] == "super":
                up = up[:-1]
                rest = rest[1:]
            target = up + rest
        found.add(tuple(target))
    return found


def main(root):
    mods = {}
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(".rs"):
                p = os.path.join(d, f)
                mods[p] = module_of(root, p)
    known = set(mods.values())
    edges = {}
    for p, mod in mods.items():
        for target in refs(root, p, mod):
            # longest known module prefix of the path
            while target and target not in known:
                target = target[:-1]
            if not target or target == mod:
                continue
            # lift both to siblings under their common parent
            i = 0
            while i < min(len(mod), len(target)) and mod[i] == target[i]:
                i += 1
            if i == len(mod) or i == len(target):
                continue  # parent/child: one contains the other
            a, b = mod[: i + 1], target[: i + 1]
            edges.setdefault(a, set()).add(b)
    cycles = []
    for a, outs in sorted(edges.items()):
        for b in sorted(outs):
            if a < b and a in edges.get(b, ()):
                cycles.append((a, b))
    for a, b in cycles:
        print(f"cycle: {'::'.join(a)} <-> {'::'.join(b)}")
    return 1 if cycles else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "controller/src"))
