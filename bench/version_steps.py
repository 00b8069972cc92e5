#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The steps of one checkpoint version, from the last member's close to durable and to the
exit flush's end, read from `sluice-trace dump --timeline DIR` (docs/PERFORMANCE.md, "The fixed
cost of a version"). Times in ms after the last close, on the trace set's one time axis.

    sluice-trace dump --timeline TRACE_DIR | bench/version_steps.py [--set SUBSTRING]

Prints one line per step and the counts that make the fixed cost: syncs of the version's file
and of its folder, renames, messages to and from the home during the version, and the longest
sleep a progress thread asked for while the version was in flight."""
import re
import sys

LINE = re.compile(r"^rank (\d+) pid (\d+) tid (\d+) @([0-9.]+) (\S+) ?(.*)$")


def parse(lines):
    ev = []
    for ln in lines:
        m = LINE.match(ln)
        if not m:
            continue
        r, pid, tid, t, kind, rest = m.groups()
        d = re.search(r"dur=(\d+)ns", rest)
        ev.append(dict(rank=int(r), pid=int(pid), tid=int(tid), t=float(t), kind=kind, rest=rest,
                       end=float(t) + (int(d.group(1)) / 1e9 if d else 0.0)))
    return ev


def main():
    want = sys.argv[sys.argv.index("--set") + 1] if "--set" in sys.argv else ""
    ev = parse(sys.stdin)
    dur = [e for e in ev if e["kind"] == "COMMIT_DURABLE" and want in e["rest"]]
    if not dur:
        sys.exit("version_steps.py: no COMMIT_DURABLE in the input (sluice-trace dump --timeline DIR)")
    d = dur[-1]
    home_pid, home_tid = d["pid"], d["tid"]
    pids = {e["pid"] for e in ev if e["kind"] == "CKPT_CLOSE"}
    closes = [e for e in ev if e["kind"] == "CKPT_CLOSE" and e["t"] <= d["end"]]
    t0 = max(e["t"] for e in closes)
    during = [e for e in ev if d["t"] - 1e-3 <= e["t"] <= d["end"] + 1e-3]
    home = [e for e in during if e["pid"] == home_pid]
    rows = [("last member closed (CKPT_CLOSE)", t0)]

    def first(kind, pred=lambda e: True, src=home):
        x = [e for e in src if e["kind"] == kind and pred(e)]
        return x[0] if x else None

    rows.append(("home: set complete, folder lock taken (version t0)", d["t"]))
    c = first("COMMIT_FS_META", lambda e: 'operation="create"' in e["rest"])
    if c:
        rows.append(("home: members collected, version file created", c["t"]))
    b = first("COMMIT_BEGIN")
    sh = [e for e in during if e["kind"] in ("COMMIT_SHUFFLE", "COMMIT_SHUFFLE_RECV")]
    wr = [e for e in during if e["kind"] == "COMMIT_FS_WRITE" and "offset=0," not in e["rest"]]
    moved = min([e["t"] for e in sh + wr], default=d["end"])
    plan = [e for e in home if e["kind"] == "MSG_SEND" and e["tid"] == home_tid and b and b["t"] <= e["t"] <= moved]
    if b:
        rows.append(("home: planned (COMMIT_BEGIN)", b["t"]))
    if plan:
        rows.append(("home: plan / write orders sent (last)", plan[-1]["t"]))
    if sh:
        rows.append(("writers: first piece shuffled", min(e["t"] for e in sh if e["kind"] == "COMMIT_SHUFFLE")))
        rows.append(("aggregators: last piece received", max(e["t"] for e in sh)))
    if wr:
        rows.append(("aggregators: first data write", min(e["t"] for e in wr)))
        rows.append(("aggregators: last data write", max(e["t"] for e in wr)))
    syncs = [e for e in during if e["kind"] == "COMMIT_FS_META" and re.search(r'operation="f(data)?sync"', e["rest"])]
    for s in syncs:
        what = re.search(r'operation="(\w+)", path="([^"]*)"', s["rest"])
        rows.append((f"rank {s['rank']}: {what.group(1)} {'folder' if '.tmp.' not in what.group(2) else 'version file'}", s["t"]))
    rn = [e for e in during if e["kind"] == "COMMIT_FS_META" and 'operation="rename"' in e["rest"]]
    for s in rn:
        rows.append(("home: rename over the previous version", s["t"]))
    rows.append(("home: durable (COMMIT_DURABLE end)", d["end"]))
    got = [e for e in ev if e["kind"] == "MSG_RECV" and e["pid"] in pids and e["pid"] != home_pid
           and f"peer rank={d['rank']}," in e["rest"] and e["t"] >= d["end"] - 5e-3]
    last_got = {}
    for e in got:
        last_got.setdefault(e["pid"], e["t"])
    if last_got:
        rows.append(("ranks: last one told durable (MSG_RECV from the home)", max(last_got.values())))
    ends = [e for e in ev if e["kind"] == "COMMIT_END" and "(exit: all sets)" in e["rest"] and e["pid"] in pids]
    if ends:
        rows.append(("ranks: exit flush returned (last COMMIT_END end)", max(e["end"] for e in ends)))
    fin = [e for e in ev if e["kind"] == "MPI_FINALIZE" and e["pid"] in pids]
    if fin:
        rows.append(("ranks: MPI_Finalize entered by the program's MPI (last)", max(e["t"] for e in fin)))
    for name, t in sorted(rows, key=lambda x: x[1]):
        print(f"{(t - t0) * 1e3:9.1f} ms  {name}")
    msgs = [e for e in during if e["kind"] in ("MSG_SEND", "MSG_RECV") and e["pid"] == home_pid]
    sleeps = [e for e in during if e["kind"] == "PROGRESS_SLEEP" and e["pid"] in pids]
    longest = max((int(re.search(r"requested=(\d+)", e["rest"]).group(1)) for e in sleeps), default=0)
    print(f"counts: {sum('.tmp.' in s['rest'].split('path=')[1].split(',')[0] for s in syncs)} syncs of the version file, "
          f"{sum('.tmp.' not in s['rest'].split('path=')[1].split(',')[0] for s in syncs)} of the folder, {len(rn)} renames, "
          f"{len(msgs)} messages at the home, longest progress sleep asked {longest / 1e6:.1f} ms")


if __name__ == "__main__":
    main()
