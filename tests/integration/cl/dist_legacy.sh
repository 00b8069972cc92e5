# SPDX-License-Identifier: MIT
# The OpenCL 1.0 commands (clEnqueueTask, clEnqueueMarker, clEnqueueWaitForEvents,
# clEnqueueBarrier) under distributed OpenCL: tests/apps/cl_legacy_commands.c on 2 ranks (its two
# devices on two ranks, the wait across them) prints exactly what it prints with 2 local devices,
# errors for invalid arguments included. With --wait-for-events the wait is the device-side
# clEnqueueWaitForEvents, which PoCL does not implement locally but sluice does (as a barrier
# with that wait list): same counter, and its error for an empty list.
export POCL_MAX_PTHREAD_COUNT=1
app=cl_legacy_commands
POCL_DEVICES="pthread pthread" "$SLUICE_APPS_DIR/$app" >local.out 2>&1 || fail "$app fails locally: $(cat local.out)"
expect_contains "local run counts to 4" "device 1: 4" "$(cat local.out)"
POCL_DEVICES=pthread rc_of run_dist 2 SLUICE_OPENCL=distributed "$SLUICE_APPS_DIR/$app" \
  >dist.out 2>dist.err
expect_eq "$app on 2 ranks: exit code" 0 "$rc"
expect_eq "$app on 2 ranks: stderr" "" "$(cat dist.err)"
diff local.out dist.out >diff.out || fail "$app on 2 ranks differs from 2 local devices: $(cat diff.out)"
echo "ok: $app on 2 ranks prints what it prints with 2 local devices"

POCL_DEVICES=pthread rc_of run_dist 2 SLUICE_OPENCL=distributed "$SLUICE_APPS_DIR/$app" \
  --wait-for-events >wait.out 2>wait.err
expect_eq "$app --wait-for-events on 2 ranks: exit code" 0 "$rc"
expect_eq "$app --wait-for-events on 2 ranks: stderr" "" "$(cat wait.err)"
expect_eq "$app --wait-for-events: same lines as the host wait" "$(cat local.out)" "$(grep -v 'no events' wait.out)"
expect_contains "$app --wait-for-events: empty list refused" "clEnqueueWaitForEvents with no events: -30" "$(cat wait.out)"
