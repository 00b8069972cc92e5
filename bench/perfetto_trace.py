# SPDX-License-Identifier: MIT
"""What the trace-reading benchmark scripts (dist_roundtrip.py, dist_pieces.py) share: the events
of a `sluice-trace perfetto` file in time order, the flows that pair a control message's send with
its receive, and percentiles. Imported from the scripts' own folder."""
import json


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))] if v else float("nan")


def load_events(path):
    """Every timed event of the file, in time order."""
    with open(path) as f:
        doc = json.load(f)
    ev = doc["traceEvents"] if isinstance(doc, dict) else doc
    return sorted((e for e in ev if "ts" in e), key=lambda e: e["ts"])


def control_flows(ev):
    """(flow id -> its send's flow start, flow id -> its receive's flow end) of control messages."""
    start = {e["id"]: e for e in ev if e.get("ph") == "s" and e.get("name") == "control"}
    end = {e["id"]: e for e in ev if e.get("ph") == "f" and e.get("name") == "control"}
    return start, end
