#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Pictures for sluice-trace (run by it, not by hand): reads the CSV the C tool wrote and
draws a PNG with matplotlib (Debian: python3-matplotlib).

  sluice-trace-plot.py heatmap CSV PNG TITLE   bytes rank to rank by purpose; I/O bytes per
                                               rank over time
  sluice-trace-plot.py time CSV PNG TITLE      user / sluice / MPI / sleep per rank, stacked
  sluice-trace-plot.py dsm CSV PNG TITLE       the software DSM: live bytes over time, accesses
                                               and hit rates per rank, hold time of the chunks
                                               held longest, time per rank
The CSV columns are in docs/TRACE.md."""
import csv
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm
except ImportError:
    sys.exit("sluice-trace: pictures need matplotlib (Debian: apt-get install python3-matplotlib)")

UNITS = ["B", "KiB", "MiB", "GiB", "TiB"]


def human(n):
    n = float(n)
    u = 0
    while n >= 1024 and u < len(UNITS) - 1:
        n /= 1024
        u += 1
    return ("%.0f %s" if u == 0 else "%.1f %s") % (n, UNITS[u])


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def rank_order(rows):
    """Ranks grouped by host (hosts in the order of their lowest rank), ascending within a
    host; the positions where a new host begins; a tick label per rank."""
    host = {int(r["from_rank"]): r.get("host") or "" for r in rows if r["kind"] == "rank"}
    first = {}
    for rank in sorted(host):
        first.setdefault(host[rank], rank)
    ranks = sorted(host, key=lambda rank: (first[host[rank]], rank))
    bounds = [i for i in range(1, len(ranks)) if host[ranks[i]] != host[ranks[i - 1]]]
    many = len(set(host.values())) > 1
    labels = ["%d@%s" % (r, host[r]) if many and host[r] else str(r) for r in ranks]
    return ranks, bounds, labels


def node_lines(ax, bounds, vertical=True):
    """Node boundaries: a line between the last rank of a host and the first of the next."""
    for b in bounds:
        ax.axhline(b - 0.5, color="red", linewidth=1.2)
        if vertical:
            ax.axvline(b - 0.5, color="red", linewidth=1.2)


def matrix_panel(ax, rows, ranks, purpose, bounds=(), labels=None):
    idx = {r: i for i, r in enumerate(ranks)}
    m = [[0] * len(ranks) for _ in ranks]
    for r in rows:
        m[idx[int(r["from_rank"])]][idx[int(r["to_rank"])]] += int(r["bytes"])
    vmax = max(max(row) for row in m)
    norm = LogNorm(vmin=1, vmax=max(vmax, 2))
    im = ax.imshow(m, cmap="viridis", norm=norm)
    ax.set_title("%s: %s" % (purpose, human(sum(map(sum, m)))))
    ax.set_xlabel("to rank")
    ax.set_ylabel("from rank")
    labels = labels or [str(r) for r in ranks]
    ax.set_xticks(range(len(ranks)), labels, rotation=90 if len(labels[0]) > 3 else 0)
    ax.set_yticks(range(len(ranks)), labels)
    node_lines(ax, bounds)
    if len(ranks) <= 16:
        for i in range(len(ranks)):
            for j in range(len(ranks)):
                if m[i][j]:
                    dark = norm(m[i][j]) < 0.6  # viridis is dark at the low end
                    ax.text(j, i, human(m[i][j]), ha="center", va="center", fontsize=8,
                            color="white" if dark else "black")
    return im


def heatmap(rows, png, title):
    msgs = [r for r in rows if r["kind"] == "message"]
    io = [r for r in rows if r["kind"] == "io"]
    ranks, bounds, labels = rank_order(rows)
    purposes = sorted({r["purpose"] for r in msgs})
    ops = sorted({r["purpose"] for r in io})
    # Rank-to-rank matrices on one row, I/O over time on the next; a row only when it has data.
    rows_of = [r for r in (purposes, ops) if r] or [[]]
    ncols = max(1, max(len(r) for r in rows_of))
    fig, grid = plt.subplots(len(rows_of), ncols, figsize=(4.8 * ncols, 4.6 * len(rows_of)), squeeze=False)
    for row, items in zip(grid, rows_of):
        for ax in row[max(1, len(items)):]:
            ax.set_axis_off()
    axes = grid[0]
    for k, p in enumerate(purposes):
        im = matrix_panel(axes[k], [r for r in msgs if r["purpose"] == p], ranks, p, bounds, labels)
        fig.colorbar(im, ax=axes[k], label="bytes (log scale; white: none)", shrink=0.8)
    if purposes:
        axes = grid[1] if ops else None
    for k, op in enumerate(ops):
        ax = axes[k]
        sel = [r for r in io if r["purpose"] == op]
        t1 = max(float(r["t_end_s"]) for r in io)
        nb = max(1, round(t1 / (float(sel[0]["t_end_s"]) - float(sel[0]["t_start_s"]))))
        bins = [[0] * nb for _ in ranks]
        idx = {r: i for i, r in enumerate(ranks)}
        for r in sel:
            b = min(nb - 1, int(round(float(r["t_start_s"]) / t1 * nb)))
            bins[idx[int(r["from_rank"])]][b] += int(r["bytes"])
        vmax = max(max(row) for row in bins)
        im = ax.imshow(bins, aspect="auto", cmap="magma", extent=(0, t1, len(ranks) - 0.5, -0.5),
                       norm=LogNorm(vmin=1, vmax=max(vmax, 2)), interpolation="nearest")
        ax.set_title("I/O: %s, %s" % (op, human(sum(int(r["bytes"]) for r in sel))))
        ax.set_xlabel("time since the first process started (s)")
        ax.set_ylabel("rank (red lines: node boundaries)" if bounds else "rank")
        ax.set_yticks(range(len(ranks)), labels)
        node_lines(ax, bounds, vertical=False)
        fig.colorbar(im, ax=ax, label="bytes per %.3f s (log scale; white: none)" % (t1 / nb), shrink=0.8)
    if not purposes and not ops:
        grid[0][0].text(0.5, 0.5, "no rank-to-rank messages or I/O recorded", ha="center", va="center")
        grid[0][0].set_axis_off()
    missing = [w for w, have in (("no rank-to-rank messages", purposes), ("no I/O", ops)) if not have]
    if missing and (purposes or ops):
        title += " (%s recorded)" % " and ".join(missing)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


STATES = [("user_s", "user (on sluice's threads: work not bracketed)", "#4c72b0"), ("sluice_s", "sluice", "#dd8452"),
          ("mpi_s", "MPI wait", "#c44e52"), ("sleep_s", "sleep (back-off)", "#8c8c8c")]


def timeplot(rows, png, title):
    ranks = sorted({int(r["rank"]) for r in rows})
    groups = [("the program's main threads", lambda r: r["role"].startswith("main")),
              ("sluice's own threads (progress, write-behind, scheduler, ...)",
               lambda r: not r["role"].startswith("main"))]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), squeeze=False)
    for ax, (name, pick) in zip(axes[0], groups):
        bottom = [0.0] * len(ranks)
        for key, label, color in STATES:
            vals = [sum(float(r[key]) for r in rows if int(r["rank"]) == rk and pick(r)) for rk in ranks]
            ax.bar([str(rk) for rk in ranks], vals, bottom=bottom, label=label, color=color)
            bottom = [b + v for b, v in zip(bottom, vals)]
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("rank")
        ax.set_ylabel("thread time (s)")
        ax.set_ylim(bottom=0)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8)
    fig.suptitle(title + ": where the time went")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(png, dpi=110)


ACCESS = [("read_hits", "read hit", "#55a868"), ("read_misses", "read miss", "#c44e52"),
          ("write_hits", "write hit", "#4c72b0"), ("write_misses", "write miss", "#dd8452")]


def dsmplot(rows, png, title):
    allocs = [r for r in rows if r["kind"] == "alloc"]
    ranks = [r for r in rows if r["kind"] == "rank"]
    chunks = [r for r in rows if r["kind"] == "chunk"]
    names = [r["rank"] for r in ranks]
    fig, axes = plt.subplots(2, 2, figsize=(12, 8.4))
    ax = axes[0][0]
    for rk in names:
        sel = [r for r in allocs if r["rank"] == rk]
        if sel:
            ax.step([0.0] + [float(r["t_s"]) for r in sel], [0] + [int(r["live_bytes"]) for r in sel],
                    where="post", label="rank " + rk)
    ax.set_title("allocation timeline: bytes of chains live per rank")
    ax.set_xlabel("time since the first process started (s)")
    ax.set_ylabel("bytes")
    ax.set_ylim(bottom=0)
    if allocs:
        ax.legend(fontsize=8)
    ax = axes[0][1]
    bottom = [0] * len(ranks)
    for key, label, color in ACCESS:
        vals = [int(r[key]) for r in ranks]
        ax.bar(names, vals, bottom=bottom, label=label, color=color)
        bottom = [b + v for b, v in zip(bottom, vals)]
    for i, r in enumerate(ranks):
        hits = int(r["read_hits"]) + int(r["write_hits"])
        if bottom[i]:
            ax.text(i, bottom[i], "%.0f%% hits" % (100.0 * hits / bottom[i]), ha="center", va="bottom", fontsize=8)
    ax.set_title("accesses per rank (one per chunk per scope)")
    ax.set_xlabel("rank")
    ax.set_ylabel("accesses")
    ax.set_ylim(0, max(bottom + [1]) * 1.12)
    ax.legend(fontsize=8)
    ax = axes[1][0]
    top = sorted(chunks, key=lambda r: -float(r["held_s"]))[:15][::-1]
    if top:
        ax.barh([r["address"] for r in top], [float(r["held_s"]) * 1e3 for r in top], color="#8172b2")
        ax.set_ylabel("chunk address")
    ax.set_title("hold time (acquire to release), the %d chunks held longest" % len(top))
    ax.set_xlabel("held, summed over scopes and ranks (ms)")
    ax = axes[1][1]
    bottom = [0.0] * len(ranks)
    for key, label, color in STATES:
        vals = [float(r[key]) for r in ranks]
        ax.bar(names, vals, bottom=bottom, label=label.split(" (")[0], color=color)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.plot(names, [float(r["in_scopes_s"]) for r in ranks], "kD", label="holding chunks (in scopes)")
    ax.set_title("time per rank, all threads (DSM calls: sluice; its waits: MPI)")
    ax.set_xlabel("rank")
    ax.set_ylabel("thread time (s)")
    ax.set_ylim(0, max(bottom + [1e-9]) * 1.4)  # room for the legend above the bars
    ax.legend(fontsize=8, ncol=2, loc="upper center")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main():
    plots = {"heatmap": heatmap, "time": timeplot, "dsm": dsmplot}
    if len(sys.argv) != 5 or sys.argv[1] not in plots:
        sys.exit(__doc__)
    what, path, png, title = sys.argv[1:]
    plots[what](read(path), png, title)


if __name__ == "__main__":
    main()
