#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where a DSM miss's time goes, hop by hop, from a sluice trace of bench/dsm_latency.c.

    SLUICE_TRACE_DIR=DIR mpiexec -n 3 sluice-bench-dsm_latency 100 1
    sluice-trace perfetto dsm.json DIR
    bench/dsm_hops.py dsm.json [BYTES [KIND]]

For each access of rank 0 to a chunk of BYTES (default 64) of KIND (as sluice-trace names a
DSM_ACCESS: "write miss", the default, or "read miss"), the DSM messages between its acquire and
its release are linked into chains of cause: a message follows the one its sender received last
before sending it. The longest such chain is the access's critical path (messages sent at once, as
a grant beside the invalidations, are off it); it prints its length ("critical path: N messages in
sequence", the median over the accesses, and the longest) and, hop by hop along it, the median of
  wire   a message's send (before MPI_Isend) -> its receive (after the receive returned)
  turn   the receiver got it -> the same rank sent the next message of the path
so that a slow hop shows as a slow transfer-and-notice (wire) or a slow handler (turn). All ranks
on one node share one clock.
"""
import json
import sys


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if v else float("nan")


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: dsm_hops.py TRACE.json [BYTES [KIND]]")
    want_bytes = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    want_kind = sys.argv[3] if len(sys.argv) > 3 else "write miss"
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    ev = [e for e in (doc["traceEvents"] if isinstance(doc, dict) else doc) if "ts" in e]
    ev.sort(key=lambda e: e["ts"])
    starts = {e["id"]: e for e in ev if e.get("ph") == "s" and e.get("name") == "DSM"}
    ends = {e["id"]: e for e in ev if e.get("ph") == "f" and e.get("name") == "DSM"}
    flows = sorted(((starts[i], ends[i]) for i in starts if i in ends), key=lambda p: p[0]["ts"])
    accesses = [e for e in ev if e.get("name") == "DSM_ACCESS" and e.get("pid") == 1
                and e["args"].get("bytes") == want_bytes and e["args"].get("kind") == want_kind]
    chains = []
    for a in accesses:
        t0, t1 = a["ts"], a["ts"] + a.get("dur", 0)
        chains.append([(s, f) for s, f in flows if t0 <= s["ts"] and f["ts"] <= t1])
    chains = [c for c in chains if c]
    if not chains:
        sys.exit("dsm_hops.py: no matching access with messages in the trace")
    paths = [critical_path(c) for c in chains]
    lengths = sorted(len(p) for p in paths)
    hops = median(lengths)
    common = [p for p in paths if len(p) == hops]
    print(f"{len(accesses)} accesses of {want_bytes} B, {want_kind}: {median([len(c) for c in chains])} messages"
          f" (median); access median {median([a.get('dur', 0) for a in accesses]):.2f} us")
    print(f"critical path: {hops} messages in sequence (median of {len(paths)}; longest {lengths[-1]})")
    print("  hop  from->to     wire   turn (us, medians along the critical path)")
    for i in range(hops):
        wire = [p[i][1]["ts"] - p[i][0]["ts"] for p in common]
        turn = [p[i + 1][0]["ts"] - p[i][1]["ts"] for p in common if i + 1 < hops]
        s, f = common[0][i]
        print(f"  {i + 1:>3}  {s['pid'] - 1}->{f['pid'] - 1}   {median(wire):8.2f} {median(turn):6.2f}")


def critical_path(chain):
    """The longest chain of cause among the (send, receive) pairs of one access, in order."""
    depth, pred = [], []
    for s, _ in chain:
        best, by = 0, None
        for j, (_, f) in enumerate(chain[:len(depth)]):
            if f["pid"] == s["pid"] and f["ts"] <= s["ts"] and depth[j] >= best:
                best, by = depth[j], j
        depth.append(best + 1)
        pred.append(by)
    i = max(range(len(chain)), key=lambda k: (depth[k], chain[k][1]["ts"]))
    path = []
    while i is not None:
        path.append(chain[i])
        i = pred[i]
    return path[::-1]


if __name__ == "__main__":
    main()
