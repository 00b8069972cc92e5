#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Checks `sluice-trace io`'s multi-level interval advice (docs/REDUNDANCY.md, "Interval advice")
# against the formula computed here from the trace's own events, read from `sluice-trace dump`:
#   C staged  = mean over checkpoints k of the slowest rank's k-th open-for-writing to close
#               span of its member (CKPT_OPEN with a write access mode, then CKPT_CLOSE);
#   C durable = mean of the COMMIT_DURABLE durations;
#   lambda    = sum of 1/MTBF of the classes each level recovers (process -> staged, node and
#               system -> durable: no protected level);
#   x_l = sqrt(lambda_l / 2 C_l), pooled while x_staged < x_durable; overhead sum sqrt(2 lambda C);
#   M = floor or ceiling of x_staged / x_durable, whichever gives the least sqrt(2 A B),
#   A = C1 + C2/M, B = l1 + l2 M, at the interval sqrt(2A/B).
# usage: io_level_advice.py DUMP IO_OUTPUT MTBF_PROCESS MTBF_NODE MTBF_SYSTEM (seconds, 0: none)
import math, re, sys

dump, out = open(sys.argv[1]).read().splitlines(), open(sys.argv[2]).read()
mtbf = {k: float(v) for k, v in zip(("process", "node", "system"), sys.argv[3:6])}

spans, pending, drains = {}, {}, []
ev = re.compile(r"^rank (\d+) pid \d+ tid (\d+) \+([0-9.]+) (\w+)(.*)$")
for line in dump:
    m = ev.match(line)
    if not m:
        continue
    rank, tid, t, kind, rest = int(m[1]), m[2], float(m[3]), m[4], m[5]
    if kind == "CKPT_OPEN":
        flags = int(re.search(r"flags=(\d+)", rest)[1])
        fd = int(re.search(r"fd=(-?\d+)", rest)[1])
        if flags & 3 and fd >= 0:
            pending.setdefault((rank, tid), []).append(t)
    elif kind == "CKPT_CLOSE" and pending.get((rank, tid)):
        spans.setdefault(rank, []).append(t - pending[(rank, tid)].pop(0))
    elif kind == "COMMIT_DURABLE":
        drains.append(int(re.search(r"dur=(\d+)ns", rest)[1]) / 1e9)
steps = max(len(s) for s in spans.values())
c1 = sum(max(s[k] for s in spans.values() if k < len(s)) for k in range(steps)) / steps
c2 = sum(drains) / len(drains)
l1 = 1 / mtbf["process"] if mtbf["process"] else 0.0
l2 = sum(1 / mtbf[k] for k in ("node", "system") if mtbf[k])


def num(pattern):
    m = re.search(pattern, out)
    assert m, "no match for %r in:\n%s" % (pattern, out)
    return float(m[1])


def close(what, got, want, rel=2e-3, abs_=3e-6):
    assert abs(got - want) <= max(abs_, rel * abs(want)), "%s: printed %g, formula %g" % (what, got, want)
    print("ok: %s printed %.6g, formula %.6g" % (what, got, want))


close("C staged", num(r"level staged +C = ([0-9.]+) s  \(measured"), c1, rel=1e-3, abs_=2e-6 * 2)
close("C durable", num(r"level durable +C = ([0-9.]+) s  \(measured"), c2, rel=1e-3, abs_=2e-6)
assert "mean over %d checkpoints" % steps in out, "checkpoint count %d not printed" % steps
assert "of %d drained version" % len(drains) in out, "drain count %d not printed" % len(drains)

if "Multi-level interval advice" not in out:
    sys.exit(0)  # costs only
x1, x2 = math.sqrt(l1 / (2 * c1)), math.sqrt(l2 / (2 * c2))
if l1 > 0:
    close("lambda staged", num(r"level staged +C = [0-9.]+ s  lambda ([0-9.e+-]+) /s"), l1, rel=1e-5)
close("lambda durable", num(r"level durable +C = [0-9.]+ s  lambda ([0-9.e+-]+) /s"), l2, rel=1e-5)
if x1 < x2:  # pooled: every checkpoint is drained
    assert "pooled   levels staged to durable" in out, out
    x = math.sqrt((l1 + l2) / (2 * (c1 + c2)))
    h, r, pooled = math.sqrt(2 * (l1 + l2) * (c1 + c2)), 1.0, True
    x1 = x
else:
    assert "pooled" not in out, out
    h, r, pooled = math.sqrt(2 * l1 * c1) + math.sqrt(2 * l2 * c2), x1 / x2, False
close("rational overhead", num(r"optimum \(rational\)  overhead ([0-9.e+-]+)"), h)
close("rational interval", num(r"optimum \(rational\)  overhead \S+ \([0-9.]+%\)  checkpoint interval ([0-9.e+-]+) s"),
      1 / x1)
close("rational drain ratio", num(r"durable every ([0-9.e+-]+) checkpoints"), r)
best = None
for m in {max(1, math.floor(r)), max(1, math.ceil(r))}:
    a, b = c1 + c2 / m, l1 + l2 * m
    cand = (math.sqrt(2 * a * b), m, math.sqrt(2 * a / b))
    best = cand if best is None or cand[0] < best[0] else best
got_m = int(num(r"SLUICE_DRAIN_EVERY=(\d+)"))
assert got_m == best[1], "SLUICE_DRAIN_EVERY=%d printed, formula %d" % (got_m, best[1])
print("ok: SLUICE_DRAIN_EVERY=%d (rational %.4g)%s" % (got_m, r, " (pooled)" if pooled else ""))
close("advised interval", num(r"advice +checkpoint interval ([0-9.e+-]+) s"), best[2])
close("advised overhead", num(r"SLUICE_DRAIN_EVERY=\d+: overhead ([0-9.e+-]+)"), best[0])
