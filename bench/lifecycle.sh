#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Per-rank cost of sluice to a plain MPI program, by rank count: MPI_Init and MPI_Finalize
# (mean of the ranks, ms), the idle progress thread's CPU share (mean and max of the ranks,
# schedstat), threads and resident memory per rank; plain, with capture on and nothing captured,
# and with the trace on (clock sync at init and exit). Prints a table; never passes or fails.
# Trace mode also prints the clock sync's span at init and at exit: from rank 0's CLOCK_SYNC
# (when it starts serving) to the latest sample of any rank on the aligned timeline (`sluice-trace
# dump --timeline`), median of the rounds; each rank's sample is the middle of its best round
# trip, so the span leaves out at most that rank's remaining round trips (microseconds each).
#
#   bench/lifecycle.sh [--build DIR] [--idle SECONDS] [--rounds R] [--modes "M..."]
#                      [--before LIB] [RANKS...]
#       (default 1 16 64, 3 s, 1 round, modes plain capture trace; also plain-mt: the plain
#       program at MPI_THREAD_MULTIPLE, sluice's level; inert: the library, no SLUICE_ variable)
#   SLUICE_LIB=other/libsluice.so bench/lifecycle.sh ...   (another build's library instead)
#   bench/lifecycle.sh --before old/libsluice.so --modes "plain before capture" ...
#       (mode "before": capture on with that library, side by side with this build's)
# With --rounds R the modes alternate R times and each column is the median of the rounds
# (each round: mean over ranks); ratio is finalize over plain's, both medians.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${SLUICE_BUILD:-$here/../build}
idle=3
rounds=1
modes="plain capture trace"
before=
ranks=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --idle) idle=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --before) before=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    -*) echo "lifecycle.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) ranks+=("$1"); shift ;;
  esac
done
[ ${#ranks[@]} -gt 0 ] || ranks=(1 16 64)
bin=$build/bin/sluice-bench-mpi_lifecycle
lib=${SLUICE_LIB:-$build/lib/libsluice.so}
for f in "$bin" "$lib" ${before:+"$before"}; do
  [ -e "$f" ] || { echo "lifecycle.sh: $f is missing: build first" >&2; exit 2; }
done
case " $modes " in *" before "*) [ -n "$before" ] || { echo "lifecycle.sh: mode before needs --before LIB" >&2; exit 2; } ;; esac
work=$(mktemp -d "${TMPDIR:-/tmp}/lifecycle.XXXXXX")
trap 'rm -rf "$work"' EXIT
MPIEXEC=${MPIEXEC:-mpiexec}
# One run: a line "ranks mode init_ms finalize_ms cpu% max_cpu% threads rss_MiB" into $work/runs.
one_run() {
  local n=$1 mode=$2 env=()
  case $mode in
    plain) env=() ;;
    plain-mt) env=(LIFECYCLE_THREAD_MULTIPLE=1) ;;            # plain, at MPI_THREAD_MULTIPLE (sluice's level)
    inert) env=(LD_PRELOAD="$lib") ;;                        # the library loaded, no SLUICE_ variable
    capture) env=(LD_PRELOAD="$lib" SLUICE_CAPTURE="$work/ckpt.%r" SLUICE_STAGE_DIR="$work/stage") ;;
    before) env=(LD_PRELOAD="$before" SLUICE_CAPTURE="$work/ckpt.%r" SLUICE_STAGE_DIR="$work/stage") ;;
    trace) env=(LD_PRELOAD="$lib" SLUICE_TRACE_DIR="$work/trace.$n") ;;
    *) echo "lifecycle.sh: unknown mode $mode" >&2; exit 2 ;;
  esac
  timeout 600 "$MPIEXEC" -n "$n" env "${env[@]}" "$bin" "$idle" |
    awk -v n="$n" -v m="$mode" '{i += $2; f += $3; c += $6; if ($6 > mx) mx = $6; t = $4; r += $5; k++}
      END {printf "%d %s %.1f %.1f %.3f %.3f %d %.1f\n", n, m, i/k/1000, f/k/1000, c/k, mx, t, r/k/1024}' >> "$work/runs"
  [ "$mode" = trace ] || return 0
  # "ranks start_ms exit_ms" into $work/sync: per phase, the latest sample less rank 0's start.
  "$build/bin/sluice-trace" dump --timeline "$work/trace.$n" | awk -v n="$n" '
    / CLOCK_SYNC phase=/ {t = substr($7, 2) + 0; p = substr($9, 7) + 0
      if ($2 == 0) z[p] = t; else if (!(p in hi) || t > hi[p]) hi[p] = t}
    END {printf "%d %.1f %.1f\n", n, (0 in hi) ? (hi[0] - z[0]) * 1000 : 0, (1 in hi) ? (hi[1] - z[1]) * 1000 : 0}' >> "$work/sync"
  rm -rf "$work/trace.$n"
}
for r in $(seq 1 "$rounds"); do
  for n in "${ranks[@]}"; do
    for mode in $modes; do one_run "$n" "$mode"; done
  done
done
[ "$rounds" -gt 1 ] && echo "# medians of $rounds rounds; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work/runs" "$modes" "${ranks[@]}" <<'PY'
import statistics, sys
runs = [l.split() for l in open(sys.argv[1])]
modes = sys.argv[2].split()
print("%6s %-8s %10s %12s %7s %13s %12s %8s %9s %s" % ("ranks", "mode", "init_ms", "finalize_ms", "ratio",
      "progress_cpu%", "max_cpu%", "threads", "rss_MiB", "finalize_ms of each round"))
for n in sys.argv[3:]:
    med = {}
    for m in modes:
        rows = [r for r in runs if r[0] == n and r[1] == m]
        if not rows:
            continue
        col = lambda i: statistics.median(float(r[i]) for r in rows)
        med[m] = col(3)
        ratio = "%.2f" % (med[m] / med["plain"]) if "plain" in med and med["plain"] > 0 else "-"
        print("%6s %-8s %10.1f %12.1f %7s %13.3f %12.3f %8d %9.1f %s" % (n, m, col(2), med[m], ratio, col(4),
              col(5), col(6), col(7), " ".join(r[3] for r in rows)))
PY
[ -s "$work/sync" ] || exit 0
echo "# trace mode: clock sync span, rank 0's start to the latest rank's sample (ms, median of rounds)"
python3 - "$work/sync" "${ranks[@]}" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print("%6s %9s %9s" % ("ranks", "start_ms", "exit_ms"))
for n in sys.argv[2:]:
    mine = [r for r in rows if r[0] == n]
    if mine:
        print("%6s %9.1f %9.1f" % (n, statistics.median(float(r[1]) for r in mine),
              statistics.median(float(r[2]) for r in mine)))
PY
