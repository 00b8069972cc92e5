#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Validates `sluice-trace whatif`'s model on this machine: two-phase checkpoints of 1 to 16 ranks
# (members of SIZE bytes each, default 4 MiB) into a folder on the build directory's file system,
# all ranks on this one node. The model's inputs are calibrated as bench/whatif_cluster.sh does on
# the testbed, once, never per point (median of 3 each): the metadata latency L (1 rank, 1-byte
# member: until durable / m_c), the file system's bandwidth B (dd of 32 MiB, conv=fdatasync, into
# the checkpoint folder), the aggregation bandwidth M and the commit pass P (2 ranks of 8 MiB into
# a tmpfs folder, one round: bench/whatif_gather.py on the trace), the direct path's pass P_d (1
# rank of 8 MiB into the tmpfs folder: bench/whatif_gather.py --direct), the commit's messages H
# and c (1-byte checkpoints of 2 and 8 ranks right after each L: until durable - m_c L = H + c N);
# one node (I unbounded), whose one client is the file system's (F = B). P, M, P_d, H and c at a
# whole CPU: every run has bench/whatif_cpu.py beside it, the CPU share S its processes got
# (rates / S, times x S), and each point's model gets its run's S (`whatif --cpu-share`). Then
# each point runs REPS times (default 3): measured time until durable, the model's estimate, their
# ratio, load average and S.
# Usage: bench/whatif_validate.sh BUILD_DIR [SIZE] [REPS] [KEEP]  (KEEP: a folder that keeps the
# calibration and each point's trace with its CPU share, nN-R and nN-R.cpu, to rerun the model on)
set -euo pipefail
build=$(cd "$1" && pwd); size=${2:-4194304}; reps=${3:-3}; keep=${4:-}
[ -z "$keep" ] || mkdir -p "$keep"
here=$(cd "$(dirname "$0")" && pwd); trace=$build/bin/sluice-trace; app=$build/tests/apps/ckpt_sized; lib=$build/lib/libsluice.so
work=$(mktemp -d "$build/whatif-validate.XXXXXX"); shm=$(mktemp -d /dev/shm/whatif.XXXXXX)
trap 'rm -rf "$work" "$shm"' EXIT
# run N BYTES [ROOT]: one two-phase checkpoint of N ranks into ROOT (default the work folder);
# prints its trace folder.
# The CPU share the run's processes got (bench/whatif_cpu.py) goes to TRACE.cpu.
run() {
  local d=${3:-$work}/n$1-$2 cpu rc=0 i; rm -rf "$d"; mkdir -p "$d/ckpt"
  python3 "$here/whatif_cpu.py" "SLUICE_TRACE_DIR=$d/trace" "$(basename "$app")" "$d/ready" > "$d/trace.cpu" &
  cpu=$!
  for ((i = 0; i < 1200; i++)); do [ -e "$d/ready" ] && break; sleep 0.05; done # its first pass is done
  SLUICE_STAGE_DIR=$d/stage SLUICE_CB_WRITE=enable SLUICE_CAPTURE="$d/ckpt/ckpt.%r" SLUICE_TRACE_DIR=$d/trace \
    timeout 300 mpiexec -n "$1" env LD_PRELOAD="$lib" "$app" write "$d/ckpt" "$2" >/dev/null || rc=$?
  kill -TERM "$cpu" && wait "$cpu" || true
  [ "$rc" = 0 ] || return "$rc"
  echo "$d/trace"
}
share() { awk '{print ($1 == "-" ? 1 : $1)}' "$1.cpu" 2> /dev/null || echo 1; }
field() { "$trace" whatif "$1" | sed -n "s/.*$2.*/\\1/p"; }
durable() { field "$1" 'measured until durable \([0-9.]*\) s'; }
meta_ops() { field "$1" 'container commit \([0-9]*\) metadata operations'; }
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
load() { cut -d' ' -f1 /proc/loadavg; }
B=$(for i in 1 2 3; do dd if=/dev/zero of="$work/cal.dd" bs=1M count=32 conv=fdatasync 2>&1 >/dev/null \
  | awk '/copied/ {for (i = 1; i <= NF; i++) if ($i == "s,") print int($1 / $(i - 1))}'; rm -f "$work/cal.dd"; done | median)
# The CPU-bound inputs at a whole CPU: each run's figure over the CPU share it got.
MP=$(for i in 1 2 3; do
  t=$(run 2 8388608 "$shm")
  "$trace" perfetto --clock wall - "$t" 2>/dev/null | python3 "$here/whatif_gather.py" | awk -v s="$(share "$t")" '{printf "%.0f %.0f\n", $1 / s, $2 / s}'
done)
M=$(awk '{print $1}' <<< "$MP" | median) C=$(awk '{print $2}' <<< "$MP" | median)
D=$(for i in 1 2 3; do
  t=$(run 1 8388608 "$shm")
  "$trace" perfetto --clock wall - "$t" 2>/dev/null | python3 "$here/whatif_gather.py" --direct | awk -v s="$(share "$t")" '{printf "%.0f\n", $1 / s}'
done | median)
# L, then the commit's messages right after it: until durable - m_c L of 1-byte checkpoints of 2
# and 8 ranks, at a whole CPU (times the run's share), three times: L and H at the same load.
until_l() { awk -v d="$(durable "$1")" -v m="$(meta_ops "$1")" -v l="$2" -v s="$(share "$1")" 'BEGIN {printf "%.6f\n", (d - m * l) * s}'; }
LH=$(for i in 1 2 3; do
  t=$(run 1 1); l=$(awk -v d="$(durable "$t")" -v m="$(meta_ops "$t")" 'BEGIN {printf "%.6f\n", d / m}')
  echo "$l $(until_l "$(run 2 1)" "$l") $(until_l "$(run 8 1)" "$l")"
done)
L=$(awk '{print $1}' <<< "$LH" | median) H2=$(awk '{print $2}' <<< "$LH" | median) H8=$(awk '{print $3}' <<< "$LH" | median)
read -r H K < <(awk -v a="$H2" -v b="$H8" 'BEGIN {c = (b - a) / 6; if (c < 0) c = 0; h = a - 2 * c; if (h < 0) h = 0; printf "%.6f %.9f\n", h, c}')
echo "# calibrated (load $(load); P, M, P_d, H and c at a whole CPU): file system B = $B B/s, metadata L = $L s/op, commit pass P = $C B/s, aggregation M = $M B/s, direct P_d = $D B/s, commit messages H = $H s, per rank c = $K s (2 ranks $H2 s, 8 ranks $H8 s)" \
  | tee ${keep:+"$keep/calibration"}
printf "%6s %10s %10s %8s %6s %6s\n" ranks measured model ratio load share
for n in 1 2 4 8 16; do
  for ((r = 0; r < reps; r++)); do
    t=$(run "$n" "$size")
    [ -z "$keep" ] || { rm -rf "$keep/n$n-$r"; cp -r "$t" "$keep/n$n-$r"; cp "$t.cpu" "$keep/n$n-$r.cpu"; }
    est=$("$trace" whatif --targets 1 --stripe-count 1 --target-bw "$B" --md-latency "$L" --md-rate 1e9 \
      --ranks-per-node 16 --node-bw 1e12 --client-bw "$B" --commit-bw "$C" --agg-bw "$M" \
      --direct-bw "$D" --commit-latency "$H" --rank-cost "$K" --cpu-share "$(share "$t")" --ranks "$n" "$t" \
      | awk -v n="$n" '$1 == n && NF == 10 {print $5}')
    awk -v n="$n" -v m="$(durable "$t")" -v e="$est" -v l="$(load)" -v s="$(share "$t")" \
      'BEGIN {printf "%6d %10.3f %10.3f %8.2f %6s %6s\n", n, m, e, m / e, l, s}'
  done
done
