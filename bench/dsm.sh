#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# DSM benchmark driver (docs/DSM.md, docs/PERFORMANCE.md), two tables from one run:
#   1. acquire/release latency of a hit, a read miss, a read of a chunk another rank owns and
#      a write miss (ownership transfer), against an MPI ping-pong of the same size between
#      the same ranks (bench/dsm_latency.c, mpiexec -n 3)
#   2. frames per second of the video pipeline (tests/apps/mpi_dsm_video.c) with 1 to 4 process
#      roles, against the hand-written MPI point-to-point version (mpi_dsm_video_p2p.c): --runs
#      runs of each (5 by default), the two alternating, the median and the spread (slowest-fastest)
#      of each and the ratio of the medians, so that one slow run does not decide a row; every
#      run's frames are checked equal to the reference
#
#   bench/dsm.sh [--build DIR] [--iters N] [--frames N] [--size WxH] [--runs N] [--roles "1 2 3 4"]
#                [--trace DIR] [--compare DIR]
# --trace DIR keeps a sluice trace of every DSM pipeline run, DIR/roles-P-run-K (read them with
# `sluice-trace dsm` or `sluice-trace perfetto`: which hop of a slow run waited).
# --compare DIR runs every DSM measurement also with another build's libsluice.so (e.g. the tree
# before a change, built in another folder) preloaded into the same programs, alternating with
# this build's: a second latency table and "DSM B" columns, before and after in one run.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${SLUICE_BUILD:-$here/../build}
iters=200 frames=40 size=256x192 runs=5 roles="1 2 3 4" trace="" compare=""
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --frames) frames=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --roles) roles=$2; shift 2 ;;
    --trace) mkdir -p "$2" && trace=$(cd "$2" && pwd); shift 2 ;;
    --compare) compare=$(cd "$2" && pwd); shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--iters N] [--frames N] [--size WxH] [--runs N] [--roles LIST] [--trace DIR] [--compare DIR]" >&2; exit 2 ;;
  esac
done
build=$(cd "$build" && pwd) # the runs happen in a scratch folder
mpiexec=${MPIEXEC:-mpiexec}
lat="$build/bin/sluice-bench-dsm_latency"
dsm="$build/tests/apps/mpi_dsm_video"
p2p="$build/tests/apps/mpi_dsm_video_p2p"
for f in "$lat" "$dsm" "$p2p"; do [ -x "$f" ] || { echo "dsm.sh: missing $f (build first)" >&2; exit 1; }; done
if [ -n "$compare" ]; then
  libB=$compare/lib/libsluice.so
  [ -e "$libB" ] || { echo "dsm.sh: missing $libB (build the compared tree first)" >&2; exit 1; }
fi
# (build B's library is preloaded: it has libsluice.so's soname, so the programs bind to it
# instead of the one they were linked with)
w=${size%x*} h=${size#*x}
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-dsm-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

echo "# host $(hostname), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $("$mpiexec" --version 2>&1 | grep -m1 -i "version")"
echo
echo "## acquire + release latency, median microseconds (rank 0 measures, rank 1 owns, rank 2 is the home)"
echo
if [ -z "$compare" ]; then
  SLUICE_DSM_CHUNK_SIZE=1M timeout 600 "$mpiexec" -n 3 "$lat" "$iters" "$runs"
else
  # one round per job, the two builds alternating; each table keeps its build's best round
  for k in $(seq "$runs"); do
    SLUICE_DSM_CHUNK_SIZE=1M timeout 600 "$mpiexec" -n 3 "$lat" "$iters" 1 >"lat.A.$k"
    SLUICE_DSM_CHUNK_SIZE=1M timeout 600 "$mpiexec" -n 3 env LD_PRELOAD="$libB" "$lat" "$iters" 1 >"lat.B.$k"
  done
  for b in A B; do
    [ $b = A ] && echo "this build ($build):" || echo "build B ($compare):"
    # per size and column the best (lowest) of the runs; the ratios recomputed from those
    cat lat.$b.* | awk -F'|' '
      /^\| [0-9]/ { s = $2 + 0; if (!(s in seen)) { seen[s] = 1; order[++n] = s }
                     for (c = 3; c <= 7; c++) if (!((s, c) in best) || $c + 0 < best[s, c]) best[s, c] = $c + 0 }
      END { print "| bytes | hit | read miss | read recall | write miss | MPI rtt | miss / rtt | recall / rtt | write miss / rtt |"
            print "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
            for (i = 1; i <= n; i++) { s = order[i]; r = best[s, 7]
              printf "| %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %.2f |\n", s, best[s, 3], best[s, 4],
                     best[s, 5], best[s, 6], r, best[s, 4] / r, best[s, 5] / r, best[s, 6] / r } }'
  done
fi
echo
echo "## video pipeline, $frames frames of ${w}x${h}, frames per second (median and spread of $runs runs)"
echo
"$dsm" --reference "$frames" "$w" "$h" ref.raw 2>ref.err
ref_fps=$(sed -n 's/.* fps //p' ref.err)
echo "single-process reference: $ref_fps fps"
echo
if [ -z "$compare" ]; then
  echo "| process roles | ranks | DSM fps | spread | MPI p2p fps | spread | DSM / MPI |"
  echo "|---:|---:|---:|---:|---:|---:|---:|"
else
  echo "| process roles | ranks | DSM fps | spread | DSM B fps | spread | MPI p2p fps | spread | DSM / MPI | DSM B / MPI |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
fi
run() { # prog ranks [trace dir [lib]]: fps of one run, output checked against the reference
  rm -f out.raw
  local pre=()
  [ -z "${4:-}" ] || pre=(env LD_PRELOAD="$4")
  if [ -n "${3:-}" ]; then mkdir -p "$3"; export SLUICE_TRACE_DIR=$3; else unset SLUICE_TRACE_DIR; fi
  timeout 600 "$mpiexec" -n "$2" "${pre[@]}" "$1" "$frames" "$w" "$h" out.raw 2>run.err >/dev/null
  unset SLUICE_TRACE_DIR
  cmp -s out.raw ref.raw || { echo "dsm.sh: $(basename "$1") with $2 ranks: output differs from the reference" >&2; exit 1; }
  sed -n 's/^frames .* fps //p' run.err
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
spread() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s-%s", lo, hi }'; }
for p in $roles; do
  n=$((p + 2))
  : >dsm.fps
  : >dsmB.fps
  : >p2p.fps
  # The versions alternate run by run, so that a change of the machine's load hits each.
  for k in $(seq "$runs"); do
    f=$(run "$dsm" $n ${trace:+"$trace/roles-$p-run-$k"}) # its own assignment: a differing output stops the script (set -e)
    echo "$f" >>dsm.fps
    if [ -n "$compare" ]; then
      f=$(run "$dsm" $n "" "$libB")
      echo "$f" >>dsmB.fps
    fi
    f=$(run "$p2p" $n)
    echo "$f" >>p2p.fps
  done
  d=$(median <dsm.fps) m=$(median <p2p.fps)
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
  if [ -z "$compare" ]; then
    echo "| $p | $n | $d | $(spread <dsm.fps) | $m | $(spread <p2p.fps) | $(ratio "$d" "$m") |"
  else
    dB=$(median <dsmB.fps)
    echo "| $p | $n | $d | $(spread <dsm.fps) | $dB | $(spread <dsmB.fps) | $m | $(spread <p2p.fps) | $(ratio "$d" "$m") | $(ratio "$dB" "$m") |"
  fi
done
