# SPDX-License-Identifier: MIT
# Asynchronous dispatch of distributed OpenCL (docs/DISTRIBUTED.md), on 3 ranks (one pthread device each):
# tests/apps/cl_dist_async.c checks from inside the program, on its own timings and on the events'
# profiling times (rank 0's clock), that a long remote kernel enqueued non-blocking returns in far
# less than its run time, that kernels on ranks 1 and 2 overlap, that a kernel waiting for another
# rank's starts after it ended, that user events gate kernels on two remote ranks (a negative status
# fails them), that a non-blocking read lands in the program's memory with one callback, and that a
# marker failed by a user event while a long kernel it waits for runs fails at once. The
# trace has the command DAG: nodes with their rank, edges. The docs/OPENCL.md sample with user events on an
# out-of-order queue prints under distributed OpenCL what it prints locally, and so do the rect
# variants.
export POCL_MAX_PTHREAD_COUNT=1
POCL_DEVICES=pthread rc_of run_dist 3 SLUICE_OPENCL=distributed SLUICE_TRACE_DIR="$PWD/tr" \
  "$SLUICE_APPS_DIR/cl_dist_async" >async.out 2>async.err
cat async.out
expect_eq "cl_dist_async on 3 ranks: exit code" 0 "$rc"
[ ! -s async.err ] || fail "stderr not empty: $(head -5 async.err)"
if grep -q FAILED async.out; then fail "a check failed: $(grep FAILED async.out)"; fi
expect_eq "every check printed" 9 "$(grep -c ': ok$' async.out)"

"$SLUICE_BIN_DIR/sluice-trace" dump tr >dump.txt
nodes=$(grep -c 'CL_DAG_NODE' dump.txt || true)
[ "$nodes" -ge 12 ] || fail "the trace has $nodes DAG nodes, expected at least 12"
echo "ok: $nodes DAG nodes in the trace"
expect_contains "kernel nodes on rank 1" "rank=1" "$(grep 'CL_DAG_NODE' dump.txt | grep 'kernel' | head -50)"
expect_contains "kernel nodes on rank 2" "rank=2" "$(grep 'CL_DAG_NODE' dump.txt | grep 'kernel' | head -50)"
expect_contains "transfer nodes" "transfer" "$(grep 'CL_DAG_NODE' dump.txt)"
expect_contains "user event nodes" "user_event" "$(grep 'CL_DAG_NODE' dump.txt)"
# Edges by reason (bits of why): wait list, queue order. (Buffer edges exist only while the
# writer is still in the DAG, which retires completed nodes at once: not asserted.)
whys=$(grep 'CL_DAG_EDGE' dump.txt | sed 's/.*why=//')
for bit in 1 2; do
  n=0
  for w in $whys; do if (( (w & bit) != 0 )); then n=$((n + 1)); fi; done
  [ "$n" -gt 0 ] || fail "no DAG edge with reason bit $bit"
  echo "ok: $n DAG edges with reason bit $bit"
done

POCL_DEVICES=pthread "$SLUICE_APPS_DIR/cl_user_events_ooo" >ooo.local 2>&1
POCL_DEVICES=pthread rc_of mpirun 2 env SLUICE_OPENCL=distributed "SLUICE_DEVICES=SELECT ALL WHERE node = 1" \
  LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/cl_user_events_ooo" >ooo.remote 2>&1
expect_eq "cl_user_events_ooo on rank 1's device: exit code" 0 "$rc"
diff ooo.local ooo.remote >diff.out || fail "cl_user_events_ooo differs: $(head -20 diff.out)"
echo "ok: cl_user_events_ooo on rank 1's device prints what it prints locally"

# The rect variants (tests/apps/cl_dist_rect.c): a rect write on rank 1, rect reads on rank 2
# (blocking, and non-blocking with host pitches), a rect copy on rank 0's device; the output is
# the same as with 3 local devices.
POCL_DEVICES="pthread pthread pthread" "$SLUICE_APPS_DIR/cl_dist_rect" >rect.local 2>&1
POCL_DEVICES=pthread rc_of run_dist 3 SLUICE_OPENCL=distributed "$SLUICE_APPS_DIR/cl_dist_rect" \
  >rect.dist 2>&1
expect_eq "cl_dist_rect on 3 ranks: exit code" 0 "$rc"
diff rect.local rect.dist >diff.out || fail "cl_dist_rect differs from 3 local devices: $(head -20 diff.out)"
echo "ok: rect reads, writes and copies across ranks print what they print on 3 local devices"
