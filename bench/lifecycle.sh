#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Per-rank cost of sluice to a plain MPI program, by rank count: MPI_Init and MPI_Finalize
# (mean of the ranks, ms), the idle progress thread's CPU share (mean and max of the ranks,
# schedstat), threads and resident memory per rank; plain, with capture on and nothing captured,
# and with the trace on (clock sync at init and exit). Prints a table; never passes or fails.
#
#   bench/lifecycle.sh [--build DIR] [--idle SECONDS] [RANKS...]     (default 1 16 64, 3 s)
#   SLUICE_LIB=other/libsluice.so bench/lifecycle.sh ...   (another build's library, side by side)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${SLUICE_BUILD:-$here/../build}
idle=3
ranks=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --idle) idle=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    -*) echo "lifecycle.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) ranks+=("$1"); shift ;;
  esac
done
[ ${#ranks[@]} -gt 0 ] || ranks=(1 16 64)
bin=$build/bin/sluice-bench-mpi_lifecycle
lib=${SLUICE_LIB:-$build/lib/libsluice.so}
for f in "$bin" "$lib"; do
  [ -e "$f" ] || { echo "lifecycle.sh: $f is missing: build first" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/lifecycle.XXXXXX")
trap 'rm -rf "$work"' EXIT
MPIEXEC=${MPIEXEC:-mpiexec}
printf "%6s %-8s %10s %12s %13s %12s %8s %9s\n" ranks mode init_ms finalize_ms progress_cpu% max_cpu% threads rss_MiB
for n in "${ranks[@]}"; do
  for mode in plain capture trace; do
    case $mode in
      plain) env=() ;;
      capture) env=(LD_PRELOAD="$lib" SLUICE_CAPTURE="$work/ckpt.%r" SLUICE_STAGE_DIR="$work/stage") ;;
      trace) env=(LD_PRELOAD="$lib" SLUICE_TRACE_DIR="$work/trace.$n") ;;
    esac
    timeout 600 "$MPIEXEC" -n "$n" env "${env[@]}" "$bin" "$idle" |
      awk -v n="$n" -v m="$mode" '{i += $2; f += $3; c += $6; if ($6 > mx) mx = $6; t = $4; r += $5; k++}
        END {printf "%6d %-8s %10.1f %12.1f %13.3f %12.3f %8d %9.1f\n", n, m, i/k/1000, f/k/1000, c/k, mx, t, r/k/1024}'
  done
done
