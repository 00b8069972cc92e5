#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Collective replacement and copy removal benchmark (docs/DAG.md section 2), on and off side by
# side in one run:
#   1. broadcast: one host array written to a buffer on each of K remote devices (ranks 1..K, one
#      device each; rank 0's own device is not used), non-blocking writes then clFinish
#      (sluice-bench-dist_dcr), for each size and K: the median time of one broadcast and the
#      bytes rank 0 handed to MPI for it (from rank 0's trace: CL_DIST_DATA, sent or broadcast),
#      with SLUICE_DCR=on and off, and the ratio on/off;
#   2. halo exchange: the unchanged cl_stencil2d on R ranks (one device each), compute time (its
#      --time line) and the halo bytes through rank 0 (sent and received, CL_DIST_DATA of one
#      halo row's size), with SLUICE_DHDCR=on and off;
#   3. the sample programs (cl_broadcast, cl_scatter_gather, cl_nbody, cl_stencil2d, fixed sizes:
#      strong scaling) on 1 to 4 ranks, one device each (rank 0's included), SLUICE_DCR and
#      SLUICE_DHDCR both on and both off: the end-to-end wall time of the job, the compute phase
#      (the sample's --time line), the parallel efficiency T(1) / (n T(n)) of the compute phase,
#      and whether the hash equals the 1-rank run's; then the libWater paper's own efficiency
#      figures where the seed holds them;
#   4. allgather: the unchanged cl_nbody on the devices of ranks 1..K only (SLUICE_DEVICES), so
#      that every slice is a serving rank's and the whole array written to every device after each
#      step is one MPI allgather among them: the program data rank 0 handed to MPI over the run
#      (CL_DIST_DATA sent, broadcast or scattered) and the compute time, SLUICE_DCR and
#      SLUICE_DHDCR both on and both off, and whether the hash is the same.
# It prints figures; it never passes or fails on them (exit 1 only when a run fails).
#
#   bench/dist_dcr.sh [--build DIR] [--mpiexec PATH] [--sizes "1M 16M 256M"] [--ks "2 3 4 8"]
#                     [--reps N] [--stencil "ROWS COLS STEPS"] [--stencil-ranks "3 4"]
#                     [--samples-ranks "1 2 3 4"] [--no-samples] [--nbody "BODIES STEPS"]
#                     [--allgather-ks "2 3"]
#
# --mpiexec: the launcher (default: $MPIEXEC, else the one the build found, SLUICE_MPIEXEC in its
# CMakeCache.txt, else mpiexec); with Open MPI the script allows running as root and
# oversubscribing (as bench/dist_h200.sh does), so it runs unchanged on the 16-core GPU machine
# (cmake -S . -B build-ompi -DSLUICE_MPI=openmpi; bench/dist_dcr.sh --build build-ompi).
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
samples_ranks="1 2 3 4"
nbody="8003 10"
allgather_ks="2 3"
launcher=${MPIEXEC:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --mpiexec) launcher=$2; shift 2 ;;
    --samples-ranks) samples_ranks=$2; shift 2 ;;
    --no-samples) samples_ranks=""; shift ;;
    --nbody) nbody=$2; shift 2 ;;
    --allgather-ks) allgather_ks=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --ks) ks=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --stencil) stencil=$2; shift 2 ;;
    --stencil-ranks) stencil_ranks=$2; shift 2 ;;
    *) echo "dist_dcr.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -d "$build" ] || { echo "dist_dcr.sh: build folder $build not found (--build DIR)" >&2; exit 2; }
build=$(cd "$build" && pwd)
lib=$build/lib/libsluice.so
bench=$build/bin/sluice-bench-dist_dcr
trace_tool=$build/bin/sluice-trace
stencil_bin=$build/tests/apps/cl_stencil2d
for f in "$lib" "$bench" "$trace_tool" "$stencil_bin"; do
  [ -e "$f" ] || { echo "dist_dcr.sh: $f not found (build first, or --build DIR)" >&2; exit 2; }
done
if [ -z "$launcher" ] && [ -f "$build/CMakeCache.txt" ]; then
  launcher=$(sed -n 's/^SLUICE_MPIEXEC:FILEPATH=//p' "$build/CMakeCache.txt")
  # By its real path (/bin/mpiexec.openmpi makes Open MPI abort).
  [ -n "$launcher" ] && launcher=$(readlink -f "$launcher")
fi
MPIEXEC=${launcher:-mpiexec}
command -v "$MPIEXEC" >/dev/null || { echo "dist_dcr.sh: launcher $MPIEXEC not found (--mpiexec PATH)" >&2; exit 2; }
if "$MPIEXEC" --version 2>&1 | grep -q -E "Open MPI|OpenRTE"; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
fi
export POCL_DEVICES=${POCL_DEVICES:-pthread} POCL_MAX_PTHREAD_COUNT=${POCL_MAX_PTHREAD_COUNT:-1}
# Collective replacement serves ranks rank 0 reaches by MPI; on its node the ranks copy by CMA
# instead and nothing is rewritten (docs/DAG.md). So by default every rank stands for a rank of
# another node; SLUICE_DIST_CMA=on measures what a job on one node gets.
export SLUICE_DIST_CMA=${SLUICE_DIST_CMA:-off}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-dist-dcr.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# rank0_bytes TRACE_DIR [SIZE [DIRS [MAXK]]]: bytes rank 0 handed to MPI, CL_DIST_DATA records of
# the directions in DIRS (default 02: sent and broadcast; 1 is received, 3 a scatter), of that
# SIZE if given; a scatter (3) of up to MAXK (default 1) pieces of that size counts too.
rank0_bytes() {
  "$trace_tool" dump "$1" | awk -v size="${2:-}" -v dirs="${3:-02}" -v maxk="${4:-1}" '
    /^rank 0 / && /CL_DIST_DATA/ {
      match($0, /bytes=[0-9]+/); b = substr($0, RSTART + 6, RLENGTH - 6)
      d = substr($0, length($0), 1)
      ok = size == "" || b == size || (d == 3 && b % size == 0 && b <= maxk * size)
      if (ok && index(dirs, d)) s += b }
    END { printf "%.0f", s }'
}

human() { awk -v b="$1" 'BEGIN { if (b >= 1048576) printf "%.1f MiB", b / 1048576; else printf "%.1f KiB", b / 1024 }'; }

echo "# sluice distributed OpenCL: collective replacement (SLUICE_DCR) and copy removal (SLUICE_DHDCR)"
echo "# $(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown) on $(hostname), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# launcher: $MPIEXEC ($("$MPIEXEC" --version 2>&1 | head -1)); SLUICE_DIST_CMA=$SLUICE_DIST_CMA"
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
    b[$mode]=$(rank0_bytes "$tr" "$row" 0123 "$n") # (halo rows of adjacent bands go as one scatter)
    rm -rf "$tr"
  done
  same=$([ "${h[on]}" == "${h[off]}" ] && echo "same result" || echo "RESULTS DIFFER")
  printf '%-6s | %14s %14s | %9.4fs %9.4fs | %8.2f  (%s)\n' "$n" "$(human "${b[off]}")" "$(human "${b[on]}")" \
    "${t[off]}" "${t[on]}" "$(awk -v a="${t[on]}" -v b="${t[off]}" 'BEGIN { print a / b }')" "$same"
  unset t b h
done

if [ -n "$samples_ranks" ]; then
  echo
  echo "## 3. the samples, strong scaling: one device per rank (rank 0's included), DCR and DHDCR both on / both off"
  printf '%-34s %5s | %9s %9s | %9s %9s | %6s %6s | %s\n' sample ranks "wall on" "wall off" "comp on" \
    "comp off" "eff on" "eff off" "hash (vs 1 rank)"
  for app in "cl_broadcast 262147 8" "cl_scatter_gather 1000003 10" "cl_nbody 2003 6" "cl_stencil2d 1023 1021 20"; do
    read -r prog a1 a2 a3 <<<"$app"
    args=("$a1" "$a2" ${a3:+"$a3"})
    declare -A comp1=() ref=()
    # One run first, not counted (kernel compilation caches); the two modes alternate which goes first.
    "$MPIEXEC" -n 1 env SLUICE_OPENCL=distributed LD_PRELOAD="$lib" "$build/tests/apps/$prog" "${args[@]}" \
      >/dev/null 2>&1 || true
    order="on off"
    for n in $samples_ranks; do
      declare -A w=() c=() h=()
      for mode in $order; do
        t0=$(date +%s.%N)
        timeout 600 "$MPIEXEC" -n "$n" env SLUICE_OPENCL=distributed SLUICE_DCR=$mode SLUICE_DHDCR=$mode \
          LD_PRELOAD="$lib" "$build/tests/apps/$prog" "${args[@]}" --time >"$tmp/s.out" 2>"$tmp/s.err" ||
          { echo "dist_dcr.sh: $prog failed ($n ranks, $mode): $(head -3 "$tmp/s.err")" >&2; exit 1; }
        t1=$(date +%s.%N)
        w[$mode]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
        c[$mode]=$(sed -n 's/.*compute \([0-9.]*\) s.*/\1/p' "$tmp/s.err")
        h[$mode]=$(grep '^hash: ' "$tmp/s.out")
        [ -n "${comp1[$mode]:-}" ] || { comp1[$mode]=${c[$mode]}; ref[$mode]=${h[$mode]}; }
      done
      eff() { awk -v t1="${comp1[$1]}" -v tn="${c[$1]}" -v n="$n" 'BEGIN { printf "%.2f", t1 / (n * tn) }'; }
      same=$([ "${h[on]}" == "${ref[on]}" ] && [ "${h[off]}" == "${ref[on]}" ] && echo same || echo "DIFFERENT")
      printf '%-34s %5s | %8ss %8ss | %8ss %8ss | %6s %6s | %s\n' "$prog ${args[*]}" "$n" "${w[on]}" "${w[off]}" \
        "${c[on]}" "${c[off]}" "$(eff on)" "$(eff off)" "$same"
      unset w c h
      order=$([ "$order" == "on off" ] && echo "off on" || echo "on off")
    done
    unset comp1 ref
  done
  echo
  echo "# libWater (Grasso et al., JPDC 2014), its own efficiency figures: the seed this project has"
  echo "# (../shared/seeds/001_bdfb75a8ca0ee10b.txt) holds the paper's sections 1 to 4 only, without its"
  echo "# evaluation (section 7, figures and tables of efficiency): none printed, none invented."
fi
if [ -n "$allgather_ks" ]; then
  read -r bodies nsteps <<<"$nbody"
  echo
  echo "## 4. allgather: cl_nbody $bodies bodies, $nsteps steps, on the devices of ranks 1..K (DCR and DHDCR both on / both off)"
  printf '%-3s | %14s %14s | %10s %10s | %8s | %s\n' K "rank 0 off" "rank 0 on" "comp off" "comp on" "on/off" \
    "allgathers on"
  for k in $allgather_ks; do
    declare -A t=() b=() h=()
    for mode in off on; do
      tr=$tmp/ag_${k}_$mode
      timeout 600 "$MPIEXEC" -n $((k + 1)) env SLUICE_OPENCL=distributed SLUICE_DCR=$mode SLUICE_DHDCR=$mode \
        SLUICE_DEVICES="SELECT ALL WHERE node > 0" SLUICE_TRACE_DIR="$tr" LD_PRELOAD="$lib" \
        "$build/tests/apps/cl_nbody" "$bodies" "$nsteps" --time >"$tmp/ag.out" 2>"$tmp/ag.err" ||
        { echo "dist_dcr.sh: cl_nbody failed (K=$k, $mode): $(head -3 "$tmp/ag.err")" >&2; exit 1; }
      t[$mode]=$(sed -n 's/.*compute \([0-9.]*\) s.*/\1/p' "$tmp/ag.err")
      h[$mode]=$(grep '^hash: ' "$tmp/ag.out")
      b[$mode]=$(rank0_bytes "$tr" "" 023)
      [ "$mode" == on ] && ag=$("$trace_tool" dump "$tr" | grep -cE '^rank 0 .*CL_DIST_DATA .*direction=5$' || true)
      rm -rf "$tr"
    done
    same=$([ "${h[on]}" == "${h[off]}" ] && echo "same result" || echo "RESULTS DIFFER")
    printf '%-3s | %14s %14s | %9.4fs %9.4fs | %8.2f | %s  (%s)\n' "$k" "$(human "${b[off]}")" "$(human "${b[on]}")" \
      "${t[off]}" "${t[on]}" "$(awk -v a="${t[on]}" -v b="${t[off]}" 'BEGIN { print a / b }')" "$ag" "$same"
    unset t b h
  done
fi
echo
echo "# sent = bytes rank 0 handed to MPI per broadcast (sent one by one, or as the root of one MPI"
echo "# broadcast); rank 0 (halo) = halo-row bytes rank 0 sent or received over the whole run;"
echo "# wall = the whole job (start-up included); comp = the sample's compute phase; eff = comp(1) / (n comp(n))."
echo "# rank 0 (allgather) = program data rank 0 sent, broadcast or scattered over the whole n-body run."
