#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where a remote empty kernel's round trip goes, from a sluice trace of the latency benchmark.

    bench/dist_opencl.sh ... --trace DIR      (or bench/dist_h200.sh --trace DIR)
    sluice-trace perfetto rt.json DIR/remote
    bench/dist_roundtrip.py rt.json

Every clEnqueueNDRangeKernel + clFinish pair of rank 0's program thread is cut into five stages,
each from one traced moment to the next (all ranks on one node share one clock):
  enqueue   the enqueue call begins -> rank 0 sends the request
  to-peer   the request is sent -> the serving rank has received it
  serve     received -> the serving rank sends DONE (device enqueue, run, completion seen)
  to-rank0  DONE sent -> rank 0 has received it (its scheduler thread)
  wake      received -> the program's clFinish returns
Prints the median, 10th and 90th percentile of each stage in microseconds and of their sum.
"""
import sys

from perfetto_trace import control_flows, load_events, pct


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: dist_roundtrip.py TRACE.json (from sluice-trace perfetto)")
    ev = load_events(sys.argv[1])
    # Flow ids pair each send with its receive.
    flow_start, flow_end = control_flows(ev)
    sends = {}  # (pid, tid, ts) of a MSG_SEND -> flow id
    for fid, s in flow_start.items():
        sends[(s["pid"], s["tid"], s["ts"])] = fid
    kernels = [e for e in ev if e.get("name") == "clEnqueueNDRangeKernel" and e.get("pid") == 1]
    finishes = [e for e in ev if e.get("name") == "clFinish" and e.get("pid") == 1]
    msg = [e for e in ev if e.get("name") == "MSG_SEND"]
    stages = {k: [] for k in ("enqueue", "to-peer", "serve", "to-rank0", "wake", "total")}
    for k in kernels:
        fin = next((f for f in finishes if f["ts"] >= k["ts"] and f["tid"] == k["tid"]), None)
        if fin is None:
            continue
        end = fin["ts"] + fin.get("dur", 0)
        req = next((m for m in msg if m["pid"] == 1 and m["tid"] == k["tid"] and m["ts"] >= k["ts"]), None)
        if req is None or req["ts"] > end:
            continue
        fid = sends.get((req["pid"], req["tid"], req["ts"]))
        got = flow_end.get(fid)
        if got is None:
            continue
        done = next((m for m in msg if m["pid"] == got["pid"] and m["ts"] >= got["ts"]
                     and m["args"].get("peer rank") == 0 and m["args"].get("bytes", 0) < 144), None)
        if done is None or done["ts"] > end:
            continue
        back = flow_end.get(sends.get((done["pid"], done["tid"], done["ts"])))
        if back is None or back["ts"] > end:
            continue
        stages["enqueue"].append(req["ts"] - k["ts"])
        stages["to-peer"].append(got["ts"] - req["ts"])
        stages["serve"].append(done["ts"] - got["ts"])
        stages["to-rank0"].append(back["ts"] - done["ts"])
        stages["wake"].append(end - back["ts"])
        stages["total"].append(end - k["ts"])
    n = len(stages["total"])
    if n == 0:
        sys.exit("dist_roundtrip.py: no enqueue/request/DONE/clFinish sequence found in the trace")
    print(f"{n} round trips (us)   median     p10     p90")
    for name, v in stages.items():
        print(f"  {name:<10} {pct(v, 0.5):12.2f} {pct(v, 0.1):7.2f} {pct(v, 0.9):7.2f}")


if __name__ == "__main__":
    main()
