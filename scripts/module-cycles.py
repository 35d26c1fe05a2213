#!/usr/bin/env python3
"""Lists import cycles between sibling modules of a crate, of any length (`a -> b -> a`, or
`oracles -> scenarios -> scenario -> oracles`).

Usage: scripts/module-cycles.py controller/src
A module is a file `a/b.rs` or a directory `a/b/` (with its `mod.rs`); an edge runs from a module to
every sibling whose items it imports (`use crate::..`, `use super::..`, `crate::x::y` paths in code).
A module's own children are part of it. Test code is left out: an item under `#[cfg(test)]` (a
`mod tests { .. }` block, a `use`, a function) and every file of a module declared under it.
Prints each cycle (a strongly connected set of siblings, with the edges that tie it) and exits 1 if
there is one. `--self-test` checks the checker on small trees: it must find a three-module cycle tied
by brace imports and code after a test module, and stay quiet on the same tree once only test code
closes the loop.
"""
import os
import re
import sys

CFG_TEST = re.compile(r"#\[cfg\(test\)\]")
TEST_MOD_DECL = re.compile(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;")


def module_of(root, path):
    rel = os.path.relpath(path, root)[:-3]
    parts = rel.split(os.sep)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def item_end(text, start):
    """Where the item starting at `start` ends: after its `;` or its balanced `{ .. }` block,
    whichever comes first (string and char literals are not parsed; braces in them are rare here)."""
    depth = 0
    i = start
    while i < len(text):
        c = text[i]
        if c == ";" and depth == 0:
            return i + 1
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def without_test_items(text):
    """The text with every item under `#[cfg(test)]` cut out."""
    out, pos = [], 0
    for m in CFG_TEST.finditer(text):
        if m.start() < pos:
            continue
        out.append(text[pos:m.start()])
        pos = item_end(text, m.end())
    out.append(text[pos:])
    return "".join(out)


def strip_comments(text):
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))


def use_tree_paths(text, start):
    """The paths a brace group `{a, b::c, d::{e, f}}` starting at `start` (its `{`) names, as lists
    of segments, and where the group ends."""
    paths, prefix, i = [], [], start + 1
    while i < len(text):
        m = re.match(r"\s*(\w+)", text[i:])
        if text[i] == "}":
            if prefix:
                paths.append(prefix)
            return paths, i + 1
        if text[i] == ",":
            if prefix:
                paths.append(prefix)
            prefix, i = [], i + 1
        elif text.startswith("::{", i):
            inner, i = use_tree_paths(text, i + 2)
            paths.extend(prefix + p for p in inner)
            prefix = []
        elif text.startswith("::", i):
            i += 2
        elif m:
            prefix.append(m.group(1))
            i += m.end()
        else:
            i += 1
    return paths, i


def named_paths(text):
    """Every `crate::`, `super::` or `self::` path in the text, brace groups of `use` spread out:
    `use super::{a, b::c}` names `super::a` and `super::b::c`."""
    for m in re.finditer(r"\b(crate|super|self)((?:::\w+)*)(::\{)?", text):
        head = [m.group(1)] + m.group(2).split("::")[1:]
        if m.group(3):
            inner, _ = use_tree_paths(text, m.end() - 1)
            for rest in inner:
                yield head + rest
        elif len(head) > 1:
            yield head


def refs(text, mod):
    found = set()
    for path in named_paths(text):
        head, tail = path[0], path[1:]
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


def test_modules(mods, texts):
    """Modules declared under `#[cfg(test)]` (`#[cfg(test)] mod fixtures;`): test code, like their
    children."""
    tests = set()
    for path, mod in mods.items():
        # a file `a/b.rs` declares its children under `a/b/`, as `a/b/mod.rs` does
        for m in TEST_MOD_DECL.finditer(texts[path]):
            tests.add(mod + (m.group(1),))
    return tests


def is_under(mod, parents):
    return any(mod[: len(p)] == p for p in parents)


def sibling_edges(mods, texts):
    """Edges between siblings: `a/x -> b/y` counts as `a -> b` under their common parent."""
    known = set(mods.values())
    edges = {}
    for path, mod in mods.items():
        for target in refs(texts[path], mod):
            while target and target not in known:
                target = target[:-1]
            if not target or target == mod:
                continue
            i = 0
            while i < min(len(mod), len(target)) and mod[i] == target[i]:
                i += 1
            if i == len(mod) or i == len(target):
                continue  # parent/child: one contains the other
            a, b = mod[: i + 1], target[: i + 1]
            edges.setdefault(a, {}).setdefault(b, set()).add(os.path.basename(path))
    return edges


def strongly_connected(edges):
    """Tarjan's strongly connected components of the graph, those with more than one module."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    nodes = sorted(set(edges) | {b for outs in edges.values() for b in outs})

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return sorted(out)


def main(root):
    mods, texts = {}, {}
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(".rs"):
                p = os.path.join(d, f)
                mods[p] = module_of(root, p)
                texts[p] = strip_comments(open(p).read())
    tests = test_modules(mods, texts)
    mods = {p: m for p, m in mods.items() if not is_under(m, tests)}
    texts = {p: without_test_items(texts[p]) for p in mods}
    edges = sibling_edges(mods, texts)
    cycles = strongly_connected(edges)
    name = lambda m: "::".join(m) or "crate"
    for component in cycles:
        print(f"cycle: {' , '.join(name(m) for m in component)}")
        members = set(component)
        for a in component:
            for b, files in sorted(edges.get(a, {}).items()):
                if b in members:
                    print(f"  {name(a)} -> {name(b)}  (in {', '.join(sorted(files))})")
    return 1 if cycles else 0


def self_test():
    """The checker on trees with known answers; exits 1 if it misses a cycle or reports a false one."""
    import contextlib
    import io
    import tempfile

    def verdict(files):
        with tempfile.TemporaryDirectory() as root:
            for name, text in files.items():
                os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
                open(os.path.join(root, name), "w").write(text)
            with contextlib.redirect_stdout(io.StringIO()):
                return main(root)

    base = {
        "lib.rs": "mod a;\nmod b;\nmod c;\n",
        "a/mod.rs": "#[cfg(test)]\nmod fixtures;\nuse super::{b::{Thing, other}};\npub fn f() {}\n",
        "a/fixtures.rs": "use crate::c::g;\n",
        "b.rs": "use crate::{c};\npub struct Thing;\n",
    }
    looped = dict(base, **{"c.rs": "pub fn g() { crate::a::f(); }\n"})
    only_tests = dict(base, **{"c.rs": "pub fn g() {}\n#[cfg(test)]\nmod tests { use crate::a::f; }\n"})
    cases = [("a cycle a -> b -> c -> a", looped, 1), ("the loop closed by test code only", only_tests, 0)]
    failed = [name for name, files, want in cases if verdict(files) != want]
    for name in failed:
        print(f"self-test failed: {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "controller/src"))
