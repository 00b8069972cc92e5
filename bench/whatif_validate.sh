#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Validates `sluice-trace whatif`'s model on this machine: two-phase checkpoints of 1 to 16 ranks
# (members of SIZE bytes each, default 4 MiB) into a folder on the build directory's file system,
# all ranks on this one node. The model's inputs are calibrated once, never per point (median of 3
# each), on that same storage: B from a dd-like write (bench/whatif_cpu.py --dd, 32 MiB and
# fdatasync) split into its CPU part and the device's, B = F = 1 / the device's s per byte, and the
# model in --write-back (the page cache takes the commit's pass, the fsync flushes it after); the
# metadata latency L (1 rank, 1-byte member: until durable / m_c, split the same way: the home's
# commit thread on a CPU, l_on, and the rest, l_io; at a share S, L = l_on / S + l_io); the
# aggregation bandwidth M and the commit pass P (2 ranks of 8 MiB, one round:
# bench/whatif_gather.py on the trace), the direct path's pass P_d (1 rank of 8 MiB:
# bench/whatif_gather.py --direct), the commit's messages H and c (1-byte checkpoints of 2 and 8
# ranks right after each L: until durable - m_c L = H + c N); one node (I unbounded). P, M, P_d, H
# and c at a whole CPU: every run has bench/whatif_cpu.py beside it, and the CPU share S of the
# threads doing its commit in the commit's window (`sluice-trace whatif --window`; TRACE.wcpu)
# scales them (rates / S, times x S); each point's model gets its run's S (`whatif --cpu-share`).
# Then each point runs REPS times (default 3): measured time until durable, the model's estimate,
# their ratio, load average, S and the processes' share over their lives.
# Usage: bench/whatif_validate.sh BUILD_DIR [SIZE] [REPS] [KEEP]  (KEEP: a folder that keeps the
# calibration and each point's trace with its CPU shares and samples, nN-R and nN-R.{cpu,wcpu,samples})
set -euo pipefail
build=$(cd "$1" && pwd); size=${2:-4194304}; reps=${3:-3}; keep=${4:-}
[ -z "$keep" ] || mkdir -p "$keep"
here=$(cd "$(dirname "$0")" && pwd); trace=$build/bin/sluice-trace; app=$build/tests/apps/ckpt_sized; lib=$build/lib/libsluice.so
work=$(mktemp -d "$build/whatif-validate.XXXXXX")
trap 'rm -rf "$work"' EXIT
# run N BYTES [ROOT]: one two-phase checkpoint of N ranks into ROOT (default the work folder);
# prints its trace folder. bench/whatif_cpu.py beside it samples its threads (TRACE.samples; their
# share over the run's life in TRACE.cpu), and TRACE.wcpu gets the CPU share S of the threads doing
# the commit during its window (`sluice-trace whatif --window`), then that of the home's commit
# thread alone (its time on a CPU and waiting for one: the split of L below).
run() {
  local d=${3:-$work}/n$1-$2 cpu rc=0 i w; rm -rf "$d"; mkdir -p "$d/ckpt"
  python3 "$here/whatif_cpu.py" "SLUICE_TRACE_DIR=$d/trace" "$(basename "$app")" "$d/ready" "$d/trace.samples" > "$d/trace.cpu" &
  cpu=$!
  for ((i = 0; i < 1200; i++)); do [ -e "$d/ready" ] && break; sleep 0.05; done # its first pass is done
  SLUICE_STAGE_DIR=$d/stage SLUICE_CB_WRITE=enable SLUICE_CAPTURE="$d/ckpt/ckpt.%r" SLUICE_TRACE_DIR=$d/trace \
    timeout 300 mpiexec -n "$1" env LD_PRELOAD="$lib" "$app" write "$d/ckpt" "$2" >/dev/null || rc=$?
  kill -TERM "$cpu" && wait "$cpu" || true
  [ "$rc" = 0 ] || return "$rc"
  w=$("$trace" whatif --window "$d/trace")
  { python3 "$here/whatif_cpu.py" --window "$d/trace.samples" $w
    python3 "$here/whatif_cpu.py" --window "$d/trace.samples" $(cut -d' ' -f1-3 <<< "$w"); } > "$d/trace.wcpu"
  echo "$d/trace"
}
share() { awk 'NR == 1 {print ($1 == "-" ? 1 : $1)}' "$1.wcpu" 2> /dev/null || echo 1; }
life() { awk '{print ($1 == "-" ? 1 : $1)}' "$1.cpu" 2> /dev/null || echo 1; }
field() { "$trace" whatif "$1" | sed -n "s/.*$2.*/\\1/p"; }
durable() { field "$1" 'measured until durable \([0-9.]*\) s'; }
meta_ops() { field "$1" 'container commit \([0-9]*\) metadata operations'; }
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
load() { cut -d' ' -f1 /proc/loadavg; }
# B, the file system's bandwidth: 32 MiB written (1 MiB writes, then fdatasync) into the checkpoint
# folder, the storage the points write to (whatif_cpu.py --dd: dd's work with the writing thread's
# own schedstat around it). Its time splits into the CPU's part, ON + WAIT (copying into the page
# cache: the commit's own pass, P or P_d, is that part of a commit), and the rest, blocked: the
# device's flush. "b_on b_io" in s per byte, medians of 3; the model gets B = F = 1 / b_io and
# --write-back (the pass fills the page cache, the fsync flushes it after: the trace shows them one
# after the other).
dd_split() {
  python3 "$here/whatif_cpu.py" --dd "$work/cal.dd" 33554432 \
    | awk '{io = $2 - $3 - $4; if (io < 0) io = 0; printf "%.6e %.6e\n", $3 / $1, io / $1}'
  rm -f "$work/cal.dd"
}
BS=$(for i in 1 2 3; do dd_split; done)
b_on=$(awk '{print $1}' <<< "$BS" | median) b_io=$(awk '{print $2}' <<< "$BS" | median)
# The CPU-bound inputs at a whole CPU, on the storage the points write to: each run's figure times
# the CPU share its commit's threads got in its commit window (rates over it).
MP=$(for i in 1 2 3; do
  t=$(run 2 8388608)
  "$trace" perfetto --clock wall - "$t" 2>/dev/null | python3 "$here/whatif_gather.py" | awk -v s="$(share "$t")" '{printf "%.0f %.0f\n", $1 / s, $2 / s}'
done)
M=$(awk '{print $1}' <<< "$MP" | median) C=$(awk '{print $2}' <<< "$MP" | median)
D=$(for i in 1 2 3; do
  t=$(run 1 8388608)
  "$trace" perfetto --clock wall - "$t" 2>/dev/null | python3 "$here/whatif_gather.py" --direct | awk -v s="$(share "$t")" '{printf "%.0f\n", $1 / s}'
done | median)
# L from a 1-rank checkpoint of 1 byte, split as dd's: the home's commit thread's time on a CPU in
# the commit window (.wcpu's second line) and what is left of the time until durable, each over the
# m_c operations: "l_on l_io", so that at a share S, L = l_on / S + l_io. Then the commit's messages
# right after it: until durable - m_c L(S) of 1-byte checkpoints of 2 and 8 ranks, at a whole CPU
# (times the run's S), three times: L and H at the same load.
l_split() { awk -v d="$(durable "$1")" -v m="$(meta_ops "$1")" 'NR == 2 {io = d - $2 - $3; if (io < 0) io = 0; printf "%.6e %.6e\n", $2 / m, io / m}' "$1.wcpu"; }
at_share() { awk -v on="$1" -v io="$2" -v s="$3" 'BEGIN {printf "%.6e\n", on / s + io}'; }
until_l() { local s; s=$(share "$1"); awk -v d="$(durable "$1")" -v m="$(meta_ops "$1")" -v l="$(at_share $2 "$s")" -v s="$s" 'BEGIN {printf "%.6f\n", (d - m * l) * s}'; }
LH=$(for i in 1 2 3; do
  l=$(l_split "$(run 1 1)")
  echo "$l $(until_l "$(run 2 1)" "$l") $(until_l "$(run 8 1)" "$l")"
done)
l_on=$(awk '{print $1}' <<< "$LH" | median) l_io=$(awk '{print $2}' <<< "$LH" | median)
H2=$(awk '{print $3}' <<< "$LH" | median) H8=$(awk '{print $4}' <<< "$LH" | median)
read -r H K < <(awk -v a="$H2" -v b="$H8" 'BEGIN {c = (b - a) / 6; if (c < 0) c = 0; h = a - 2 * c; if (h < 0) h = 0; printf "%.6f %.9f\n", h, c}')
B=$(awk -v b="$b_io" 'BEGIN {printf "%.0f", 1 / b}')
echo "# calibrated (load $(load); B = F = 1 / b_io, at a share S L = l_on / S + l_io; P, M, P_d, H and c at a whole CPU): file system B = $B B/s (b_io = $b_io s/B; its CPU part b_on = $b_on s/B), metadata l_on = $l_on s/op, l_io = $l_io s/op, commit pass P = $C B/s, aggregation M = $M B/s, direct P_d = $D B/s, commit messages H = $H s, per rank c = $K s (2 ranks $H2 s, 8 ranks $H8 s)" \
  | tee ${keep:+"$keep/calibration"}
printf "%s\n" "$BS" | sed 's/^/# dd b_on b_io: /' | tee -a ${keep:+"$keep/calibration"}
printf "%s\n" "$LH" | sed 's/^/# l_on l_io H2 H8: /' | tee -a ${keep:+"$keep/calibration"}
printf "%6s %10s %10s %8s %6s %6s %6s\n" ranks measured model ratio load S life
for n in 1 2 4 8 16; do
  for ((r = 0; r < reps; r++)); do
    t=$(run "$n" "$size"); s=$(share "$t")
    [ -z "$keep" ] || { rm -rf "$keep/n$n-$r"; cp -r "$t" "$keep/n$n-$r"; for x in cpu wcpu samples; do cp "$t.$x" "$keep/n$n-$r.$x"; done; }
    est=$("$trace" whatif --targets 1 --stripe-count 1 --target-bw "$B" --md-latency "$(at_share "$l_on" "$l_io" "$s")" --md-rate 1e9 --write-back \
      --ranks-per-node 16 --node-bw 1e12 --client-bw "$B" --commit-bw "$C" --agg-bw "$M" \
      --direct-bw "$D" --commit-latency "$H" --rank-cost "$K" --cpu-share "$s" --ranks "$n" "$t" \
      | awk -v n="$n" '$1 == n && NF == 10 {print $5}')
    awk -v n="$n" -v m="$(durable "$t")" -v e="$est" -v l="$(load)" -v s="$s" -v f="$(life "$t")" \
      'BEGIN {printf "%6d %10.3f %10.3f %8.2f %6s %6s %6s\n", n, m, e, m / e, l, s, f}'
  done
done
