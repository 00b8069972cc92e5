#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The aggregation bandwidth M of `sluice-trace whatif` (docs/TRACE.md, What if), read from the trace
# of one two-phase checkpoint whose ranks share one host (bench/whatif_cluster.sh and
# bench/whatif_validate.sh calibrate with 2 ranks): the bytes aggregators received by message
# from other ranks (COMMIT_SHUFFLE_RECV) over the time from the first COMMIT_SHUFFLE to the last
# receive. Reads `sluice-trace perfetto` JSON on stdin (one host: one clock), prints bytes/s.
import json
import sys

doc = json.load(sys.stdin)
events = doc["traceEvents"] if isinstance(doc, dict) else doc
sends = [e["ts"] for e in events if e.get("name") == "COMMIT_SHUFFLE"]
recvs = [e for e in events if e.get("name") == "COMMIT_SHUFFLE_RECV" and e["args"]["from rank"] != e["pid"] - 1]
if not sends or not recvs:
    sys.exit("whatif_gather.py: no shuffle between ranks in the trace")
span = (max(e["ts"] for e in recvs) - min(sends)) / 1e6  # microseconds in the JSON
print("%.0f" % (sum(e["args"]["bytes"] for e in recvs) / max(span, 1e-6)))
