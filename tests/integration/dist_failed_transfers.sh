# SPDX-License-Identifier: MIT
# Transfers failed by their wait list (tests/apps/cl_failed_transfers.c): writes, reads, rect
# reads, and a write, a kernel and a read on one in-order queue, each gated by a user event set
# to -44, on every device, buffer kind and size (4 KiB, 4 MiB). Under distributed OpenCL on 3 ranks,
# with the serving ranks' data by cross-memory attach and by MPI, the program sees what it sees
# on 3 local devices: the wait fails with -14, every event failed, its memory untouched (a failed
# read's destination stays as it was), and the queue then moves data as before. Before, a piece
# written after its wait list had failed stayed queued forever (PoCL does not fail a command
# enqueued behind a failed event), a command failed by its wait list settled its peer with a
# size of 0 (rank 0 then waited for 15 of 16 pieces, or MPI reported a truncated message), and
# a failed read's pieces overwrote the program's memory.
export POCL_MAX_PTHREAD_COUNT=1
POCL_DEVICES="pthread pthread pthread" "$SLUICE_APPS_DIR/cl_failed_transfers" >local.out 2>&1 \
  || fail "cl_failed_transfers on 3 local devices failed: $(tail -3 local.out)"
expect_eq "every case printed (local)" 90 "$(wc -l <local.out)"
expect_eq "every case as OpenCL says (local)" 90 \
  "$(grep -c ': wait -14, failed[ failed]*, memory untouched, then a healthy round trip$' local.out)"
for cma in on off; do
  set +e
  POCL_DEVICES=pthread timeout 300 "$MPIEXEC" -n 3 env SLUICE_OPENCL=distributed SLUICE_DIST_CMA=$cma \
    LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/cl_failed_transfers" >dist.$cma 2>dist.$cma.err
  rc=$?
  set -e
  expect_eq "3 ranks, SLUICE_DIST_CMA=$cma: exit code" 0 "$rc"
  [ ! -s dist.$cma.err ] || fail "stderr not empty: $(head -5 dist.$cma.err)"
  diff local.out dist.$cma >diff.$cma || fail "SLUICE_DIST_CMA=$cma differs from 3 local devices: $(head -10 diff.$cma)"
  echo "ok: 3 ranks, SLUICE_DIST_CMA=$cma: the same 90 lines as on 3 local devices"
done
