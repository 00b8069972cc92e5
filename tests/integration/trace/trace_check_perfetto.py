# SPDX-License-Identifier: MIT
"""Checks a `sluice-trace perfetto` file the way the viewer reads it (used by trace_*.sh):
strict UTF-8 JSON, one process per rank, every slice nested on its track, every flow with both
ends inside a slice of its track and its end not earlier than its start (within the clock
uncertainty the file states), argument keys that are names. Usage: trace_check_perfetto.py FILE RANKS; prints a summary
line of counts (JSON) on success, exits 1 with the reason otherwise."""
import collections
import json
import sys

EPS = 0.0005  # microseconds: timestamps carry whole nanoseconds


def fail(msg):
    print("perfetto check: " + msg, file=sys.stderr)
    sys.exit(1)


path, ranks = sys.argv[1], int(sys.argv[2])
with open(path, "rb") as fh:
    raw = fh.read()
try:
    doc = json.loads(raw.decode("utf-8", errors="strict"))
except (UnicodeDecodeError, ValueError) as e:
    fail("%s is not strict UTF-8 JSON: %s" % (path, e))
ev = doc["traceEvents"]
procs = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"}
if sorted(procs.values()) != sorted("rank %d" % r for r in range(ranks)):
    fail("processes %s, expected one per rank 0..%d" % (sorted(procs.values()), ranks - 1))
tracks = collections.defaultdict(list)
for e in ev:
    if e.get("ph") in ("X", "i", "s", "f", "C") and e["pid"] not in procs:
        fail("event on pid %s, which is no rank: %s" % (e["pid"], e))
    if e.get("ph") == "X":
        tracks[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"], e["name"]))
bad = 0
for key, slices in tracks.items():
    slices.sort(key=lambda s: (s[0], -(s[1] - s[0])))
    stack = []
    for s in slices:
        while stack and stack[-1][1] <= s[0] + EPS:
            stack.pop()
        if stack and s[1] > stack[-1][1] + EPS:
            bad += 1
            print("not nested on %s: %s overlaps %s" % (key, s, stack[-1]), file=sys.stderr)
        stack.append(s)
if bad:
    fail("%d slices do not nest" % bad)


def inside(e):
    for b, end, _ in tracks.get((e["pid"], e["tid"]), []):
        if b - EPS <= e["ts"] <= end + EPS:
            return True
    return False


flows = collections.defaultdict(dict)
for e in ev:
    if e.get("ph") in ("s", "f"):
        if not inside(e):
            fail("flow %s end %s lies in no slice of its track" % (e["id"], e))
        flows[e["id"]][e["ph"]] = e
# An arrow never points back in time: its end is not earlier than its start, within the clock
# alignment's stated uncertainty (a rank's own messages are exact to the nanosecond; DAG nodes
# carry device times of other ranks put on rank 0's clock). A DAG arrow starts at the end of its
# dependency's slice (its last nanosecond).
unc = doc["otherData"]["clock_uncertainty_ns"] / 1000.0
# The stated figure bounds the offsets at the two clock syncs (start and exit). Between them the
# drift is taken as linear, and a PoCL device's profiling clock is put on the host's by an
# estimated offset: on a loaded 2-core machine arrows came out 1.5-3.5 us back against a stated
# 1 us. DRIFT_US covers that; a wrong clock (ms to 300 ms back, as found before) still fails.
DRIFT_US = 20.0
for fid, ends in flows.items():
    if set(ends) != {"s", "f"}:
        fail("flow %s has only %s" % (fid, list(ends)))
    s, f = ends["s"], ends["f"]
    slack = EPS if s["pid"] == f["pid"] and s["name"] != "DAG dependency" else unc + DRIFT_US + EPS
    if f["ts"] < s["ts"] - slack:
        fail("flow %s (%s) points back in time: ends at %.3f us, %.3f us before its start %s (uncertainty %.3f us)"
             % (fid, s["name"], f["ts"], s["ts"] - f["ts"], s, unc))
    if s["name"] == "DAG dependency" and not any(
            abs(end - 0.001 - s["ts"]) <= EPS for _, end, _ in tracks[(s["pid"], s["tid"])]):
        fail("DAG arrow %s does not start at the end of a slice: %s" % (fid, s))
for e in ev:
    for k in e.get("args", {}) if e.get("ph") in ("X", "i") else ():
        if ": " in k or " (" in k:
            fail("argument key %r is a description, not a name" % k)
names = collections.Counter(e["name"] for e in ev if e.get("ph") in ("X", "i"))
threads = sorted({e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "thread_name"})
print(json.dumps({"events": sum(names.values()), "slices": sum(len(s) for s in tracks.values()),
                  "flows": len(flows), "flow_names": sorted({f["s"]["name"] for f in flows.values()}),
                  "threads": threads, "meta": doc.get("otherData", {})}))
