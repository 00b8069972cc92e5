#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Projects a checkpoint version's costs to 1k, 10k and 100k ranks from constants measured at
1-128 ranks (bench/commit_scale.sh's tables: counted, not timed). For each quantity it fits
y = a + b*N by least squares over the measured rank counts from 2 up, prints a and b and the
projected values (a flat quantity, one that moved by at most a unit or a quarter of its size over
the measured ranks: the largest value measured), and says whether the quantity is flat in N (per rank), linear (at the home) or
per node (stage files: the stage folder is node-local, so N is the ranks of one node: O(R)).

    bench/scale_projection.py [--ranks-per-node R] [commit_scale.out]   (default R 64)
    bench/commit_scale.sh build 32 > cs.out; bench/scale_projection.py cs.out

Without a file it runs bench/commit_scale.sh on ./build up to 32 ranks first. Prints tables;
never passes or fails. docs/PERFORMANCE.md, "Projection to 100k ranks", has a run."""
import argparse
import re
import subprocess
import sys

TARGETS = (1000, 10000, 100000)
# column of commit_scale.sh's table -> (label, scope): "rank" costs one rank pays, "home" the
# set's home rank, "node" the stage folder of one node
QUANTITIES = [
    ("home_msgs", "messages the home sends per version", "home"),
    ("home_bytes", "bytes the home sends per version", "home"),
    ("rank_msgs", "messages a rank receives per version", "rank"),
    ("rank_bytes", "bytes a rank receives per version", "rank"),
    ("plan_max", "largest message a rank receives (B)", "rank"),
    ("meta_home", "container metadata ops at the home", "home"),
    ("meta_others", "container metadata ops, all other ranks", "job"),
    ("stage_calls", "stage-folder calls of one process", "rank"),
    ("stage_files", "stage-folder entries at once (one node)", "node"),
]
ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)/(\d+)\s+([\d.]+)/(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+\(\s*\d+\)"
                 r"\s+(\S+)\s+(\S+)(?:\s+\S+)?\s*$")  # durable ms, if there: timed, not projected


def tables(text):
    """Each commit_scale.sh table (one per SLUICE_CB_WRITE mode): its title and rows by N."""
    out, title = [], None
    for line in text.splitlines():
        if line.startswith("# SLUICE_CB_WRITE="):
            title = line[2:]
            out.append((title, {}))
            continue
        m = ROW.match(line)
        if m and out:
            g = m.groups()
            num = lambda s: float(s) if s not in ("-", "") else None
            out[-1][1][int(g[0])] = dict(
                home_msgs=float(g[2]), home_bytes=float(g[3]), rank_msgs=float(g[4]), rank_bytes=float(g[5]),
                plan_max=float(g[6]), meta_home=float(g[7]), meta_others=float(g[8]),
                stage_calls=num(g[9]), stage_files=num(g[10]))
    return [t for t in out if t[1]]


def fit(points):
    """Least squares a + b*n over (n, y) points; b = 0 with a single point."""
    pts = [(n, y) for n, y in points if y is not None]
    if not pts:
        return None
    if len(pts) == 1:
        return pts[0][1], 0.0
    mn = sum(n for n, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((n - mn) ** 2 for n, _ in pts)
    b = sum((n - mn) * (y - my) for n, y in pts) / sxx if sxx else 0.0
    return my - b * mn, b


def growth(a, b, nmax, ys):
    """How the quantity grows: flat where it moved by at most one unit over the measured ranks, or
    where N times the slope stays small next to the constant."""
    if max(ys) - min(ys) <= 1.0 or abs(b) * nmax <= 0.25 * max(abs(a), 1.0):
        return "O(1)"
    return "O(N)"


def human(v):
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(v) >= div:
            return "%.3g%s" % (v / div, unit)
    return "%.3g" % v


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks-per-node", type=int, default=64)
    ap.add_argument("table", nargs="?")
    args = ap.parse_args()
    if args.table:
        with open(args.table) as f:
            text = f.read()
    else:
        text = subprocess.run(["bench/commit_scale.sh", "build", "32"], check=True, capture_output=True,
                              text=True).stdout
    found = tables(text)
    if not found:
        print("scale_projection.py: no commit_scale.sh table in the input", file=sys.stderr)
        return 2
    rpn = args.ranks_per_node
    for title, rows in found:
        ns = sorted(n for n in rows if n >= 2)
        print("# %s: fitted on %s ranks; per node: %d ranks" % (title, ", ".join(map(str, ns)), rpn))
        print("%-42s %5s %10s %10s %6s %10s %10s %10s" % ("quantity", "scope", "a", "b (per N)", "growth",
                                                          *("N=%s" % human(t) for t in TARGETS)))
        for key, label, scope in QUANTITIES:
            ab = fit([(n, rows[n][key]) for n in ns])
            if ab is None:
                print("%-42s %5s %10s" % (label, scope, "not measured"))
                continue
            a, b = ab
            ys = [rows[n][key] for n in ns if rows[n][key] is not None]
            grows = growth(a, b, ns[-1], ys)
            # flat: the largest value measured; else the line (the stage folder is the node's: its
            # N is the node's ranks, whatever the job's size)
            proj = [max(ys) if grows == "O(1)" else a + b * (min(t, rpn) if scope == "node" else t)
                    for t in TARGETS]
            if scope == "node" and grows == "O(N)":
                grows = "O(R)"  # ranks of the node, not of the job
            print("%-42s %5s %10.4g %10.4g %6s %10s %10s %10s" % (label, scope, a, b, grows,
                                                                  *(human(max(p, 0.0)) for p in proj)))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
