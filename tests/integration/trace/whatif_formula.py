#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Checks `sluice-trace whatif`'s output against the formulas of docs/TRACE.md (What if), recomputed
# here from the inputs it printed: whatif_formula.py OUTPUT T B C L X R I M [F [P [PD [E [H [c [S]]]]]]].
# Defaults as in the tool: F, one node's file-system client, I; P, a node's commit pass
# (--commit-bw), 10e9; PD, the direct path's pass, P; E, gathering from other nodes, I; H and c,
# the commit's messages (per commit of several ranks, per rank), 0.001 and 1e-6; S, the CPU share
# the run got, 1: P, PD, M and E are given at a whole CPU and multiplied by it (E at most I), H and
# c divided. A model printed with a write-back client (--write-back) writes the pass, then the flush:
# W = D / min(I, P) + max(N b / (c B), D / F), likewise file per process's data. Exit 0 when every
# row matches, 1 with the first row that does not.
import math
import re
import sys

text = open(sys.argv[1]).read()
T, B, C, L, X, R, I, M = map(float, sys.argv[2:10])
F = float(sys.argv[10]) if len(sys.argv) > 10 else I
P = float(sys.argv[11]) if len(sys.argv) > 11 else 10e9
PD = float(sys.argv[12]) if len(sys.argv) > 12 else P
E = float(sys.argv[13]) if len(sys.argv) > 13 else I
H = float(sys.argv[14]) if len(sys.argv) > 14 else 0.001
c = float(sys.argv[15]) if len(sys.argv) > 15 else 1e-6
S = float(sys.argv[16]) if len(sys.argv) > 16 else 1
P, PD, M, E, H, c = P * S, PD * S, M * S, min(I, E * S), H / S, c / S


def num(pattern):
    m = re.search(pattern, text)
    if not m:
        sys.exit("whatif_formula.py: no %r in the output" % pattern)
    return float(m.group(1))


b = num(r"members of (\d+) bytes on average")
mc = num(r"container commit (\d+) metadata operations")
mf = num(r"file per process ([0-9.]+) per file")
x = num(r"share ([0-9.]+) to another host's aggregator")
s = num(r"share ([0-9.]+) kept by the writer")
Q = num(r"rounds of (\d+) bytes")
direct = re.search(r"path (direct|two-phase);", text)
if not direct:
    sys.exit("whatif_formula.py: no path in the output")
direct = direct.group(1) == "direct"
out = min(I, F, PD if direct else P)  # what a node moves to the file system per second
back = "write-back client" in text
pss = min(I, PD if direct else P)  # the pass into a write-back client's cache


def write(node, target, direct_pass):
    if back:
        return node / (pss if direct_pass else min(I, P)) + max(target / B, node / F)
    return max(target / B, node / (out if direct_pass else min(I, F, P)))

row = r"^\s*(\d+)" + r"\s+([0-9.]+)" * 8 + r"\s+([0-9.]+)x$"
rows = re.findall(row, text, re.M)
if [r[0] for r in rows][:3] != ["1000", "10000", "100000"]:
    sys.exit("whatif_formula.py: rows %r" % rows)
for r in rows:
    n = float(r[0])
    fm = L + n * mf / X
    fd = write(min(n, R) * b, math.ceil(n / T) * b, False)
    cm = mc * L + (H + c * n if n > 1 else 0)
    D = min(n, R) * b
    G = D * (max(0, 1 - x - s) / M + x / E)
    W = write(D, n * b / min(C, T), True)
    k = max(1, math.ceil(D / Q))
    cd = min(k, 2) / k * (G + W) + max(k - 2, 0) / k * max(G, W)
    want = [fm + fd, fm, fd, cm + cd, cm, G, W, cd, (fm + fd) / (cm + cd)]
    got = list(map(float, r[1:]))
    close = [abs(g - w) <= 1e-6 + 1e-4 * w for g, w in zip(got[:8], want[:8])]
    if not all(close) or abs(got[8] - want[8]) > 0.006 + 1e-4 * want[8]:  # speed-up: 2 decimals
        sys.exit("whatif_formula.py: row %s: got %r, the formulas give %r" % (r[0], got, want))
print("ok: %d rows match the formulas (b=%.0f, m_c=%.0f, m_f=%.2f, x=%.4f, s=%.4f, Q=%.0f, %s%s)"
      % (len(rows), b, mc, mf, x, s, Q, "direct" if direct else "two-phase", ", write-back" if back else ""))
