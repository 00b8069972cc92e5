#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fsync gathering benchmark: an MPI program whose ranks fsync every checkpoint file, tens of ms
# apart (tests/apps/mpi_ckpt_multifile: per rank and step a stdio checkpoint, a state file
# rewritten in place around a hole and an O_APPEND log; every rank opens them at the start of
# the step and rank r writes them r * STAGGER ms late). Prints, side by side in one run, the
# write phase (open to last close, summed over the steps, stagger sleeps excluded) and the
# versions each set ended at:
#   plain          the files on the file system, no sluice (fsync = the file system's)
#   sluice         under sluice: the home gathers the step's fsyncs (SLUICE_FSYNC_GATHER=1000)
#   sluice-nogath  SLUICE_FSYNC_GATHER=0: each forced commit starts 20 ms after its first fsync
# A benchmark: it prints figures and never passes or fails.
#
#   bench/commit_fsync.sh [-n RANKS] [--stagger MS] [--steps N] [--big] [--dir DIR] [--build DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ranks=4 stagger=40 steps=2 big="" dir="" build=${SLUICE_BUILD:-$here/../build}
while [ $# -gt 0 ]; do
  case "$1" in
    -n) ranks=$2; shift 2 ;;
    --stagger) stagger=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --big) big=--big; shift ;;
    --dir) dir=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    -h|--help) sed -n '3,16p' "$0"; exit 0 ;;
    *) echo "commit_fsync.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
build=$(cd "$build" && pwd)
app=$build/tests/apps/mpi_ckpt_multifile
lib=$build/lib/libsluice.so
ckpt=$build/bin/sluice-ckpt
for f in "$app" "$lib" "$ckpt"; do
  [ -e "$f" ] || { echo "commit_fsync.sh: $f is missing: build first (cmake --build $build)" >&2; exit 2; }
done
[ -n "$dir" ] || dir=$build/bench-commit-fsync
MPIEXEC=${MPIEXEC:-mpiexec}
rm -rf "$dir"
mkdir -p "$dir"
stage=$(mktemp -d "${TMPDIR:-/tmp}/commit_fsync.XXXXXX")
trap 'rm -rf "$stage" "$dir"' EXIT

run() { # run NAME [env...]: prints "<write phase s> <bytes>"
  local name=$1 d=$dir/$1
  shift
  mkdir -p "$d"
  "$MPIEXEC" -n "$ranks" env "$@" "$app" write "$d" "$steps" --fsync --stagger "$stagger" $big > "$dir/$name.out"
  echo "$(sed -n 's/^write_phase_s //p' "$dir/$name.out") $(sed -n 's/^bytes //p' "$dir/$name.out")"
}
versions() { # versions DIR: "set=version ..." for the sets under DIR
  "$ckpt" ls -r "$1" | sed -n 's|.*set '"$1"'/\([^ ]*\)\.%r  version \([0-9]*\) .*|\1=\2|p' | sort | tr '\n' ' '
}
capture() { echo "SLUICE_CAPTURE=$dir/$1/s*/ckpt.%r:$dir/$1/state.%r:$dir/$1/log.%r"; }

read -r t_plain bytes < <(run plain)
read -r t_sl _ < <(run sluice LD_PRELOAD="$lib" SLUICE_STAGE_DIR="$stage" "$(capture sluice)")
read -r t_ng _ < <(run sluice-nogath LD_PRELOAD="$lib" SLUICE_STAGE_DIR="$stage" SLUICE_FSYNC_GATHER=0 \
  "$(capture sluice-nogath)")
echo "fsync gathering: $ranks ranks, $steps steps, fsyncs ${stagger} ms apart, $bytes bytes written"
printf '%-14s %10s %8s  %s\n' case "write s" "x plain" "versions per set"
printf '%-14s %10.3f %8s  %s\n' plain "$t_plain" 1.00 "(files)"
printf '%-14s %10.3f %8.2f  %s\n' sluice "$t_sl" "$(awk -v a="$t_sl" -v b="$t_plain" 'BEGIN{print a/b}')" \
  "$(versions "$dir/sluice")"
printf '%-14s %10.3f %8.2f  %s\n' sluice-nogath "$t_ng" "$(awk -v a="$t_ng" -v b="$t_plain" 'BEGIN{print a/b}')" \
  "$(versions "$dir/sluice-nogath")"
