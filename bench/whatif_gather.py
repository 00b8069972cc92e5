#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Inputs of `sluice-trace whatif` (docs/TRACE.md, What if) read from the trace of one calibration
# checkpoint (bench/whatif_cluster.sh and bench/whatif_validate.sh), as `sluice-trace perfetto
# --clock wall` JSON on stdin (the testbed's nodes share the host's clock); prints bytes/s.
#   (no option)  "M P" from a two-phase checkpoint of one round whose ranks share one host: M, the
#                bytes aggregators received by message from other ranks (COMMIT_SHUFFLE_RECV) over
#                the time from the first COMMIT_SHUFFLE to the last receive; P, the bytes then
#                written (COMMIT_FS_WRITE after the last receive) over the time from the last
#                receive to the last write
#   --remote     "E": the bytes aggregators received from ranks of another host over the time from
#                the first COMMIT_SHUFFLE to the end of the last such receive (MPI between nodes)
#   --direct     "P_d" from a direct-path commit (one rank): the bytes written (COMMIT_FS_WRITE)
#                over the time from the first write's start to the last write's end (each chunk
#                read from the stage through a buffer, checksummed and written)
import json
import sys

mode = sys.argv[1] if len(sys.argv) > 1 else ""
doc = json.load(sys.stdin)
events = doc["traceEvents"] if isinstance(doc, dict) else doc
end = lambda e: e["ts"] + e.get("dur", 0)
rate = lambda n, us: n / max(us / 1e6, 1e-6)  # microseconds in the JSON
if mode == "--direct":
    writes = [e for e in events if e.get("name") == "COMMIT_FS_WRITE"]
    if not writes:
        sys.exit("whatif_gather.py: no COMMIT_FS_WRITE in the trace")
    print("%.0f" % rate(sum(e["args"]["bytes"] for e in writes), max(map(end, writes)) - min(e["ts"] for e in writes)))
    sys.exit(0)
host = {e["pid"]: e["args"]["labels"].split(",")[0] for e in events if e.get("name") == "process_labels"}
sends = [e["ts"] for e in events if e.get("name") == "COMMIT_SHUFFLE"]
recvs = [e for e in events if e.get("name") == "COMMIT_SHUFFLE_RECV" and e["args"]["from rank"] != e["pid"] - 1]
if mode == "--remote":
    recvs = [e for e in recvs if host.get(e["args"]["from rank"] + 1) != host.get(e["pid"])]
if not sends or not recvs:
    sys.exit("whatif_gather.py: no shuffle between %s in the trace" % ("hosts" if mode else "ranks"))
if mode == "--remote":
    print("%.0f" % rate(sum(e["args"]["bytes"] for e in recvs), max(map(end, recvs)) - min(sends)))
    sys.exit(0)
last = max(e["ts"] for e in recvs)
writes = [e for e in events if e.get("name") == "COMMIT_FS_WRITE" and e["ts"] >= last]
wspan = max([e["ts"] for e in writes], default=last) - last
print("%.0f %.0f" % (rate(sum(e["args"]["bytes"] for e in recvs), last - min(sends)),
                     rate(sum(e["args"]["bytes"] for e in writes), wspan)))
