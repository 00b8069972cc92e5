#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Pictures for sluice-trace (run by it, not by hand): reads the CSV the C tool wrote and
draws a PNG with matplotlib (Debian: python3-matplotlib).

  sluice-trace-plot.py heatmap CSV PNG TITLE   bytes rank to rank by purpose; I/O bytes per
                                               rank over time
  sluice-trace-plot.py time CSV PNG TITLE      user / sluice / MPI / sleep per rank, stacked
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


def matrix_panel(ax, rows, ranks, purpose):
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
    ax.set_xticks(range(len(ranks)), [str(r) for r in ranks])
    ax.set_yticks(range(len(ranks)), [str(r) for r in ranks])
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
    ranks = sorted({int(r["from_rank"]) for r in rows if r["kind"] == "rank"})
    purposes = sorted({r["purpose"] for r in msgs})
    ops = sorted({r["purpose"] for r in io})
    ncols = max(1, len(purposes)) + max(1, len(ops))
    fig, axes = plt.subplots(1, ncols, figsize=(4.8 * ncols, 4.6), squeeze=False)
    axes = axes[0]
    k = 0
    for p in purposes:
        im = matrix_panel(axes[k], [r for r in msgs if r["purpose"] == p], ranks, p)
        fig.colorbar(im, ax=axes[k], label="bytes (log scale; white: none)", shrink=0.8)
        k += 1
    if not purposes:
        axes[k].text(0.5, 0.5, "no rank-to-rank messages recorded", ha="center", va="center")
        axes[k].set_axis_off()
        k += 1
    for op in ops:
        ax = axes[k]
        sel = [r for r in io if r["purpose"] == op]
        t1 = max(float(r["t_end_s"]) for r in io)
        nb = max(1, round(t1 / (float(sel[0]["t_end_s"]) - float(sel[0]["t_start_s"]))))
        grid = [[0] * nb for _ in ranks]
        idx = {r: i for i, r in enumerate(ranks)}
        for r in sel:
            b = min(nb - 1, int(round(float(r["t_start_s"]) / t1 * nb)))
            grid[idx[int(r["from_rank"])]][b] += int(r["bytes"])
        vmax = max(max(row) for row in grid)
        im = ax.imshow(grid, aspect="auto", cmap="magma", extent=(0, t1, len(ranks) - 0.5, -0.5),
                       norm=LogNorm(vmin=1, vmax=max(vmax, 2)), interpolation="nearest")
        ax.set_title("I/O: %s, %s" % (op, human(sum(int(r["bytes"]) for r in sel))))
        ax.set_xlabel("time since the first process started (s)")
        ax.set_ylabel("rank")
        ax.set_yticks(range(len(ranks)), [str(r) for r in ranks])
        fig.colorbar(im, ax=ax, label="bytes per %.3f s (log scale; white: none)" % (t1 / nb), shrink=0.8)
        k += 1
    if not ops:
        axes[k].text(0.5, 0.5, "no I/O recorded", ha="center", va="center")
        axes[k].set_axis_off()
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


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("heatmap", "time"):
        sys.exit(__doc__)
    what, path, png, title = sys.argv[1:]
    rows = read(path)
    (heatmap if what == "heatmap" else timeplot)(rows, png, title)


if __name__ == "__main__":
    main()
