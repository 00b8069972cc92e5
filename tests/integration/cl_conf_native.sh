# SPDX-License-Identifier: MIT
# clEnqueueNativeKernel and CL_DEVICE_EXECUTION_CAPABILITIES agree (issue 15): locally PoCL
# advertises native kernels and runs them; in distributed mode the call is not forwarded (the
# function is one of rank 0's process), so no device, rank 0's or remote, advertises them, and
# the call gives CL_INVALID_OPERATION. tests/apps/cl_conf_native checks the agreement itself, on
# plain PoCL, passed through and on 2 and 3 ranks.
export POCL_MAX_PTHREAD_COUNT=1
POCL_DEVICES="pthread pthread" "$SLUICE_APPS_DIR/cl_conf_native" >plain.out
expect_eq "plain PoCL advertises and runs native kernels" 2 "$(grep -c 'advertised=1 enqueue=0 ran=1 agree=1' plain.out)"
POCL_DEVICES="pthread pthread" SLUICE_OPENCL=on LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/cl_conf_native" >on.out
diff plain.out on.out >diff.out || fail "pass-through differs: $(cat diff.out)"
for n in 2 3; do
  set +e
  POCL_DEVICES=pthread timeout 60 "$MPIEXEC" -n "$n" env SLUICE_OPENCL=distributed LD_PRELOAD="$SLUICE_LIB" \
    "$SLUICE_APPS_DIR/cl_conf_native" >"dist.$n.out" 2>"dist.$n.err"
  rc=$?
  set -e
  expect_eq "$n ranks: advert and behaviour agree (exit code)" 0 "$rc"
  expect_eq "$n ranks: no device advertises native kernels, none runs one" "$n" \
    "$(grep -c 'advertised=0 enqueue=-59 ran=0 agree=1' "dist.$n.out")"
done
