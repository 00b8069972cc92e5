#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where a DSM miss's time goes, hop by hop, from a sluice trace of bench/dsm_latency.c.

    SLUICE_TRACE_DIR=DIR mpiexec -n 3 sluice-bench-dsm_latency 100 1
    sluice-trace perfetto dsm.json DIR
    bench/dsm_hops.py dsm.json [BYTES [KIND]]

For each access of rank 0 to a chunk of BYTES (default 64) of KIND (as sluice-trace names a
DSM_ACCESS: "write miss", the default, or "read miss"), every DSM message rank 0 received between
its acquire and its release is traced back through its causes: a message follows the one its
sender received last before sending it, back to a message rank 0 sent inside the access. The
longest such chain is the access's critical path (messages sent at once, as a grant beside the
invalidations, are off it). It prints the messages of the access (those on some chain), the
critical path's length ("critical path: N messages in sequence", the median over the accesses,
and the longest) and, hop by hop along it, the median of
  wire   a message's send (before MPI_Isend) -> its receive (after the receive returned)
  turn   the receiver got it -> the same rank sent the next message of the path
so that a slow hop shows as a slow transfer-and-notice (wire) or a slow handler (turn). Chains
compare times of one rank only, so they do not depend on how the ranks' clocks were aligned;
the wire column does (all ranks on one node share one clock).
"""
import bisect
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
    starts = {e["id"]: e for e in ev if e.get("ph") == "s" and e.get("name") == "DSM"}
    ends = {e["id"]: e for e in ev if e.get("ph") == "f" and e.get("name") == "DSM"}
    flows = [(starts[i], ends[i]) for i in starts if i in ends]
    # Per rank (pid), the messages it received, in its own time order.
    received = {}
    for fl in flows:
        received.setdefault(fl[1]["pid"], []).append(fl)
    for pid in received:
        received[pid].sort(key=lambda fl: fl[1]["ts"])
    recv_ts = {pid: [fl[1]["ts"] for fl in v] for pid, v in received.items()}
    accesses = [e for e in ev if e.get("name") == "DSM_ACCESS" and e.get("pid") == 1
                and e["args"].get("bytes") == want_bytes and e["args"].get("kind") == want_kind]
    paths, counts = [], []
    for a in sorted(accesses, key=lambda e: e["ts"]):
        t0, t1 = a["ts"], a["ts"] + a.get("dur", 0)
        ends_here = [fl for fl in received.get(1, []) if t0 <= fl[1]["ts"] <= t1]
        chains = [c for c in (cause_chain(fl, received, recv_ts, t0, t1) for fl in ends_here) if c]
        if chains:
            paths.append(max(chains, key=len))
            counts.append(len({id(fl[0]) for c in chains for fl in c}))
    if not paths:
        sys.exit("dsm_hops.py: no matching access with messages in the trace")
    lengths = sorted(len(p) for p in paths)
    hops = median(lengths)
    common = [p for p in paths if len(p) == hops]
    print(f"{len(accesses)} accesses of {want_bytes} B, {want_kind}: {median(counts)} messages"
          f" (median); access median {median([a.get('dur', 0) for a in accesses]):.2f} us")
    print(f"critical path: {hops} messages in sequence (median of {len(paths)}; longest {lengths[-1]})")
    print("  hop  from->to     wire   turn (us, medians along the critical path)")
    for i in range(hops):
        wire = [p[i][1]["ts"] - p[i][0]["ts"] for p in common]
        turn = [p[i + 1][0]["ts"] - p[i][1]["ts"] for p in common if i + 1 < hops]
        s, f = common[0][i]
        print(f"  {i + 1:>3}  {s['pid'] - 1}->{f['pid'] - 1}   {median(wire):8.2f} {median(turn):6.2f}")


def cause_chain(last, received, recv_ts, t0, t1, limit=16):
    """The chain of cause ending at message last, back to one rank 0 (pid 1) sent in [t0, t1];
    None if it leads elsewhere (a message of before the access, nothing received first)."""
    chain = [last]
    while len(chain) <= limit:
        s = chain[-1][0]
        if s["pid"] == 1:
            return chain[::-1] if t0 <= s["ts"] <= t1 else None
        got = received.get(s["pid"], [])
        k = bisect.bisect_right(recv_ts.get(s["pid"], []), s["ts"])
        if k == 0:
            return None
        chain.append(got[k - 1])
    return None


if __name__ == "__main__":
    main()
