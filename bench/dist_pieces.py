#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where a remote write's time goes, piece by piece, from a sluice trace of the write benchmark.

    bench/dist_opencl.sh ... --no-latency --sizes 16M --trace DIR   (or bench/dist_h200.sh)
    sluice-trace perfetto w.json DIR/remote
    bench/dist_pieces.py w.json

Every write from rank 0 that a serving rank received in pieces (CL_DIST_PIECE events) is cut
into stages, each from one traced moment to the next (all ranks on one node share one clock):
  request   rank 0 sends the request -> the serving rank has received it
  first     received -> MPI says the first piece arrived
  pieces    first piece arrived -> last piece arrived (with the data rate over that span)
  device    last piece arrived -> the serving rank sends DONE (the last device copy, its end seen)
  to-rank0  DONE sent -> rank 0 has received it
and the longest gap between two pieces, and the median time to enqueue one piece's device copy.
Prints, per write size, the median, 10th and 90th percentile of each in microseconds.
Tags: requests 0x5D00 and DONE records 0x5D03 (runtime/cl/serve/remote_proto.h), a command's data
0x1000 + id % 0x4000 (runtime/mpi/tags.def).
"""
import sys

from perfetto_trace import control_flows, load_events, pct

TAG_REQ, TAG_DONE = 0x5D00, 0x5D03


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: dist_pieces.py TRACE.json (from sluice-trace perfetto)")
    ev = load_events(sys.argv[1])
    pieces = {}  # (pid, command id) -> piece events
    for e in ev:
        if e.get("name") == "CL_DIST_PIECE":
            pieces.setdefault((e["pid"], e["args"]["command id"]), []).append(e)
    msgs = [e for e in ev if e.get("name") in ("MSG_SEND", "MSG_RECV")]
    flow_start, flow_end = control_flows(ev)  # flow ids pair each control message's send and receive
    recv_of_send = {}
    for fid, s in flow_start.items():
        if fid in flow_end:
            recv_of_send[(s["pid"], s["tid"], s["ts"])] = flow_end[fid]
    send_of_recv = {(r["pid"], r["tid"], r["ts"]): flow_start[fid] for fid, r in flow_end.items()
                    if fid in flow_start}
    names = ("request", "first", "pieces", "device", "to-rank0", "largest gap", "enqueue")
    by_size = {}
    for (pid, cid), ps in pieces.items():
        first, last = ps[0], ps[-1]
        size = sum(p["args"]["bytes"] for p in ps)
        req = None
        for m in msgs:  # the serving thread's last request received before its first piece
            if m["ts"] > first["ts"]:
                break
            if m["name"] == "MSG_RECV" and m["pid"] == pid and m["tid"] == first["tid"] \
                    and m["args"].get("tag") == TAG_REQ:
                req = m
        done = next((m for m in msgs if m["ts"] >= last["ts"] and m["name"] == "MSG_SEND" and m["pid"] == pid
                     and m["args"].get("tag") == TAG_DONE), None)
        sent = send_of_recv.get((req["pid"], req["tid"], req["ts"])) if req else None
        back = recv_of_send.get((done["pid"], done["tid"], done["ts"])) if done else None
        if req is None or done is None or sent is None or back is None:
            continue
        gaps = [b["ts"] - a["ts"] for a, b in zip(ps, ps[1:])]
        st = by_size.setdefault((size, len(ps)), {k: [] for k in names + ("rate",)})
        st["request"].append(req["ts"] - sent["ts"])
        st["first"].append(first["ts"] - req["ts"])
        st["pieces"].append(last["ts"] - first["ts"])
        st["device"].append(done["ts"] - last["ts"])
        st["to-rank0"].append(back["ts"] - done["ts"])
        st["largest gap"].append(max(gaps) if gaps else 0.0)
        st["enqueue"].append(pct([p.get("dur", 0.0) for p in ps], 0.5))
        span = last["ts"] - first["ts"]
        if span > 0:  # the first piece's bytes arrived before the span began
            st["rate"].append((size - first["args"]["bytes"]) / span / 1e3)
    if not by_size:
        sys.exit("dist_pieces.py: no write received in pieces with its request and DONE in this trace")
    for (size, n), st in sorted(by_size.items()):
        print(f"writes of {size} bytes in {n} pieces: {len(st['pieces'])} traced")
        print(f"  {'stage (us)':14s} {'median':>9s} {'p10':>9s} {'p90':>9s}")
        for k in names:
            print(f"  {k:14s} {pct(st[k], 0.5):9.1f} {pct(st[k], 0.1):9.1f} {pct(st[k], 0.9):9.1f}")
        print(f"  {'rate (GB/s)':14s} {pct(st['rate'], 0.5):9.2f} {pct(st['rate'], 0.1):9.2f} "
              f"{pct(st['rate'], 0.9):9.2f}")


if __name__ == "__main__":
    main()
