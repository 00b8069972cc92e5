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
# version), the encode rate (a node's part of a version, here one rank's member, over its time
# until protected; all versions, and after the job's first), the stream rate (a node's part over a copy's or parity's CKPT_RED_STORED
# duration: from its first piece to stored), time until durable (drain: the step's
# last close to COMMIT_DURABLE; staged modes: the exit drain, COMMIT_END of the exit), and bytes
# per node (the stage folder of each node once the last step is written and, with redundancy,
# protected, before the exit drains it). Ratios: encode rate over staging rate (target >= 0.33),
# app-visible with redundancy over staging alone (target <= 1.2). The load average is sampled
# every second while the jobs run. Before the modes, the network's bound on the same testbed:
# bench/mpi_ring_rate.c (plain MPI, each node streaming --mib to the next while receiving as much,
# as partner redundancy does), and the encode rate against it. It prints figures; it never
# passes or fails on them. Root.
#
#   bench/redundancy.sh [--build DIR] [--dir DIR] [--nodes N] [--rate RATE|none] [--steps S]
#                       [--pause MS] [--mib M] [--only MODE] [--lib OTHER_LIBSLUICE] [--keep DIR]
# Defaults: 4 nodes, links 1gbit (none: unshaped), 8 steps, 500 ms, every mode, the program's
# uneven members (0 B to 3 MiB); --mib M: every rank writes M MiB every step. --lib runs every
# mode with OTHER_LIBSLUICE first (rows "MODE@other"), then with the build's, back to back on
# the same testbed, and gives the ratios of each library against its own staging alone.
# --keep DIR: each mode's trace dump (sluice-trace dump) is copied there as MODE.dump (the
# testbed's folder goes when the run ends).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${SLUICE_BUILD:-$here/../build}
nodes=4 rate=1gbit steps=8 pause=500 dir="" only="" mib="" other="" keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --pause) pause=$2; shift 2 ;;
    --mib) mib=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --lib) other=$(realpath "$2"); shift 2
      # Each node has its own /tmp and /dev/shm: a library there is not found by the ranks.
      case $other in /tmp/*|/dev/shm/*) echo "redundancy.sh: --lib $other: the nodes have their own /tmp and /dev/shm; put the library in a folder every node sees" >&2; exit 2 ;; esac ;;
    --keep) keep=$(realpath -m "$2"); shift 2 ;;
    *) echo "redundancy.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -z "$mib" ] || [[ $mib =~ ^[1-9][0-9]*$ ]] || { echo "redundancy.sh: --mib $mib: a whole number of MiB" >&2; exit 2; }
[ -z "$other" ] || [ -r "$other" ] || { echo "redundancy.sh: --lib $other: no such library" >&2; exit 2; }
build=$(cd "$build" && pwd)
testbed=$here/../tests/cluster/testbed.sh
dir=$(realpath -m "${dir:-$build/bench-redundancy}")
lib=$build/lib/libsluice.so app=$build/tests/apps/mpi_ckpt_levels strace_bin=$build/bin/sluice-trace
stage=/dev/shm/sluice-$(id -u)
shaping=(--rate "$rate")
[ "$rate" != none ] || shaping=()
"$testbed" up --dir "$dir" --nodes "$nodes" "${shaping[@]}" > /dev/null
sampler=""
trap '[ -z "$sampler" ] || kill "$sampler" 2> /dev/null || true; "$testbed" down --dir "$dir" > /dev/null || true' EXIT
shared=$dir/shared
rm -f "$shared"/figures.*.json
hosts=$(for ((i = 0; i < nodes; i++)); do printf 'node%d:1,' "$i"; done)
sizes="members of 0 B to 3 MiB per rank and step" app_size=()
if [ -n "$mib" ]; then sizes="members of $mib MiB per rank and step"; app_size=("bytes=$((mib << 20))"); fi
echo "# checkpoint levels on the testbed: $(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $nodes nodes x 1 rank (mpi_ckpt_levels: $sizes), links $rate, $steps steps $pause ms apart"
echo "# command: bench/redundancy.sh --nodes $nodes --rate $rate --steps $steps --pause $pause${mib:+ --mib $mib}${other:+ --lib $other}"
# The 1-minute load average, once a second, while the jobs run.
(while :; do cut -d' ' -f1 /proc/loadavg >> "$shared/.load"; sleep 1; done) &
sampler=$!

# wait_protected: with redundancy, until every node holds the protection mark of the newest
# version node0 records (at most 120 s): the bytes per node then hold the finished redundancy.
wait_protected() {
  local i k v
  for k in $(seq 240); do
    v=$("$testbed" exec --dir "$dir" 0 sh -c "ls '$stage' 2> /dev/null; true" | sed -n 's/^lv-[0-9a-f]*-0*\([0-9]*\)-.*/\1/p' | sort -n | tail -1)
    [ -n "$v" ] || return 0
    for ((i = 0; i < nodes; i++)); do
      "$testbed" exec --dir "$dir" $i sh -c "ls '$stage' 2> /dev/null; true" | grep -q "^rp-[0-9a-f]*-0*$v\.rec$" || break
    done
    [ "$i" -lt "$nodes" ] || return 0
    sleep 0.5
  done
  echo "(the newest version was not protected on every node after 120 s)"
}

# run LABEL LIB MODE ENV...: one traced job; prints its figures.
run() {
  local label=$1 l=$2 mode=$3 d i
  shift 3
  [ -z "$only" ] || [ "$only" = "$mode" ] || return 0
  d=$shared/${label//[:@]/_}
  local err
  if ! err=$(env "$@" LD_PRELOAD="$l" /bin/true 2>&1); then
    echo "$label: skipped: $err"
    return
  fi
  rm -rf "$d" "$d.tr"
  mkdir -p "$d"
  for ((i = 0; i < nodes; i++)); do "$testbed" exec --dir "$dir" $i rm -rf "$stage"; done
  (cd "$shared" && "$testbed" run --dir "$dir" mpiexec -hosts "${hosts%,}" -n "$nodes" env SLUICE_CAPTURE="$d/ckpt.%r" \
    SLUICE_TRACE_DIR="$d.tr" "$@" LD_PRELOAD="$l" "$app" write "$d" "$steps" "$pause" "${app_size[@]}") > "$d.out" 2>&1 &
  local job=$!
  for i in $(seq 2400); do [ -e "$d/.written" ] || ! kill -0 "$job" 2> /dev/null && break; sleep 0.05; done
  case " $* " in *SLUICE_REDUNDANCY=*) wait_protected ;; *) sleep 2 ;; esac
  local bytes=""
  for ((i = 0; i < nodes; i++)); do
    bytes+="$("$testbed" exec --dir "$dir" $i sh -c "du -sb '$stage' 2> /dev/null | cut -f1 || echo 0") "
  done
  touch "$d/.release"
  wait "$job" || { echo "$label: the job failed: $(tail -3 "$d.out")"; return; }
  "$strace_bin" dump --timeline "$d.tr" > "$d.dump" 2>&1 || { echo "$label: sluice-trace dump failed: $(tail -1 "$d.dump")"; return; }
  [ -z "$keep" ] || { mkdir -p "$keep" && cp "$d.dump" "$keep/${label//[:@]/_}.dump"; }
  python3 "$here/redundancy_figures.py" "$label" "$d.dump" $bytes
}

# modes LABEL_SUFFIX LIB: every mode with one library.
modes() {
  local sfx=$1 l=$2 s
  run "staged$sfx" "$l" staged SLUICE_DRAIN_EVERY=1000000
  run "partner$sfx" "$l" partner SLUICE_DRAIN_EVERY=1000000 SLUICE_REDUNDANCY=partner
  for s in 4 8; do
    if [ "$nodes" -lt "$s" ]; then [ -n "$only" ] || echo "xor:$s$sfx: skipped: $nodes nodes, fewer than the set"; continue; fi
    run "xor:$s$sfx" "$l" "xor:$s" SLUICE_DRAIN_EVERY=1000000 SLUICE_REDUNDANCY=xor SLUICE_REDUNDANCY_SET=$s
  done
  run "drain$sfx" "$l" drain SLUICE_DRAIN_EVERY=1
}

# The network's bound on this testbed: plain MPI, every node streaming its part to the next
# while it receives the previous one's, as partner redundancy does (bench/mpi_ring_rate.c).
ring=$build/bin/sluice-bench-mpi_ring_rate
if [ -x "$ring" ]; then
  line=$(cd "$shared" && "$testbed" run --dir "$dir" mpiexec -hosts "${hosts%,}" -n "$nodes" "$ring" "${mib:-16}" 2>&1 | grep '^ring' || true)
  echo "# network bound (plain MPI, $ring): ${line:-the ring did not run}"
  sed -n 's/.*: \([0-9.]*\) MB\/s per rank.*/\1/p' <<< "$line" > "$shared/ring.MBps"
fi
[ -z "$other" ] || modes @other "$other"
modes "" "$lib"
kill "$sampler" 2> /dev/null || true
sampler=""
echo "# load average (1 min) while the jobs ran: $(sort -n "$shared/.load" | awk '{a[NR] = $1; s += $1} END {if (NR) printf "mean %.1f, min %s, max %s over %d samples", s / NR, a[1], a[NR], NR}')"
python3 "$here/redundancy_figures.py" --ratios "$shared"
