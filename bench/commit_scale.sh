#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a version of a checkpoint set costs as the job grows (docs/COMMIT.md, "Cost as the job
# grows"), counted, not timed: a plain-POSIX writer (tests/apps/ckpt_commit_steps: every rank
# writes ckpt.<rank>, 3 steps, uneven sizes) under mpiexec with 1, 2, 4, ... ranks, on the
# two-phase path (SLUICE_CB_WRITE, default enable) and traced, the whole job under strace. Per run
# it prints:
#   versions     committed versions (COMMIT_BEGIN)
#   home msgs/B  commit messages and bytes the home sent per version (MSG_SEND, commit tag)
#   rank msgs/B  the most commit messages and bytes a rank other than the home received per
#                version
#   plan max     the largest commit message a rank other than the home received (its plan share)
#   meta home    container metadata operations (COMMIT_FS_META of a version file, not of
#                staging files) per version at the home
#   meta others  the same summed over every other rank, and how many ranks made any
#   stage calls  the most file-system calls one process made on the stage folder (strace)
#   stage files  the most entries the stage folder held at once (sampled every 20 ms)
#   durable ms   time until durable, the median over the versions of the home's COMMIT_DURABLE
#                span (from the set complete at the home, every member closed, to the durable
#                mark after the folder's fsync); timed, so loose on a loaded machine
# and then the time of `mpiexec -n N true` plain and with SLUICE_CAPTURE set.
# usage: bench/commit_scale.sh [BUILD_DIR] [MAX_RANKS (32)]   (SLUICE_CB_WRITE=disable: direct)
# NODE_STAGE=1: each node stages in its own default folder (/dev/shm/sluice-<uid>) instead of one
# folder of the run, as on the testbed's nodes (bench/testbed_scale.sh); stage files are then not
# sampled ("-"), stage calls are counted on that folder.
set -u
build=${1:-build}
max=${2:-32}
lib=$build/lib/libsluice.so
app=$build/tests/apps/ckpt_commit_steps
trace_tool=$build/bin/sluice-trace
mpiexec=${MPIEXEC:-mpiexec}
export SLUICE_CB_WRITE=${SLUICE_CB_WRITE:-enable} SLUICE_STRIPING_UNIT=${SLUICE_STRIPING_UNIT:-64K}
tag=20928 # SLUICE_TAG_COMMIT (runtime/mpi/tags.def)
work=$(mktemp -d "${TMPDIR:-/tmp}/commit_scale.XXXXXX")
trap 'rm -rf "$work"' EXIT
have_strace=1
command -v strace > /dev/null || have_strace=0

printf '# SLUICE_CB_WRITE=%s SLUICE_STRIPING_UNIT=%s, 3 steps of ckpt_commit_steps, on %s\n' \
  "$SLUICE_CB_WRITE" "$SLUICE_STRIPING_UNIT" "$(nproc) cores"
printf '%5s %8s %12s %12s %8s %9s %14s %11s %11s %10s\n' ranks versions "home msgs/B" "rank msgs/B" \
  "plan max" "meta home" "meta others" "stage calls" "stage files" "durable ms"
n=1
while [ "$n" -le "$max" ]; do
  d=$work/$n
  mkdir -p "$d/ck" "$d/st"
  wrap=()
  [ "$have_strace" = 1 ] && wrap=(strace -f --seccomp-bpf -qq -e trace=%file,readlink -o "$d/strace")
  stage=(SLUICE_STAGE_DIR="$d/st")
  stage_path=$d/st
  if [ "${NODE_STAGE:-0}" = 1 ]; then
    stage=()
    stage_path=/dev/shm/sluice-$(id -u)
    : > "$d/files"
  else
    (while :; do ls -A "$d/st" 2> /dev/null | wc -l; sleep 0.02; done) > "$d/files" &
    sampler=$!
  fi
  env "${stage[@]}" SLUICE_CAPTURE="$d/ck/ckpt.%r" SLUICE_TRACE_DIR=$d/tr \
    timeout 300 "${wrap[@]}" "$mpiexec" -n "$n" env LD_PRELOAD="$lib" "$app" write "$d/ck" 3 \
    > /dev/null || echo "# $n ranks: the job failed"
  if [ "${NODE_STAGE:-0}" != 1 ]; then
    kill "$sampler" 2> /dev/null
    wait "$sampler" 2> /dev/null
  fi
  "$trace_tool" dump "$d/tr" > "$d/dump" 2> /dev/null
  home=$(awk '$8 == "COMMIT_BEGIN" {print $2; exit}' "$d/dump")
  awk -v tag="$tag" -v home="${home:-0}" -v n="$n" '
    function bytes(l,   a, b) { split(l, a, "bytes="); split(a[2], b, ","); return b[1] + 0 }
    $8 == "COMMIT_BEGIN" { v++ }
    $8 == "MSG_SEND" && $0 ~ ("tag=" tag "$") && $2 == home { hm++; hb += bytes($0) }
    $8 == "MSG_RECV" && $0 ~ ("tag=" tag "$") && $2 != home { rm[$2]++; rb[$2] += bytes($0)
      if (bytes($0) > pmax) pmax = bytes($0) }
    $8 == "COMMIT_FS_META" && $0 !~ /version file=0$/ { if ($2 == home) mh++; else { mo++; who[$2] = 1 } }
    END { if (!v) v = 1; for (r in rm) { if (rm[r] > xm) xm = rm[r]; if (rb[r] > xb) xb = rb[r] }
      nw = 0; for (r in who) nw++
      printf "%5d %8d %5.1f/%-6d %5.1f/%-6d %8d %9.1f %7.1f (%3d) ", n, v, hm / v, hb / v, xm / v, xb / v,
        pmax, mh / v, mo / v, nw }' "$d/dump"
  calls=-
  [ "$have_strace" = 1 ] && calls=$(grep -F "$stage_path" "$d/strace" | awk '{c[$1]++} END {m = 0; for (p in c) if (c[p] > m) m = c[p]; print m}')
  files=$(sort -n "$d/files" | tail -1)
  [ "${NODE_STAGE:-0}" = 1 ] && files=-
  durable=$(awk '$8 == "COMMIT_DURABLE" && match($0, / dur=[0-9]+ns/) {
      d[++n] = substr($0, RSTART + 5, RLENGTH - 7) / 1e6 }
    END { if (!n) { print "-"; exit }
      for (i = 2; i <= n; i++) for (j = i; j > 1 && d[j - 1] > d[j]; j--) { t = d[j]; d[j] = d[j - 1]; d[j - 1] = t }
      printf "%.1f", n % 2 ? d[(n + 1) / 2] : (d[n / 2] + d[n / 2 + 1]) / 2 }' "$d/dump")
  printf '%11s %11s %10s\n' "$calls" "${files:-0}" "$durable"
  n=$(( n * 2 ))
done

# A job step that never captures (a process that captured nothing still initializes
# MPI at exit while SLUICE_CAPTURE is set, to serve a possible writer of another rank).
printf '\n# mpiexec -n N true: seconds, plain and preloaded with SLUICE_CAPTURE set\n'
printf '%5s %8s %12s\n' ranks plain capture
n=1
while [ "$n" -le "$max" ]; do
  t0=$(date +%s.%N)
  timeout 300 "$mpiexec" -n "$n" true
  t1=$(date +%s.%N)
  SLUICE_CAPTURE="$work/none/ckpt.%r" SLUICE_STAGE_DIR=$work/none-st \
    timeout 300 "$mpiexec" -n "$n" env LD_PRELOAD="$lib" true
  t2=$(date +%s.%N)
  awk -v n="$n" -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN {printf "%5d %8.2f %12.2f\n", n, b - a, c - b}' 
  n=$(( n * 2 ))
done
