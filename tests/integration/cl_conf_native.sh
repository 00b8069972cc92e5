# SPDX-License-Identifier: MIT
# clEnqueueNativeKernel and CL_DEVICE_EXECUTION_CAPABILITIES agree (issue 15): PoCL advertises
# native kernels and runs them, locally and in distributed mode, where the function runs on its
# device's rank (the same executable: dist_native.c). tests/apps/cl_conf_native checks the
# agreement itself, on plain PoCL, passed through and on 1, 2 and 3 ranks (rank 0's own device and
# remote ones).
export POCL_MAX_PTHREAD_COUNT=1
POCL_DEVICES="pthread pthread" "$SLUICE_APPS_DIR/cl_conf_native" >plain.out
expect_eq "plain PoCL advertises and runs native kernels" 2 "$(grep -c 'advertised=1 enqueue=0 ran=1 agree=1' plain.out)"
POCL_DEVICES="pthread pthread" SLUICE_OPENCL=on LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/cl_conf_native" >on.out
diff plain.out on.out >diff.out || fail "pass-through differs: $(cat diff.out)"
for n in 1 2 3; do
  set +e
  POCL_DEVICES=pthread timeout 60 "$MPIEXEC" -n "$n" env SLUICE_OPENCL=distributed LD_PRELOAD="$SLUICE_LIB" \
    "$SLUICE_APPS_DIR/cl_conf_native" >"dist.$n.out" 2>"dist.$n.err"
  rc=$?
  set -e
  expect_eq "$n ranks: advert and behaviour agree (exit code)" 0 "$rc"
  expect_eq "$n ranks: every device advertises native kernels and runs one" "$n" \
    "$(grep -c 'advertised=1 enqueue=0 ran=1 agree=1' "dist.$n.out")"
  [ ! -s "dist.$n.err" ] || fail "$n ranks: something was printed on stderr: $(head -3 "dist.$n.err")"
done
