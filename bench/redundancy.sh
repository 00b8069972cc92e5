#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The checkpoint levels' benchmark on the testbed (docs/REDUNDANCY.md, "Measured: the cost of
# the levels"): one rank per node of tests/apps/mpi_ckpt_levels writes --steps checkpoints
# --pause ms apart, traced, in one run per mode:
#   staged   SLUICE_DRAIN_EVERY above the step count: staging alone (drained at the job's end)
#   partner  the same with SLUICE_REDUNDANCY=partner
#   xor:S    SLUICE_REDUNDANCY=xor SLUICE_REDUNDANCY_SET=S (S = 4, 8 where the nodes allow; a
#            mode the library refuses is skipped with its line)
#   drain    SLUICE_DRAIN_EVERY=1: every version drained to the file system
# From the traces (sluice-trace dump): app-visible time (per step, the slowest rank's open to
# close of its member: what the program waits), the staging copy rate (member bytes over those
# times), time until protected (the home's CKPT_LEVEL staged to the last CKPT_PROTECTED of the
# version), the encode rate (each stored copy's bytes over the time from its version's staging to
# its CKPT_RED_STORED), time until durable (drain: the step's last close to COMMIT_DURABLE;
# staged modes: the exit drain, COMMIT_END of the exit), and bytes per node (the stage folder of
# each node once the last step is written, before the exit drains it). Ratios: encode rate over
# staging rate (target >= 0.33), app-visible with redundancy over staging alone (target <= 1.2).
# It prints figures; it never passes or fails on them. Root.
#
#   bench/redundancy.sh [--build DIR] [--dir DIR] [--nodes N] [--rate RATE] [--steps S] [--pause MS]
#                       [--only MODE]
# Defaults: 4 nodes, links 1gbit, 8 steps, 500 ms, every mode.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${SLUICE_BUILD:-$here/../build}
nodes=4 rate=1gbit steps=8 pause=500 dir="" only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --pause) pause=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) echo "redundancy.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
build=$(cd "$build" && pwd)
testbed=$here/../tests/cluster/testbed.sh
dir=$(realpath -m "${dir:-$build/bench-redundancy}")
lib=$build/lib/libsluice.so app=$build/tests/apps/mpi_ckpt_levels strace_bin=$build/bin/sluice-trace
stage=/dev/shm/sluice-$(id -u)
"$testbed" up --dir "$dir" --nodes "$nodes" --rate "$rate" > /dev/null
trap '"$testbed" down --dir "$dir" > /dev/null || true' EXIT
shared=$dir/shared
hosts=$(for ((i = 0; i < nodes; i++)); do printf 'node%d:1,' "$i"; done)
echo "# checkpoint levels on the testbed: $(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $nodes nodes x 1 rank (mpi_ckpt_levels: members of 0 B to 3 MiB per rank and step), links $rate, $steps steps $pause ms apart"
echo "# command: bench/redundancy.sh --nodes $nodes --rate $rate --steps $steps --pause $pause"

# run MODE ENV...: one traced job; prints its figures.
run() {
  local mode=$1 d=$shared/$1 i
  shift
  [ -z "$only" ] || [ "$only" = "$mode" ] || return 0
  local err
  if ! err=$(env "$@" LD_PRELOAD="$lib" /bin/true 2>&1); then
    echo "$mode: skipped: $err"
    return
  fi
  rm -rf "$d" "$d.tr"
  mkdir -p "$d"
  for ((i = 0; i < nodes; i++)); do "$testbed" exec --dir "$dir" $i rm -rf "$stage"; done
  (cd "$shared" && "$testbed" run --dir "$dir" mpiexec -hosts "${hosts%,}" -n "$nodes" env SLUICE_CAPTURE="$d/ckpt.%r" \
    SLUICE_TRACE_DIR="$d.tr" "$@" LD_PRELOAD="$lib" "$app" write "$d" "$steps" "$pause") > "$d.out" 2>&1 &
  local job=$!
  for i in $(seq 1200); do [ -e "$d/.written" ] || ! kill -0 "$job" 2> /dev/null && break; sleep 0.05; done
  sleep 2 # the last version's encoding
  local bytes=""
  for ((i = 0; i < nodes; i++)); do
    bytes+="$("$testbed" exec --dir "$dir" $i sh -c "du -sb '$stage' 2> /dev/null | cut -f1 || echo 0") "
  done
  touch "$d/.release"
  wait "$job" || { echo "$mode: the job failed: $(tail -3 "$d.out")"; return; }
  "$strace_bin" dump "$d.tr" > "$d.dump" 2>&1 || { echo "$mode: sluice-trace dump failed: $(tail -1 "$d.dump")"; return; }
  python3 "$here/redundancy_figures.py" "$mode" "$d.dump" $bytes
}

run staged SLUICE_DRAIN_EVERY=1000000
run partner SLUICE_DRAIN_EVERY=1000000 SLUICE_REDUNDANCY=partner
for s in 4 8; do
  if [ "$nodes" -lt "$s" ]; then [ -n "$only" ] || echo "xor:$s: skipped: $nodes nodes, fewer than the set"; continue; fi
  run "xor:$s" SLUICE_DRAIN_EVERY=1000000 SLUICE_REDUNDANCY=xor SLUICE_REDUNDANCY_SET=$s
done
run drain SLUICE_DRAIN_EVERY=1
python3 "$here/redundancy_figures.py" --ratios "$shared"
