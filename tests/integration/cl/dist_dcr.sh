# SPDX-License-Identifier: MIT
# Collective replacement and copy removal in distributed OpenCL (docs/DAG.md section 2),
# on the unchanged sample programs of docs/DISTRIBUTED.md with odd sizes:
#   - cl_broadcast (one input written to every device), cl_nbody (every block written to every
#     device each step), cl_stencil2d (halo rows read from one band and written to its
#     neighbours) print the hash of a single process with one local device, on 1 to 4 ranks,
#     with SLUICE_DCR and SLUICE_DHDCR on (the default) and off;
#   - from the traces on 4 ranks: with DCR on, rank 0 roots one MPI broadcast of the input and
#     sends it to nobody one by one (about one copy instead of three), each serving rank receives
#     it from rank 0 once, and the CL_DCR records name the three writes replaced; with it off,
#     rank 0 sends three copies. In the stencil with DHDCR on, every halo write after the first
#     step moves rank to rank (CL_DCR p2p, MPI_RECV from a serving rank) and rank 0 sends no halo
#     rows after the first step; with it off it sends every one. In cl_scatter_gather with DCR on,
#     rank 0 roots one MPI scatter of the serving ranks' slices per step, none sent one by one.
#   - cl_nbody on the serving ranks' devices only (2, 3, 4 ranks): the whole positions array written
#     to every device after each step is one MPI allgather among the serving ranks, rank 0 sending
#     it once in all instead of once per device and step.
#   - with cross-memory attach on (SLUICE_DIST_CMA, every rank here is on rank 0's node), the
#     broadcast is not rewritten: each serving rank copies the input out of rank 0's memory
#     itself (K copies at once beat one MPI broadcast on a node). Everything else runs with it
#     off: collective replacement serves the ranks rank 0 reaches by MPI (other nodes).
export POCL_MAX_PTHREAD_COUNT=1 SLUICE_DIST_CMA=off
# Rewrites are counted per step: a window that closed by time (1 ms without an enqueue, while
# the program's thread was off its core on a loaded machine) would split a step (docs/ENV.md).
export SLUICE_DCR_WINDOW=50000

n_bcast=40009 # floats: 160036 bytes
bodies=1001
steps=5
n_sg=30011 # floats, split in slices of odd sizes

run() { # run LABEL RANKS OUT TRACE ENV... -- PROGRAM ARGS...
  local label=$1 n=$2 out=$3 trace=$4
  shift 4
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  set +e
  POCL_DEVICES=pthread timeout 120 "$MPIEXEC" -n "$n" env SLUICE_OPENCL=distributed ${trace:+SLUICE_TRACE_DIR="$trace"} \
    "${envs[@]}" LD_PRELOAD="$SLUICE_LIB" "$@" >"$out" 2>"$out.err"
  local rc=$?
  set -e
  [ "$rc" == 0 ] || fail "$label: exit code $rc: $(head -5 "$out.err")"
  [ ! -s "$out.err" ] || fail "$label: printed on stderr: $(head -5 "$out.err")"
}

same_hash() { # same_hash LABEL REF OUT
  expect_eq "$1" "$(grep '^hash: ' "$2")" "$(grep '^hash: ' "$3")"
}

# cl_scatter_gather also writes each result slice to the next device while its read is pending
# (the write waits on the read): rank 0 must send the bytes the read brings, not what the host
# memory held at enqueue (it did, with DHDCR off or rank 0's own device at either end), so it
# runs with every combination of the two switches.
for app in "cl_broadcast $n_bcast 7" "cl_nbody $bodies $steps" "cl_stencil2d 67 45 9" "cl_scatter_gather $n_sg 5"; do
  read -r prog a1 a2 a3 <<<"$app"
  args=("$a1" "$a2" ${a3:+"$a3"})
  modes="on:on off:off"
  [ "$prog" == cl_scatter_gather ] && modes="on:on off:off on:off off:on"
  POCL_DEVICES=pthread "$SLUICE_APPS_DIR/$prog" "${args[@]}" >"$prog.ref" 2>&1
  for n in 1 2 3 4; do
    for mode in $modes; do
      dcr=${mode%:*} dhdcr=${mode#*:}
      trace=""
      [ "$n" == 4 ] && [ "$dcr" == "$dhdcr" ] && trace="$PWD/tr_${prog}_$dcr"
      run "$prog on $n ranks, DCR $dcr, DHDCR $dhdcr" "$n" "$prog.$n.$dcr.$dhdcr" "$trace" SLUICE_DCR=$dcr \
        SLUICE_DHDCR=$dhdcr -- "$SLUICE_APPS_DIR/$prog" "${args[@]}"
      same_hash "$prog on $n ranks, DCR $dcr, DHDCR $dhdcr: the hash of one local device" "$prog.ref" \
        "$prog.$n.$dcr.$dhdcr"
    done
  done
done

# The same with the device-host-device copy as a one-row clEnqueueWriteBufferRect (rank 0 packs
# a rect write's host region: after the read landed, not at enqueue).
POCL_DEVICES=pthread "$SLUICE_APPS_DIR/cl_scatter_gather" "$n_sg" 3 --rect >sgr.ref 2>&1
for n in 2 3 4; do
  for mode in off:off on:off; do
    dcr=${mode%:*} dhdcr=${mode#*:}
    run "cl_scatter_gather --rect on $n ranks, DCR $dcr, DHDCR $dhdcr" "$n" "sgr.$n.$dcr" "" SLUICE_DCR=$dcr \
      SLUICE_DHDCR=$dhdcr -- "$SLUICE_APPS_DIR/cl_scatter_gather" "$n_sg" 3 --rect
    same_hash "cl_scatter_gather --rect on $n ranks, DCR $dcr, DHDCR $dhdcr: the hash of one local device" \
      sgr.ref "sgr.$n.$dcr"
  done
done

# Bytes of program data rank 0 handed to MPI itself (sent, or broadcast), and of a given size.
rank0_sent() { # rank0_sent DUMP BYTES
  grep -E '^rank 0 .*CL_DIST_DATA peer rank=[0-9]+, bytes='"$2"', direction=(0|2)$' "$1" | wc -l
}

bytes=$((n_bcast * 4))
"$SLUICE_BIN_DIR/sluice-trace" dump tr_cl_broadcast_on >b_on.txt
"$SLUICE_BIN_DIR/sluice-trace" dump tr_cl_broadcast_off >b_off.txt
expect_eq "DCR on: rank 0 roots one broadcast of the input to 3 ranks" 1 \
  "$(grep -cE '^rank 0 .*CL_DIST_DATA peer rank=3, bytes='$bytes', direction=2$' b_on.txt)"
expect_eq "DCR on: rank 0 sends the input to nobody one by one (one copy in all)" 1 "$(rank0_sent b_on.txt $bytes)"
expect_eq "DCR on: the three writes replaced are named" 3 "$(grep -cE '^rank 0 .*CL_DCR operation="bcast", command id=[0-9]+, source rank=0' b_on.txt)"
for r in 1 2 3; do
  expect_eq "DCR on: rank $r receives the input from rank 0 once" 1 \
    "$(grep -cE "^rank $r .*MPI_RECV peer rank=0, bytes=$bytes," b_on.txt)"
done
expect_eq "DCR off: rank 0 sends three copies" 3 "$(rank0_sent b_off.txt $bytes)"
expect_eq "DCR off: no rewrite" 0 "$(grep -c 'CL_DCR' b_off.txt || true)"
run "cl_broadcast on 4 ranks, DCR on, CMA on" 4 b_cma.out "$PWD/tr_b_cma" SLUICE_DIST_CMA=on -- \
  "$SLUICE_APPS_DIR/cl_broadcast" "$n_bcast" 7
same_hash "cl_broadcast on 4 ranks, DCR on, CMA on: the hash of one local device" cl_broadcast.ref b_cma.out
"$SLUICE_BIN_DIR/sluice-trace" dump tr_b_cma >b_cma.txt
expect_eq "DCR on, CMA on: no broadcast rewritten" 0 "$(grep -c 'CL_DCR operation="bcast"' b_cma.txt || true)"
for r in 1 2 3; do
  expect_eq "DCR on, CMA on: rank $r copies the input from rank 0's memory once" 1 \
    "$(grep -cE "^rank $r .*CL_DIST_CMA command id=[0-9]+, bytes=$bytes, direction=0 " b_cma.txt)"
done

# As programs are often written: each device's queue, buffers and kernels created inside the loop
# that writes the input, with status and info queries, a kernel argument and a flush between the
# writes. None of them closes the window: still one broadcast (docs/DAG.md, "The window").
run "cl_broadcast --inloop on 4 ranks, DCR on" 4 b_loop.out "$PWD/tr_b_loop" -- \
  "$SLUICE_APPS_DIR/cl_broadcast" "$n_bcast" 7 --inloop
same_hash "cl_broadcast --inloop on 4 ranks: the hash of one local device" cl_broadcast.ref b_loop.out
"$SLUICE_BIN_DIR/sluice-trace" dump tr_b_loop >b_loop.txt
expect_eq "--inloop, DCR on: rank 0 sends one copy of the input (creations keep the window open)" 1 \
  "$(rank0_sent b_loop.txt $bytes)"
expect_eq "--inloop, DCR on: the three writes replaced are named" 3 \
  "$(grep -cE '^rank 0 .*CL_DCR operation="bcast", command id=[0-9]+, source rank=0' b_loop.txt)"

# n-body: every step's positions (bodies x 16 bytes) go to the three serving ranks' devices.
pos=$((bodies * 16))
"$SLUICE_BIN_DIR/sluice-trace" dump tr_cl_nbody_on >n_on.txt
"$SLUICE_BIN_DIR/sluice-trace" dump tr_cl_nbody_off >n_off.txt
expect_eq "n-body DCR on: one broadcast per step" "$steps" \
  "$(grep -cE '^rank 0 .*CL_DIST_DATA peer rank=3, bytes='$pos', direction=2$' n_on.txt)"
expect_eq "n-body DCR on: rank 0 sends one copy per step" "$steps" "$(rank0_sent n_on.txt $pos)"
expect_eq "n-body DCR off: rank 0 sends three copies per step" $((3 * steps)) "$(rank0_sent n_off.txt $pos)"

# Allgather: n-body on the serving ranks' devices only (rank 0's device computes no slice). After
# the first step every device's slice was read into the host array (one gather to rank 0); the
# writes of the whole array to every device become one MPI allgather among the serving ranks per
# step, each giving the slice its device computed: rank 0 sends the positions only once (the
# first step's broadcast), not once per step, with the same hash as one local device.
for n in 2 3 4; do
  nodes=$(seq -s ', ' 1 $((n - 1)))
  for mode in on off; do
    trace=""
    [ "$n" != 2 ] && trace="$PWD/ag_${n}_$mode"
    run "n-body on the devices of ranks $nodes, DCR $mode" "$n" "ag.$n.$mode" "$trace" SLUICE_DCR=$mode \
      SLUICE_DHDCR=$mode "SLUICE_DEVICES=SELECT ALL FROM NODE $nodes" -- "$SLUICE_APPS_DIR/cl_nbody" $bodies $steps
    same_hash "n-body on the devices of ranks $nodes, DCR $mode: the hash of one local device" cl_nbody.ref \
      "ag.$n.$mode"
  done
done
for n in 3 4; do
  k=$((n - 1))
  "$SLUICE_BIN_DIR/sluice-trace" dump "ag_${n}_on" >"ag_${n}_on.txt"
  "$SLUICE_BIN_DIR/sluice-trace" dump "ag_${n}_off" >"ag_${n}_off.txt"
  expect_eq "allgather on $n ranks: one allgather among the $k serving ranks per step after the first" \
    $((steps - 1)) "$(grep -cE '^rank 0 .*CL_DIST_DATA peer rank='$k', bytes='$pos', direction=5$' "ag_${n}_on.txt")"
  expect_eq "allgather on $n ranks: every serving rank's writes replaced, sources ranks 1 to $k" \
    $((k * (steps - 1))) "$(grep -cE '^rank 0 .*CL_DCR operation="allgather", command id=[0-9]+, source rank='$(((1 << n) - 2))'$' "ag_${n}_on.txt")"
  # The first step's writes are one broadcast, or (a window closed by time under load) some of
  # them one by one: at most $k copies; none after it.
  sent=$(grep -E '^rank 0 .*CL_DIST_DATA .*direction=(0|2)$' "ag_${n}_on.txt" | sed 's/.*bytes=\([0-9]*\).*/\1/' |
    awk '{s += $1} END {print s + 0}')
  echo "allgather on $n ranks: rank 0 sent $sent bytes of program data (DCR off: $((k * steps * pos)))"
  expect_eq "allgather on $n ranks: rank 0 sends the positions for the first step only ($pos to $((k * pos)) bytes)" 1 \
    "$((sent >= pos && sent <= k * pos))"
  expect_contains "allgather on $n ranks: sluice-trace summary counts the allgathers and the writes replaced" \
    "$(printf '  %-10s %11d %12s %17d' allgather $((steps - 1)) "$(awk -v b=$(((steps - 1) * pos)) 'BEGIN {printf "%.1f KiB", b / 1024}')" $((k * (steps - 1))))" \
    "$("$SLUICE_BIN_DIR/sluice-trace" summary --no-symbols "ag_${n}_on")"
  expect_eq "allgather on $n ranks, DCR off: rank 0 sends $k copies per step" $((k * steps)) \
    "$(rank0_sent "ag_${n}_off.txt" $pos)"
  expect_eq "allgather on $n ranks, DCR off: no allgather" 0 "$(grep -c 'CL_DCR operation="allgather"' "ag_${n}_off.txt" || true)"
  for r in $(seq 1 $k); do
    expect_eq "allgather on $n ranks: rank $r receives the positions from rank 0 once" 1 \
      "$(grep -cE "^rank $r .*MPI_RECV peer rank=0, bytes=$pos," "ag_${n}_on.txt")"
  done
done

# Stencil: 45 columns of floats per halo row; 4 bands, so 6 halo writes per exchange, 8
# exchanges (every step but the last). Rank 0's own band (device 0) takes part: the 2 halo rows
# it reads from rank 1 and the one it gives rank 1 go through rank 0 either way.
row=$((45 * 4))
"$SLUICE_BIN_DIR/sluice-trace" dump tr_cl_stencil2d_on >s_on.txt
"$SLUICE_BIN_DIR/sluice-trace" dump tr_cl_stencil2d_off >s_off.txt
p2p=$(grep -cE '^rank 0 .*CL_DCR operation="p2p"' s_on.txt || true)
expect_eq "stencil DHDCR on: the halo writes between serving ranks move rank to rank" $((4 * 8)) "$p2p"
expect_eq "stencil DHDCR on: serving ranks receive halos from serving ranks" $((4 * 8)) \
  "$(grep -cE "^rank [123] .*MPI_RECV peer rank=[123], bytes=$row," s_on.txt)"
sent_on=$(grep -cE '^rank 0 .*CL_DIST_DATA peer rank=[123], bytes='$row', direction=0$' s_on.txt)
sent_off=$(grep -cE '^rank 0 .*CL_DIST_DATA peer rank=[123], bytes='$row', direction=0$' s_off.txt)
expect_eq "stencil DHDCR off: rank 0 sends every halo row to serving ranks" $((5 * 8)) "$sent_off"
expect_eq "stencil DHDCR on: rank 0 sends only rank 1 the row from its own band" $((1 * 8)) "$sent_on"

# Scatter: cl_scatter_gather writes 4 disjoint slices of one array (30011 floats: 7502 on rank
# 0's own device, 7503 = 30012 bytes on each serving rank) at every step. With DCR on, rank 0
# roots one MPI scatter per step of the three serving ranks' slices (their sum, 90036 bytes,
# once) and sends none of them one by one; each serving rank receives its slice from rank 0 once
# per step. With it off, rank 0 sends the three slices one by one: the same bytes.
slice=30012
"$SLUICE_BIN_DIR/sluice-trace" dump tr_cl_scatter_gather_on >g_on.txt
"$SLUICE_BIN_DIR/sluice-trace" dump tr_cl_scatter_gather_off >g_off.txt
expect_eq "scatter DCR on: one scatter of the three slices per step" 5 \
  "$(grep -cE '^rank 0 .*CL_DIST_DATA peer rank=3, bytes='$((3 * slice))', direction=3$' g_on.txt)"
expect_eq "scatter DCR on: the 15 slice writes replaced are named" 15 \
  "$(grep -cE '^rank 0 .*CL_DCR operation="scatter", command id=[0-9]+, source rank=0' g_on.txt)"
expect_eq "scatter DCR on: rank 0 sends no slice one by one" 0 "$(rank0_sent g_on.txt $slice)"
for r in 1 2 3; do
  expect_eq "scatter DCR on: rank $r receives its slice from rank 0 once per step" 5 \
    "$(grep -cE "^rank $r .*MPI_RECV peer rank=0, bytes=$slice," g_on.txt)"
done
# Off, the same size also goes out for the result slices of ranks 1 and 2 written to the next
# rank (DHDCR off: through rank 0): 3 x 5 input slices + 2 x 5 results.
expect_eq "scatter DCR off: rank 0 sends every slice one by one" 25 "$(rank0_sent g_off.txt $slice)"
expect_eq "scatter DCR off: no scatter" 0 "$(grep -c 'CL_DCR operation="scatter"' g_off.txt || true)"

# Gather: the result slices are read back into one array at every step (non-blocking reads, in
# the window the scatter opened). With DCR on, the three serving ranks' slices land by one MPI
# gather per step (their sum, once) and none is received one by one; only the final read of the
# sums (after the window) is. With it off every slice comes one by one: 3 per step + those 2.
expect_eq "gather DCR on: one gather of the three slices per step" 5 \
  "$(grep -cE '^rank 0 .*CL_DIST_DATA peer rank=3, bytes='$((3 * slice))', direction=4$' g_on.txt)"
for r in 1 2 3; do
  expect_eq "gather DCR on: rank $r's 5 reads replaced are named" 5 \
    "$(grep -cE '^rank 0 .*CL_DCR operation="gather", command id=[0-9]+, source rank='$r'$' g_on.txt)"
done
expect_eq "gather DCR on: rank 0 receives no result slice one by one" 2 \
  "$(grep -cE '^rank 0 .*CL_DIST_DATA peer rank=[123], bytes='$slice', direction=1$' g_on.txt)"
expect_eq "gather DCR off: rank 0 receives every result slice one by one" 17 \
  "$(grep -cE '^rank 0 .*CL_DIST_DATA peer rank=[123], bytes='$slice', direction=1$' g_off.txt)"
expect_eq "gather DCR off: no gather" 0 "$(grep -c 'CL_DCR operation="gather"' g_off.txt || true)"
