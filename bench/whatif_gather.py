#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The aggregation bandwidth M and the commit pass P of `sluice-trace whatif` (docs/TRACE.md, What
# if), read from the trace of one two-phase checkpoint of one round whose ranks share one host
# (bench/whatif_cluster.sh and bench/whatif_validate.sh calibrate with 2 ranks into a tmpfs):
# M, the bytes aggregators received by message from other ranks (COMMIT_SHUFFLE_RECV) over the
# time from the first COMMIT_SHUFFLE to the last receive; P, the bytes then written
# (COMMIT_FS_WRITE after the last receive) over the time from the last receive to the last write.
# Reads `sluice-trace perfetto` JSON on stdin (one host: one clock), prints "M P" in bytes/s.
import json
import sys

doc = json.load(sys.stdin)
events = doc["traceEvents"] if isinstance(doc, dict) else doc
sends = [e["ts"] for e in events if e.get("name") == "COMMIT_SHUFFLE"]
recvs = [e for e in events if e.get("name") == "COMMIT_SHUFFLE_RECV" and e["args"]["from rank"] != e["pid"] - 1]
if not sends or not recvs:
    sys.exit("whatif_gather.py: no shuffle between ranks in the trace")
last = max(e["ts"] for e in recvs)
span = (last - min(sends)) / 1e6  # microseconds in the JSON
writes = [e for e in events if e.get("name") == "COMMIT_FS_WRITE" and e["ts"] >= last]
wspan = (max([e["ts"] for e in writes], default=last) - last) / 1e6
print("%.0f %.0f" % (sum(e["args"]["bytes"] for e in recvs) / max(span, 1e-6),
                     sum(e["args"]["bytes"] for e in writes) / max(wspan, 1e-6)))
