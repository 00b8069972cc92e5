#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Validates `sluice-trace whatif`'s model on this machine: two-phase checkpoints of 1 to 16 ranks
# (members of SIZE bytes each, default 4 MiB), the model calibrated on this host from runs of 1
# and 2 ranks (metadata latency from 1-byte members, target bandwidth from SIZE-byte members of 1
# rank, which commits directly; aggregation bandwidth from 2 ranks of SIZE-byte members against
# 2 of 1-byte ones in a tmpfs folder, median of 3; one target, all ranks on one node), then each run's
# measured time until durable printed beside the model's estimate and their ratio. Across nodes:
# bench/whatif_cluster.sh. Usage: bench/whatif_validate.sh BUILD_DIR [SIZE]
set -euo pipefail
build=$(cd "$1" && pwd); size=${2:-4194304}
trace=$build/bin/sluice-trace; app=$build/tests/apps/ckpt_sized; lib=$build/lib/libsluice.so
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# run N BYTES [ROOT]: one two-phase checkpoint of N ranks into ROOT (default the work folder);
# prints its trace folder.
run() {
  local d=${3:-$work}/n$1-$2; rm -rf "$d"; mkdir -p "$d/ckpt"
  SLUICE_STAGE_DIR=$d/stage SLUICE_CB_WRITE=enable SLUICE_CAPTURE="$d/ckpt/ckpt.%r" SLUICE_TRACE_DIR=$d/trace \
    timeout 300 mpiexec -n "$1" env LD_PRELOAD="$lib" "$app" write "$d/ckpt" "$2" >/dev/null
  echo "$d/trace"
}
durable() { "$trace" whatif "$1" | sed -n 's/.*measured until durable \([0-9.]*\) s/\1/p'; }
meta_ops() { "$trace" whatif "$1" | sed -n 's/.*container commit \([0-9]*\) metadata operations.*/\1/p'; }
t_small=$(run 1 1); t_big=$(run 1 "$size")
ops=$(meta_ops "$t_small")
lat=$(awk -v d="$(durable "$t_small")" -v m="$ops" 'BEGIN {printf "%.9f", d / m}')
bw=$(awk -v d="$(durable "$t_big")" -v m="$(meta_ops "$t_big")" -v l="$lat" -v b="$size" \
  'BEGIN {x = d - m * l; if (x <= 0) x = 1e-6; printf "%.0f", b / x}')
# Aggregation: 2 ranks into a tmpfs folder (no file-system cost), SIZE against 1 byte, median of 3.
shm=$(mktemp -d /dev/shm/whatif.XXXXXX); trap 'rm -rf "$work" "$shm"' EXIT
agg=$(for i in 1 2 3; do
  a=$(durable "$(run 2 1 "$shm")"); d=$(durable "$(run 2 "$size" "$shm")")
  awk -v a="$a" -v d="$d" -v b="$size" 'BEGIN {x = d - a; if (x <= 0) x = 1e-6; printf "%.0f\n", 2 * (b - 1) / x}'
done | sort -g | sed -n 2p)
echo "calibrated: metadata latency $lat s ($ops operations), target bandwidth $bw B/s, aggregation $agg B/s"
printf "%6s %14s %14s %8s\n" ranks measured_s model_s ratio
for n in 1 2 4 8 16; do
  t=$(run "$n" "$size")
  est=$("$trace" whatif --targets 1 --stripe-count 1 --target-bw "$bw" --md-latency "$lat" --ranks-per-node 16 \
        --node-bw 1e12 --agg-bw "$agg" --ranks "$n" "$t" | awk -v n="$n" '$1 == n {print $5}')
  awk -v n="$n" -v m="$(durable "$t")" -v e="$est" 'BEGIN {printf "%6d %14.6f %14.6f %8.2f\n", n, m, e, m / e}'
done
