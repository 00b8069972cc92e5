# SPDX-License-Identifier: MIT
# A kernel with 70 buffer arguments under distributed OpenCL (docs/DISTRIBUTED.md): tests/apps/cl_dist_many_args
# writes 69 inputs through device 2's queue and runs the kernel on device 1, so on 3 ranks each
# input moves rank 2 -> rank 1 and the kernel has to wait for all of them (every use is recorded,
# none dropped past the 64th). Its output is that of 3 local devices, with no wrong value.
export POCL_MAX_PTHREAD_COUNT=1
POCL_DEVICES="pthread pthread pthread" "$SLUICE_APPS_DIR/cl_dist_many_args" >local.out 2>&1
POCL_DEVICES=pthread rc_of timeout 120 "$MPIEXEC" -n 3 env SLUICE_OPENCL=distributed SLUICE_TRACE_DIR="$PWD/tr" \
  LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/cl_dist_many_args" >dist.out 2>&1
expect_eq "exit code on 3 ranks" 0 "$rc"
expect_contains "every result right" "wrong=0" "$(cat dist.out)"
diff local.out dist.out >diff.out || fail "output differs from three local devices: $(cat diff.out)"
echo "ok: the output of three local devices"
"$SLUICE_BIN_DIR/sluice-trace" dump tr >dump.txt
expect_eq "all 69 inputs move rank 2 -> rank 1" 69 "$(grep -cE '^rank 1 .*MPI_RECV peer rank=2, bytes=262144,' dump.txt || true)"
