#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CPU that sluice's threads take from a program that sleeps after MPI_Init, measured from
# outside (docs/PERFORMANCE.md, "Idle progress thread"): bench/mpi_lifecycle.c under mpiexec with
# libsluice preloaded and capture on (nothing captured); once every rank has started, the
# utime + stime of each rank's threads other than its main thread (/proc/PID/task/*/stat, fields
# 14 and 15, clock ticks) are read, again SECONDS later; printed per rank count as the mean and
# the largest share of one core per rank, and per thread name (MPI's and the C library's own
# threads count too; their names tell them apart from sluice-progress).
# usage: bench/idle_threads.sh [--build DIR] [--seconds S (20)] [RANKS...] (default 1 16)
#   SLUICE_LIB=other/libsluice.so: another build's library.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../build
secs=20
ranks=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --seconds) secs=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    -*) echo "idle_threads.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) ranks+=("$1"); shift ;;
  esac
done
[ ${#ranks[@]} -gt 0 ] || ranks=(1 16)
bin=$build/bin/sluice-bench-mpi_lifecycle
lib=${SLUICE_LIB:-$build/lib/libsluice.so}
export -n SLUICE_LIB # the bench's, not the library's (which would warn of it)
for f in "$bin" "$lib"; do
  [ -e "$f" ] || { echo "idle_threads.sh: $f is missing: build first" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/idle_threads.XXXXXX")
trap 'rm -rf "$work"' EXIT
hz=$(getconf CLK_TCK)

# ticks PIDS...: "pid tid name utime+stime" of every thread but the main one.
ticks() {
  for p in "$@"; do
    for t in /proc/"$p"/task/*; do
      local tid=${t##*/}
      [ "$tid" != "$p" ] || continue
      # The name may hold spaces: the fields after the last ')' are the ones counted.
      local s
      s=$(cat "$t/stat" 2> /dev/null) || continue
      local name=${s#*(}
      name=${name%)*}
      set -- ${s##*)}
      echo "$p $tid ${name// /_} $(( ${12} + ${13} ))"
    done
  done
}

printf '# idle %s s after MPI_Init, capture on, nothing captured, %s\n' "$secs" "$lib"
printf '%5s %14s %14s  %s\n' ranks "mean % core" "max % core" "threads but the main one: name, mean % core"
for n in "${ranks[@]}"; do
  MPIEXEC=${MPIEXEC:-mpiexec}
  "$MPIEXEC" -n "$n" env LD_PRELOAD="$lib" SLUICE_CAPTURE="$work/ckpt.%r" SLUICE_STAGE_DIR="$work/stage" \
    "$bin" "$((secs + 8))" > /dev/null &
  job=$!
  # The ranks: processes running the bench binary, children of this job.
  pids=()
  for _ in $(seq 100); do
    mapfile -t pids < <(pgrep -f -x "$bin $((secs + 8))" || true)
    [ "${#pids[@]}" -lt "$n" ] || break
    sleep 0.1
  done
  sleep 3 # MPI_Init done, the threads settled
  ticks "${pids[@]}" > "$work/t0"
  sleep "$secs"
  ticks "${pids[@]}" > "$work/t1"
  wait "$job" || echo "# $n ranks: the job failed"
  awk -v hz="$hz" -v secs="$secs" -v n="$n" '
    FNR == NR { t0[$2] = $4; next }
    { d = $4 - t0[$2]; use[$1] += d; byname[$3] += d; nth[$1]++ }
    END { for (p in use) { pct = 100 * use[p] / hz / secs; sum += pct; if (pct > mx) mx = pct; k++ }
      for (x in byname) list = list sprintf(" %s %.3f%%", x, k ? 100 * byname[x] / hz / secs / k : 0)
      th = 0; for (p in nth) if (nth[p] > th) th = nth[p]
      printf "%5d %14.3f %14.3f  %d:%s\n", n, k ? sum / k : 0, mx, th, list }' "$work/t0" "$work/t1"
done
