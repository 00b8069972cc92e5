#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Cost of sluice to a job step that captures nothing (`mpiexec -n N true`, the hostname and mkdir
# steps of a job script): wall time of the whole mpiexec, plain and with capture on (libsluice
# preloaded, SLUICE_CAPTURE set, nothing written), runs interleaved; median, min and max per
# rank count, and the ratio of medians. Prints a table; never passes or fails.
#
#   bench/job_step.sh [--build DIR] [--runs R] [RANKS...]     (default 16 64, 5 runs)
#   SLUICE_LIB=other/libsluice.so bench/job_step.sh ...   (another build's library)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${SLUICE_BUILD:-$here/../build}
runs=5
ranks=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    -*) echo "job_step.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) ranks+=("$1"); shift ;;
  esac
done
[ ${#ranks[@]} -gt 0 ] || ranks=(16 64)
lib=${SLUICE_LIB:-$build/lib/libsluice.so}
[ -e "$lib" ] || { echo "job_step.sh: $lib is missing: build first" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/job_step.XXXXXX")
trap 'rm -rf "$work"' EXIT
MPIEXEC=${MPIEXEC:-mpiexec}
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
stats() { sort -g | awk '{v[NR] = $1} END {printf "%.3f %.3f %.3f", v[int((NR + 1) / 2)], v[1], v[NR]}'; }
echo "mpiexec -n N true, $runs runs each, interleaved; library $lib"
printf "%6s %-8s %8s %8s %8s\n" ranks mode median_s min_s max_s
for n in "${ranks[@]}"; do
  : > "$work/plain" && : > "$work/capture"
  for _ in $(seq "$runs"); do
    secs timeout 600 "$MPIEXEC" -n "$n" env true >> "$work/plain"
    secs timeout 600 "$MPIEXEC" -n "$n" env LD_PRELOAD="$lib" SLUICE_CAPTURE="$work/ckpt.%r" \
      SLUICE_STAGE_DIR="$work/stage" true >> "$work/capture"
  done
  p=$(stats < "$work/plain"); c=$(stats < "$work/capture")
  printf "%6d %-8s %8.3f %8.3f %8.3f\n" "$n" plain $p
  printf "%6d %-8s %8.3f %8.3f %8.3f   capture/plain %.2fx\n" "$n" capture $c "$(echo "${c%% *} / ${p%% *}" | bc -l)"
done
