#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Collective replacement across nodes, on the testbed (tests/cluster/testbed.sh; figures in
# docs/CLUSTER_TESTBED.md, "Measured by hand: rank 0's link as the bottleneck"), side by side in
# one run:
#   1. broadcast: one host array written to the devices of K serving ranks on K other nodes
#      (sluice-bench-dist_dcr, non-blocking writes then clFinish), rank 0's link shaped (--rate0),
#      SLUICE_DCR=off (K point-to-point writes from rank 0) against on (one broadcast: a chain along
#      the members, remote_proto.h), interleaved rounds; per size: the median time of one broadcast
#      (best round), the ratio on/off, the bytes node0's uplink carried per broadcast (counted on
#      the link: the head's bridge port v0) in units of the data, and the link bound size/rate0;
#   2. remote/MPI over the same shaped link: bench/dist_opencl.sh's bandwidth part on 2 ranks
#      (rank 0 on node0, rank 1 on node1): blocking write and read of each size to rank 1's device
#      against raw MPI point-to-point between the same ranks.
# It prints figures; it never passes or fails on them (exit 1 only when a run fails). Needs root.
#
#   bench/cluster_dcr.sh [--build DIR] [--dir DIR] [--k K] [--rate0 RATE] [--rate RATE]
#                        [--sizes "16M 64M"] [--reps N] [--rounds N] [--bw-sizes "16M 64M"]
#                        [--no-bandwidth]
# Defaults: K=4 (5 nodes), --rate0 1gbit, other links unshaped, sizes 16M 64M, 5 reps, 3 rounds;
# the testbed lives in --dir (default BUILD/bench-cluster) and is taken down on exit.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${SLUICE_BUILD:-$here/../build}
k=4 rate0=1gbit rate="" sizes="16M 64M" reps=5 rounds=3 bw_sizes="16M 64M" bandwidth=1 dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --k) k=$2; shift 2 ;;
    --rate0) rate0=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --bw-sizes) bw_sizes=$2; shift 2 ;;
    --no-bandwidth) bandwidth=0; shift ;;
    *) echo "cluster_dcr.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
build=$(cd "$build" && pwd)
testbed=$here/../tests/cluster/testbed.sh
lib=$build/lib/libsluice.so
bench=$build/bin/sluice-bench-dist_dcr
for f in "$lib" "$bench"; do [ -e "$f" ] || { echo "cluster_dcr.sh: $f not found (build first)" >&2; exit 2; }; done
dir=$(realpath -m "${dir:-$build/bench-cluster}") # absolute: the runs enter the shared folder first
up=(--nodes $((k + 1)) --rate0 "$rate0")
[ -z "$rate" ] || up+=(--rate "$rate")
"$testbed" up --dir "$dir" "${up[@]}"
trap '"$testbed" down --dir "$dir" > /dev/null || true' EXIT
shared=$dir/shared
export POCL_DEVICES=pthread POCL_MAX_PTHREAD_COUNT=1

uplink() { (cd "$shared" && "$testbed" run --dir "$dir" ip -s -j link show v0) |
  python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["rx"]["bytes"])'; }
bytes_of() { numfmt --from=iec "$1"; }

echo "# collective replacement across nodes: $(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# testbed: $((k + 1)) nodes, rank 0 on node0 (link $rate0), serving ranks 1..$k on node1..node$k (links ${rate:-unshaped})"
echo
echo "## 1. broadcast of one host array to $k devices on $k other nodes (median of $reps per run, best of $rounds interleaved rounds)"
printf '%-6s | %10s %10s | %7s | %12s %12s | %10s\n' size "K writes" "DCR bcast" "on/off" "link/data off" "link/data on" "link bound"
for size in $sizes; do
  declare -A best=() link=()
  for r in $(seq 1 "$rounds"); do
    for mode in $([ $((r % 2)) -eq 1 ] && echo "off on" || echo "on off"); do
      b0=$(uplink)
      out=$(cd "$shared" && timeout 600 "$testbed" run --dir "$dir" mpiexec -n $((k + 1)) env SLUICE_OPENCL=distributed \
        SLUICE_DCR=$mode SLUICE_DIST_CMA=off "SLUICE_DEVICES=SELECT ALL WHERE node > 0" POCL_CACHE_DIR="$shared/pocl" \
        LD_PRELOAD="$lib" "$bench" "$size" "$reps") || { echo "cluster_dcr.sh: run failed ($size, $mode)" >&2; exit 1; }
      b1=$(uplink)
      t=$(sed -n 's/.*median_s=\([0-9.]*\).*/\1/p' <<<"$out")
      if [ -z "${best[$mode]:-}" ] || awk -v a="$t" -v b="${best[$mode]}" 'BEGIN { exit !(a < b) }'; then best[$mode]=$t; fi
      link[$mode]=$(awk -v d=$((b1 - b0)) -v s="$(bytes_of "$size")" -v n=$((reps + 1)) 'BEGIN { printf "%.2f", d / (s * n) }')
    done
  done
  bound=$(awk -v s="$(bytes_of "$size")" -v r="$(numfmt --from=si "$(tr a-z A-Z <<<"${rate0%bit}")")" 'BEGIN { printf "%.4f", s * 8 / r }')
  printf '%-6s | %9.4fs %9.4fs | %7.2f | %12s %12s | %9ss\n' "$size" "${best[off]}" "${best[on]}" \
    "$(awk -v a="${best[on]}" -v b="${best[off]}" 'BEGIN { print a / b }')" "${link[off]}x" "${link[on]}x" "$bound"
  unset best link
done
echo "# K writes = SLUICE_DCR=off (rank 0 writes each device); DCR bcast = on; link/data = bytes node0's uplink"
echo "# carried per broadcast (TCP/IP and MPI headers included) / the data; link bound = size / rate0 (one copy)."

if [ "$bandwidth" -eq 1 ]; then
  echo
  echo "## 2. remote/MPI over rank 0's link ($rate0): 2 ranks, rank 0 on node0, rank 1 on node1"
  (cd "$shared" && TMPDIR=$shared "$testbed" run --dir "$dir" "$here/dist_opencl.sh" --build "$build" --no-latency \
    --no-scaling --sizes "$bw_sizes" --rounds 2)
fi
