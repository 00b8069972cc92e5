# SPDX-License-Identifier: MIT
# Collective replacement's broadcast across nodes (docs/DAG.md): one host array written to the
# devices of 4 serving ranks on 4 other nodes (sluice-bench-dist_dcr, SLUICE_DCR=on) must cross
# rank 0's link about once. Counted on the link itself: the bytes node0's uplink carried (the
# head's bridge port v0 received them) during the job, against the data broadcast. An MPI_Ibcast
# (MPICH's binomial tree below 8 ranks: rank 0 sends the data to 3 members) carried 3x; the
# chain, where each member forwards pieces to the next, about 1x (and at least 1x: the count sees
# the data; with SLUICE_DCR=off, 4 writes, it counted 4.01x). The program checks the last
# member's copy (it reads its buffer back), which came through every member before it.
source "$SOURCE_DIR/tests/cluster/lib.bash"
tb_up 5
export POCL_MAX_PTHREAD_COUNT=1 POCL_DEVICES=pthread
bench=$SLUICE_BIN_DIR/sluice-bench-dist_dcr
size=$((4 << 20)) reps=1 # (one warm-up broadcast, then reps timed ones)

uplink_bytes() { "$TESTBED" run --dir "$TB_DIR" ip -s -j link show v0 | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["rx"]["bytes"])'; }

# per_bcast MODE: node0's uplink bytes per broadcast, in hundredths of the data (in PCT).
per_bcast() {
  local mode=$1 b0 b1 rc=0
  b0=$(uplink_bytes)
  tb_mpiexec -n 5 env SLUICE_OPENCL=distributed SLUICE_DCR="$mode" SLUICE_DIST_CMA=off \
    "SLUICE_DEVICES=SELECT ALL WHERE node > 0" POCL_CACHE_DIR="$SHARED/pocl" LD_PRELOAD="$SLUICE_LIB" \
    "$bench" "$size" "$reps" > "$mode.out" 2> "$mode.err" || rc=$?
  b1=$(uplink_bytes)
  expect_eq "DCR $mode: exit code ($(head -3 "$mode.err"))" 0 "$rc"
  grep -q "devices=4 " "$mode.out" || fail "DCR $mode: not 4 devices: $(cat "$mode.out")"
  PCT=$(((b1 - b0) * 100 / (size * (reps + 1))))
}
per_bcast on
on=$PCT
echo "node0's uplink per broadcast of 4 MiB to 4 nodes: $on% of the data"
[ "$on" -le 130 ] || fail "DCR on: rank 0's link carried $on% of the data per broadcast to 4 nodes (a chain: ~100%)"
[ "$on" -ge 95 ] || fail "DCR on: rank 0's link carried $on% of the data: less than the data itself"
echo "ok: a broadcast to 4 nodes crossed rank 0's link once ($on%)"
