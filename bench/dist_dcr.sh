#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Collective replacement and copy removal benchmark (issue 14), on and off side by side in one run:
#   1. broadcast: one host array written to a buffer on each of K remote devices (ranks 1..K, one
#      device each; rank 0's own device is not used), non-blocking writes then clFinish
#      (sluice-bench-dist_dcr), for each size and K: the median time of one broadcast and the
#      bytes rank 0 handed to MPI for it (from rank 0's trace: CL_DIST_DATA, sent or broadcast),
#      with SLUICE_DCR=on and off, and the ratio on/off;
#   2. halo exchange: the unchanged cl_stencil2d on R ranks (one device each), compute time (its
#      --time line) and the halo bytes through rank 0 (sent and received, CL_DIST_DATA of one
#      halo row's size), with SLUICE_DHDCR=on and off.
# It prints figures; it never passes or fails on them.
#
#   bench/dist_dcr.sh [--build DIR] [--sizes "1M 16M 256M"] [--ks "2 3 4 8"] [--reps N]
#                     [--stencil "ROWS COLS STEPS"] [--stencil-ranks "3 4"]
#
# Devices: POCL_DEVICES=pthread, POCL_MAX_PTHREAD_COUNT=1 on every rank. K=8 on a 2-core machine
# is oversubscribed (9 processes). Every rank is on this node: MPI moves data through shared
# memory, so "bytes sent by rank 0" is what rank 0 hands to MPI (one broadcast counts once: how
# MPI spreads it is MPI's).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${SLUICE_BUILD:-$here/../build}
sizes="1M 16M 256M"
ks="2 3 4 8"
reps=5
stencil="1024 1024 40"
stencil_ranks="3 4"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --ks) ks=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --stencil) stencil=$2; shift 2 ;;
    --stencil-ranks) stencil_ranks=$2; shift 2 ;;
    *) echo "dist_dcr.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
lib=$build/lib/libsluice.so
bench=$build/bin/sluice-bench-dist_dcr
trace_tool=$build/bin/sluice-trace
stencil_bin=$build/tests/apps/cl_stencil2d
for f in "$lib" "$bench" "$trace_tool" "$stencil_bin"; do
  [ -e "$f" ] || { echo "dist_dcr.sh: $f not found (build first, or --build DIR)" >&2; exit 2; }
done
MPIEXEC=${MPIEXEC:-mpiexec}
export POCL_DEVICES=${POCL_DEVICES:-pthread} POCL_MAX_PTHREAD_COUNT=${POCL_MAX_PTHREAD_COUNT:-1}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-dist-dcr.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# rank0_bytes TRACE_DIR [SIZE [DIRS]]: bytes rank 0 handed to MPI, CL_DIST_DATA records of the
# directions in DIRS (default 02: sent and broadcast; 1 is received), of that SIZE if given.
rank0_bytes() {
  "$trace_tool" dump "$1" | awk -v size="${2:-}" -v dirs="${3:-02}" '
    /^rank 0 / && /CL_DIST_DATA/ {
      match($0, /bytes=[0-9]+/); b = substr($0, RSTART + 6, RLENGTH - 6)
      d = substr($0, length($0), 1)
      if ((size == "" || b == size) && index(dirs, d)) s += b }
    END { printf "%.0f", s }'
}

human() { awk -v b="$1" 'BEGIN { if (b >= 1048576) printf "%.1f MiB", b / 1048576; else printf "%.1f KiB", b / 1024 }'; }

echo "# sluice distributed OpenCL: collective replacement (SLUICE_DCR) and copy removal (SLUICE_DHDCR)"
echo "# $(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown) on $(hostname), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "## 1. broadcast of one host array to K remote devices (median of $reps, after one warm-up)"
printf '%-8s %3s | %12s %12s | %10s %10s | %8s\n' size K "sent off" "sent on" "time off" "time on" "on/off"
for size in $sizes; do
  for k in $ks; do
    declare -A t=() b=()
    for mode in off on; do
      tr=$tmp/tr_${size}_${k}_$mode
      out=$(timeout 600 "$MPIEXEC" -n $((k + 1)) env SLUICE_OPENCL=distributed SLUICE_DCR=$mode \
        SLUICE_DEVICES="SELECT ALL WHERE node > 0" SLUICE_TRACE_DIR="$tr" LD_PRELOAD="$lib" \
        "$bench" "$size" "$reps") || { echo "dist_dcr.sh: run failed ($size, K=$k, $mode)" >&2; exit 1; }
      t[$mode]=$(sed -n 's/.*median_s=\([0-9.]*\).*/\1/p' <<<"$out")
      bytes=$(sed -n 's/.*bcast bytes=\([0-9]*\).*/\1/p' <<<"$out")
      b[$mode]=$(( $(rank0_bytes "$tr" "$bytes") / (reps + 1) ))
      rm -rf "$tr"
    done
    printf '%-8s %3s | %12s %12s | %9.4fs %9.4fs | %8.2f\n' "$size" "$k" "$(human "${b[off]}")" \
      "$(human "${b[on]}")" "${t[off]}" "${t[on]}" "$(awk -v a="${t[on]}" -v b="${t[off]}" 'BEGIN { print a / b }')"
    unset t b
  done
done

echo
read -r rows cols steps <<<"$stencil"
echo "## 2. halo exchange: cl_stencil2d $rows x $cols, $steps steps, one device per rank"
printf '%-6s | %14s %14s | %10s %10s | %8s\n' ranks "rank 0 off" "rank 0 on" "time off" "time on" "on/off"
row=$((cols * 4))
for n in $stencil_ranks; do
  declare -A t=() b=() h=()
  for mode in off on; do
    tr=$tmp/st_${n}_$mode
    timeout 600 "$MPIEXEC" -n "$n" env SLUICE_OPENCL=distributed SLUICE_DHDCR=$mode SLUICE_TRACE_DIR="$tr" \
      LD_PRELOAD="$lib" "$stencil_bin" "$rows" "$cols" "$steps" --time >"$tmp/st.out" 2>"$tmp/st.err" ||
      { echo "dist_dcr.sh: stencil failed ($n ranks, $mode)" >&2; exit 1; }
    t[$mode]=$(sed -n 's/.*compute \([0-9.]*\) s.*/\1/p' "$tmp/st.err")
    h[$mode]=$(grep '^hash: ' "$tmp/st.out")
    b[$mode]=$(rank0_bytes "$tr" "$row" 012)
    rm -rf "$tr"
  done
  same=$([ "${h[on]}" == "${h[off]}" ] && echo "same result" || echo "RESULTS DIFFER")
  printf '%-6s | %14s %14s | %9.4fs %9.4fs | %8.2f  (%s)\n' "$n" "$(human "${b[off]}")" "$(human "${b[on]}")" \
    "${t[off]}" "${t[on]}" "$(awk -v a="${t[on]}" -v b="${t[off]}" 'BEGIN { print a / b }')" "$same"
  unset t b h
done
echo
echo "# sent = bytes rank 0 handed to MPI per broadcast (sent one by one, or as the root of one MPI"
echo "# broadcast); rank 0 (halo) = halo-row bytes rank 0 sent or received over the whole run."
