#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Cost of sluice to a job step that captures nothing (`mpiexec -n N true`, the hostname and mkdir
# steps of a job script): wall time of the whole mpiexec, plain and with capture on (libsluice
# preloaded, SLUICE_CAPTURE set, nothing written), runs interleaved; median, min and max per
# rank count, and the ratio of medians. Prints a table; never passes or fails.
#
#   bench/job_step.sh [--build DIR] [--runs R] [--before LIB] [--inert] [RANKS...]  (default 16 64, 5 runs)
#   SLUICE_LIB=other/libsluice.so bench/job_step.sh ...   (another build's library)
#   --before LIB: a third mode "before", capture on with that library, in the same rounds
#   --inert: a mode "inert", the library preloaded with no SLUICE_ variable (what loading it
#            costs, apart from capture's start and exit vote)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${SLUICE_BUILD:-$here/../build}
runs=5
before=
inert=
ranks=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --before) before=$2; shift 2 ;;
    --inert) inert=inert; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    -*) echo "job_step.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) ranks+=("$1"); shift ;;
  esac
done
[ ${#ranks[@]} -gt 0 ] || ranks=(16 64)
lib=${SLUICE_LIB:-$build/lib/libsluice.so}
for f in "$lib" ${before:+"$before"}; do
  [ -e "$f" ] || { echo "job_step.sh: $f is missing: build first" >&2; exit 2; }
done
modes="plain ${inert:+inert }${before:+before }capture"
work=$(mktemp -d "${TMPDIR:-/tmp}/job_step.XXXXXX")
trap 'rm -rf "$work"' EXIT
MPIEXEC=${MPIEXEC:-mpiexec}
# awk, not bc: some machines (the GPU hosts) have no bc.
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.6f\n", b - a}'; }
stats() { sort -g | awk '{v[NR] = $1} END {printf "%.3f %.3f %.3f", v[int((NR + 1) / 2)], v[1], v[NR]}'; }
one() {
  local n=$1 mode=$2 l=$lib
  case $mode in
    plain) secs timeout 600 "$MPIEXEC" -n "$n" env true ;;
    inert) secs timeout 600 "$MPIEXEC" -n "$n" env LD_PRELOAD="$l" true ;;
    *) [ "$mode" = before ] && l=$before
       secs timeout 600 "$MPIEXEC" -n "$n" env LD_PRELOAD="$l" SLUICE_CAPTURE="$work/ckpt.%r" \
         SLUICE_STAGE_DIR="$work/stage" true ;;
  esac
}
echo "mpiexec -n N true, $runs runs each, interleaved; library $lib${before:+, before: $before}"
printf "%6s %-8s %8s %8s %8s\n" ranks mode median_s min_s max_s
for n in "${ranks[@]}"; do
  for m in $modes; do : > "$work/$m"; done
  for _ in $(seq "$runs"); do
    for m in $modes; do one "$n" "$m" >> "$work/$m"; done
  done
  p=$(stats < "$work/plain")
  printf "%6d %-8s %8.3f %8.3f %8.3f\n" "$n" plain $p
  for m in $modes; do
    [ "$m" = plain ] && continue
    c=$(stats < "$work/$m")
    printf "%6d %-8s %8.3f %8.3f %8.3f   %s/plain %.2fx   each: %s\n" "$n" "$m" $c "$m" \
      "$(awk -v a="${c%% *}" -v b="${p%% *}" 'BEGIN {print a / b}')" "$(tr '\n' ' ' < "$work/$m")"
  done
  echo "       plain each: $(tr '\n' ' ' < "$work/plain")"
done
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
