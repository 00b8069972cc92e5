#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fails on a new loop between the rooms of the runtime (runtime/<part>, runtime/ckpt/<part>, runtime/cl/<part>,
# shim): an #include of another room's header is an edge, and the rooms must form no cycle once
# the edges of the loops known today (listed below, to be broken: docs/ARCHITECTURE.md) are set
# aside. A listed edge that no longer exists fails too, so that the list only shrinks.
# Run by integration.build_layers, also on a tree made to fail.
#   check-layers.sh [SOURCE_DIR]
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
# "from -> to": the edges that close today's loops.
known='
'
exec python3 - "$root" "$known" <<'PY'
import collections, os, re, sys

root, known = sys.argv[1], sys.argv[2]
allowed = {tuple(s.strip() for s in l.split("->")) for l in known.strip().splitlines() if "->" in l}

def room(parts):
    if parts[0] in ("ckpt", "cl") and len(parts) > 2:
        return parts[0] + "/" + parts[1]
    return parts[0]

rooms = set()
for d, _, fs in os.walk(os.path.join(root, "runtime")):
    rel = os.path.relpath(d, os.path.join(root, "runtime"))
    if rel != "." and fs:
        rooms.add(room(rel.split("/") + ["x"]))
include = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
edges = collections.defaultdict(list)  # (from, to) -> [file including header]
for top in ("runtime", "shim"):
    for d, _, fs in os.walk(os.path.join(root, top)):
        for f in fs:
            if not f.endswith((".c", ".h", ".def")):
                continue
            path = os.path.join(d, f)
            rel = os.path.relpath(path, root)
            parts = rel.split("/")
            src = room(parts[1:]) if parts[0] == "runtime" else "shim"
            with open(path, errors="replace") as fh:
                for m in include.finditer(fh.read()):
                    hp = m.group(1).split("/")
                    if len(hp) < 2:
                        continue
                    dst = room(hp)
                    if dst in rooms and dst != src:
                        edges[(src, dst)].append(f"{rel} includes {m.group(1)}")

bad = 0
for e in sorted(allowed - set(edges)):
    print(f"check-layers: {e[0]} -> {e[1]} is listed as a known loop but no longer exists: remove it from the list", file=sys.stderr)
    bad = 1
graph = collections.defaultdict(set)
for (a, b) in edges:
    if (a, b) not in allowed:
        graph[a].add(b)
# A cycle in what is left is a new loop: report one path around it.
state = {}
def visit(v, path):
    state[v] = 1
    path.append(v)
    for w in sorted(graph[v]):
        if state.get(w) == 1:
            return path[path.index(w):] + [w]
        if w not in state:
            c = visit(w, path)
            if c:
                return c
    state[v] = 2
    path.pop()
    return None
for v in sorted(list(graph)):
    if v in state:
        continue
    cycle = visit(v, [])
    if cycle:
        print("check-layers: a loop between rooms: " + " -> ".join(cycle), file=sys.stderr)
        for a, b in zip(cycle, cycle[1:]):
            print(f"  {a} -> {b}: {edges[(a, b)][0]}", file=sys.stderr)
        bad = 1
        break
sys.exit(bad)
PY
