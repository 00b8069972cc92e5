#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Figures of one bench/redundancy.sh mode from its trace dump (sluice-trace dump), or the ratios
# over the modes run:
#   redundancy_figures.py MODE DUMP BYTES_NODE0 BYTES_NODE1 ...   prints one line, keeps MODE.json
#   redundancy_figures.py --ratios DIR                               encode/staging, MODE/staged
# (MODE@other: the same mode with another library, bench/redundancy.sh --lib; its ratios are
# against staged@other.)
import json, os, re, sys

# One time axis for every process (sluice-trace dump --timeline, '@S'): the figures subtract
# one rank's times from another's (a version staged on one node, protected on another).
LINE = re.compile(r'^rank (\d+) pid \d+ tid \d+ [+@]([0-9.]+) (\w+)(.*)$')
FIELD = re.compile(r'([\w ]+?)=("(?:[^"\\]|\\.)*"|[^,]+)')


def events(path):
    for line in open(path, errors="replace"):
        m = LINE.match(line.rstrip("\n"))
        if not m:
            continue
        rest, dur = m.group(4), None
        d = re.search(r" dur=(\d+)ns$", rest)
        if d:
            rest, dur = rest[:d.start()], int(d.group(1)) / 1e9
        f = {k.strip(): v.strip().strip('"') for k, v in FIELD.findall(rest)}
        f["dur"] = dur
        yield int(m.group(1)), float(m.group(2)), m.group(3), f


def figures(mode, dump, node_bytes):
    opens, steps = {}, {}  # (rank, fd) -> t; rank -> [(t_open, t_close, size)]
    level1, protected, stored, durable, exit_s = {}, {}, [], [], None
    for rank, t, name, f in events(dump):
        if name == "CKPT_OPEN":  # one member per rank: its open, then its close
            opens[rank] = t
        elif name == "CKPT_CLOSE" and rank in opens:
            steps.setdefault(rank, []).append((opens.pop(rank), t, int(f.get("size", 0))))
        elif name == "CKPT_LEVEL" and f.get("level") == "1":
            v = int(f["version"])  # the dump is per rank, not in time order: the earliest
            level1[v] = min(level1.get(v, t), t)
        elif name == "CKPT_PROTECTED":
            v = int(f["version"])
            protected[v] = max(protected.get(v, 0), t)
        elif name == "CKPT_RED_STORED" and f["dur"]:
            stored.append((int(f["bytes"]), f["dur"]))
        elif name == "COMMIT_DURABLE" and f["dur"] is not None:
            durable.append(f["dur"])
        elif name == "COMMIT_END" and "exit" in (f.get("set") or "") and f["dur"] is not None:
            exit_s = max(exit_s or 0, f["dur"])
    nsteps = min((len(s) for s in steps.values()), default=0)
    visible = [max(steps[r][k][1] - steps[r][k][0] for r in steps) for k in range(nsteps)]
    staged_bytes = sum(s[2] for r in steps for s in steps[r][:nsteps])
    staged_time = sum(s[1] - s[0] for r in steps for s in steps[r][:nsteps] if s[2] > 0)
    out = {"mode": mode, "steps": nsteps,
           "app_visible_s": sum(visible) / len(visible) if visible else None,
           "staging_MBps": staged_bytes / staged_time / 1e6 if staged_time > 0 else None,
           "bytes_per_node": [int(b) for b in node_bytes]}
    prot = [protected[v] - level1[v] for v in protected if v in level1]
    out["protected_s"] = sum(prot) / len(prot) if prot else None
    # The encode rate: what a node holds of a version (its part: with one rank per node, that
    # rank's member of the step; the data encoded, for partner and XOR alike, a parity being
    # 1/(S-1) of it) over the time from the version staged to protected, over the versions
    # protected. The k-th version kept node-local is the k-th step.
    versions = sorted(level1)
    part = {v: sum(steps[r][k][2] for r in steps) / len(steps) for k, v in enumerate(versions) if k < nsteps}
    enc = [(v, part[v], protected[v] - level1[v]) for v in protected
           if v in part and v in level1 and protected[v] > level1[v]]
    out["encode_MBps"] = sum(b for _, b, _ in enc) / sum(d for _, _, d in enc) / 1e6 if enc else None
    # The same without the job's first version, which pays once what later ones do not (its
    # first pieces left 25-36 ms after it was staged on 8 testbed nodes of 16 cores, later
    # versions' 0.1-4.8 ms: docs/REDUNDANCY.md): the rate a job that checkpoints often sees.
    later = [(b, d) for v, b, d in enc if v != min(protected)]
    out["encode_later_MBps"] = sum(b for b, _ in later) / sum(d for _, d in later) / 1e6 if later else None
    # The streams alone (CKPT_RED_STORED's duration: a copy's or parity's first piece received
    # to stored), without the latency before them (the records, the node's count) and after
    # (rank 0's count): a node's part over it. A parity of a set of S holds 1/(S-1) of the parts
    # of the S-1 others, which stream into it at once.
    m = re.match(r"xor:(\d+)", mode)
    fold = min(int(m.group(1)), len(steps)) - 1 if m else 1
    out["stream_MBps"] = sum(b * fold for b, _ in stored) / sum(d for _, d in stored) / 1e6 if stored else None
    # COMMIT_DURABLE's own duration: from the step's close to the version durable.
    out["durable_s"] = sum(durable) / len(durable) if mode.startswith("drain") and durable else None
    out["exit_drain_s"] = exit_s
    return out


def fmt(v, unit):
    return "-" if v is None else ("%.4f %s" % (v, unit) if unit == "s" else "%.1f %s" % (v, unit))


if sys.argv[1] == "--ratios":
    d = sys.argv[2]
    ring = None  # the network's bound, MB/s per node (bench/mpi_ring_rate.c), where it ran
    if os.path.exists(os.path.join(d, "ring.MBps")):
        text = open(os.path.join(d, "ring.MBps")).read().strip()
        ring = float(text) if text else None
    res = {}
    for name in os.listdir(d):
        if name.startswith("figures.") and name.endswith(".json"):
            r = json.load(open(os.path.join(d, name)))
            res[r["mode"]] = r
    for mode, r in sorted(res.items(), key=lambda kv: ("@" in kv[0], kv[0])):
        lib = mode[mode.index("@"):] if "@" in mode else ""  # each library against its own
        base = res.get("staged" + lib)
        if r.get("encode_MBps") and r.get("staging_MBps"):
            print("ratio %-14s encode rate / staging copy rate = %.2f (target >= 0.33)%s%s" %
                  (mode, r["encode_MBps"] / r["staging_MBps"],
                   "; after the first version %.2f" % (r["encode_later_MBps"] / r["staging_MBps"])
                   if r.get("encode_later_MBps") else "",
                   "; stream alone %.2f" % (r["stream_MBps"] / r["staging_MBps"]) if r.get("stream_MBps") else ""))
            if ring:
                print("ratio %-14s encode rate / network bound (plain MPI ring) = %.2f; stream alone %.2f" %
                      (mode, r["encode_MBps"] / ring, (r.get("stream_MBps") or 0) / ring))
        if base and not mode.startswith("staged") and r.get("app_visible_s") and base.get("app_visible_s"):
            print("ratio %-14s app-visible / staging alone = %.2f (target <= 1.2)" %
                  (mode, r["app_visible_s"] / base["app_visible_s"]))
    sys.exit(0)

r = figures(sys.argv[1], sys.argv[2], sys.argv[3:])
json.dump(r, open(os.path.join(os.path.dirname(sys.argv[2]), "figures.%s.json" % re.sub(r"[:@]", "", r["mode"])), "w"))
print("%-14s steps %d  app-visible %s  staging %s  until protected %s  encode %s (after the first version %s)  stream %s  until durable %s  exit drain %s  bytes per node %s" % (
    r["mode"], r["steps"], fmt(r["app_visible_s"], "s"), fmt(r["staging_MBps"], "MB/s"), fmt(r["protected_s"], "s"),
    fmt(r["encode_MBps"], "MB/s"), fmt(r.get("encode_later_MBps"), "MB/s"), fmt(r.get("stream_MBps"), "MB/s"), fmt(r["durable_s"], "s"), fmt(r["exit_drain_s"], "s"),
    " ".join(str(b) for b in r["bytes_per_node"])))
