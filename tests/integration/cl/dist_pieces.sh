# SPDX-License-Identifier: MIT
# Bulk data of distributed OpenCL in pieces (SLUICE_DIST_CHUNK, docs/ENV.md): cl_dist_pieces
# writes and reads back buffers of odd sizes (1 byte to 3 MiB + 5, around the piece bounds) on
# rank 1's device, blocking and in slices, on an in-order and an out-of-order queue, and checks
# every byte. Its output must be what it prints on a local device: with the default pieces, with
# 4 KiB pieces (hundreds of pieces per buffer, each received a few ahead of the device copies),
# and with rank 0 and rank 1 started with different SLUICE_DIST_CHUNK values (rank 0's holds on
# both: without that the two ends cut at different offsets and the bytes land in the wrong
# places). Odd rank counts: 3 ranks with the device of rank 2. The serving rank copies the data
# from and to rank 0's memory itself (SLUICE_DIST_CMA), and with that off it comes by MPI.
export POCL_MAX_PTHREAD_COUNT=1 POCL_DEVICES=pthread
app=$SLUICE_APPS_DIR/cl_dist_pieces
timeout 60 "$app" >local.out 2>&1 || fail "cl_dist_pieces on the local device: $(head -3 local.out)"
expect_eq "sizes checked locally" 14 "$(grep -c ': ok, checksum' local.out)"

# remote LABEL NRANKS NODE RANK0_ENV RANK1_ENV: cl_dist_pieces on the device of rank NODE.
remote() {
  local label=$1 n=$2 node=$3 env0=$4 envn=$5 rc=0
  local common=(SLUICE_OPENCL=distributed "SLUICE_DEVICES=SELECT ALL WHERE node = $node" LD_PRELOAD="$SLUICE_LIB")
  set +e
  if [ "$n" = 2 ]; then
    timeout 120 "$MPIEXEC" -n 1 env "${common[@]}" $env0 "$app" : -n 1 env "${common[@]}" $envn "$app" \
      >"$label.out" 2>"$label.err"
  else
    timeout 120 "$MPIEXEC" -n 1 env "${common[@]}" $env0 "$app" : -n $((n - 1)) env "${common[@]}" $envn \
      "$app" >"$label.out" 2>"$label.err"
  fi
  rc=$?
  set -e
  expect_eq "$label: exit code" 0 "$rc"
  diff local.out "$label.out" >diff.out || fail "$label differs from the local run: $(head -8 diff.out) $(head -3 "$label.err")"
  echo "ok: $label prints what the local run prints"
}
remote "default pieces, 2 ranks" 2 1 "SLUICE_TRACE_DIR=$PWD/tr_cma" "SLUICE_TRACE_DIR=$PWD/tr_cma"
remote "SLUICE_DIST_CMA=off, 2 ranks" 2 1 "SLUICE_DIST_CMA=off SLUICE_TRACE_DIR=$PWD/tr_mpi" "SLUICE_TRACE_DIR=$PWD/tr_mpi"
remote "4 KiB pieces, 2 ranks" 2 1 SLUICE_DIST_CHUNK=4K SLUICE_DIST_CHUNK=4K
remote "rank 0 4 KiB, rank 1 1 MiB" 2 1 SLUICE_DIST_CHUNK=4K SLUICE_DIST_CHUNK=1M
remote "rank 0 by size, rank 1 16 KiB" 2 1 "" SLUICE_DIST_CHUNK=16K
remote "rank 0 8 KiB, ranks 1-2 by size, device of rank 2, 3 ranks" 3 2 SLUICE_DIST_CHUNK=8K ""

# Cross-memory attach (SLUICE_DIST_CMA, docs/ENV.md): every write and read of the run above went
# as a copy the serving rank made from or to rank 0's memory (CL_DIST_CMA on rank 1, as many as
# rank 0's CL_DIST_DATA records, in each direction); with it off, none did, and the output was the
# same. On 3 ranks both serving ranks copy (the run below).
"$SLUICE_BIN_DIR/sluice-trace" dump tr_cma >cma.txt
"$SLUICE_BIN_DIR/sluice-trace" dump tr_mpi >mpi.txt
for d in 0 1; do
  n=$(grep -cE "^rank 0 .*CL_DIST_DATA peer rank=1, .*direction=$d$" cma.txt || true)
  [ "$n" -gt 10 ] || fail "CMA run: only $n CL_DIST_DATA records of direction $d on rank 0"
  expect_eq "CMA run: copies of direction $d made by rank 1" "$n" "$(grep -cE "^rank 1 .*CL_DIST_CMA .*direction=$d dur=" cma.txt || true)"
done
expect_eq "SLUICE_DIST_CMA=off: no copies by CMA" 0 "$(grep -c CL_DIST_CMA mpi.txt || true)"
expect_eq "SLUICE_DIST_CMA=off: the data still counted" "$(grep -c 'CL_DIST_DATA' cma.txt)" "$(grep -c 'CL_DIST_DATA' mpi.txt)"
remote "CMA, device of rank 2, 3 ranks" 3 2 "SLUICE_TRACE_DIR=$PWD/tr_cma3" "SLUICE_TRACE_DIR=$PWD/tr_cma3"
"$SLUICE_BIN_DIR/sluice-trace" dump tr_cma3 >cma3.txt
expect_eq "3 ranks: rank 2's copies are rank 0's transfers to it" \
  "$(grep -cE '^rank 0 .*CL_DIST_DATA peer rank=2, ' cma3.txt || true)" "$(grep -cE '^rank 2 .*CL_DIST_CMA ' cma3.txt || true)"
echo "ok: transfers on this node go by CMA, and by MPI with SLUICE_DIST_CMA=off"

# A bad value is one line naming the variable, and the program does not run.
SLUICE_OPENCL=distributed SLUICE_DIST_CHUNK=1K rc_of timeout 30 env LD_PRELOAD="$SLUICE_LIB" "$app" >bad.out 2>bad.err
expect_contains "bad SLUICE_DIST_CHUNK named" "SLUICE_DIST_CHUNK" "$(cat bad.err)"
[ "$rc" != 0 ] || fail "a bad SLUICE_DIST_CHUNK still ran the program"
