# SPDX-License-Identifier: MIT
# Transfers failed by their wait list (tests/apps/cl_failed_transfers.c): writes, reads, rect
# reads, and a write, a kernel and a read on one in-order queue, each gated by a user event set
# to -44, on every device, buffer kind and size (4 KiB, 4 MiB); then across devices, one host range
# written to every device (a broadcast), every device read into one host buffer (a gather), and a
# buffer that one device's kernel writes used by a failed kernel on the next device (a coherence
# move behind a failed use). Under distributed OpenCL on 2 and 3 ranks,
# with the serving ranks' data by cross-memory attach and by MPI, the program sees what it sees
# on 3 local devices: the wait fails with -14, every event failed, its memory untouched (a failed
# read's destination stays as it was), and the queue then moves data as before. Before, a piece
# written after its wait list had failed stayed queued forever (PoCL does not fail a command
# enqueued behind a failed event), a command failed by its wait list settled its peer with a
# size of 0 (rank 0 then waited for 15 of 16 pieces, or MPI reported a truncated message), and
# a failed read's pieces overwrote the program's memory, and a move that waited for a failed use
# of its buffer failed with it, so that the next device read its stale copy.
export POCL_MAX_PTHREAD_COUNT=1
POCL_DEVICES="pthread pthread pthread" "$SLUICE_APPS_DIR/cl_failed_transfers" >local.out 2>&1 \
  || fail "cl_failed_transfers on 3 local devices failed: $(tail -3 local.out)"
expect_eq "every case printed (local)" 102 "$(wc -l <local.out)"
expect_eq "every case on one device as OpenCL says (local)" 90 \
  "$(grep -c ': wait -14, failed[ failed]*, memory untouched, then a healthy round trip$' local.out)"
expect_eq "broadcasts and gathers as OpenCL says (local)" 4 \
  "$(grep -c ' 3 devices: wait -14, failed failed failed, memory untouched, then every device.s data$' local.out)"
expect_eq "the second kernel's device sees the first's result, or none (local)" 8 \
  "$(grep -c -E 'complete, kernel on device . failed: read on device . finds start \+ 1$|failed, kernel on device . failed: read on device . finds start \+ 0$' local.out)"
POCL_DEVICES="pthread pthread" "$SLUICE_APPS_DIR/cl_failed_transfers" >local2.out 2>&1 \
  || fail "cl_failed_transfers on 2 local devices failed: $(tail -3 local2.out)"
for n in 2 3; do
  ref=local.out
  [ "$n" = 3 ] || ref=local2.out
  for cma in on off; do
    POCL_DEVICES=pthread rc_of timeout 300 "$MPIEXEC" -n $n env SLUICE_OPENCL=distributed SLUICE_DIST_CMA=$cma \
      LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/cl_failed_transfers" >dist.$n.$cma 2>dist.$n.$cma.err
    expect_eq "$n ranks, SLUICE_DIST_CMA=$cma: exit code" 0 "$rc"
    [ ! -s dist.$n.$cma.err ] || fail "stderr not empty: $(head -5 dist.$n.$cma.err)"
    diff $ref dist.$n.$cma >diff.$n.$cma \
      || fail "$n ranks, SLUICE_DIST_CMA=$cma differs from $n local devices: $(head -10 diff.$n.$cma)"
    echo "ok: $n ranks, SLUICE_DIST_CMA=$cma: the same $(wc -l <$ref) lines as on $n local devices"
  done
done
