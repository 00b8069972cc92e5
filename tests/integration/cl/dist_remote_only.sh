# SPDX-License-Identifier: MIT
# Distributed OpenCL with only a remote device: SLUICE_DEVICES keeps rank 1's device, so every
# OpenCL call of the unchanged samples goes to another process. Each prints exactly what it prints
# with one local device: vector add; events with build, event, memory and context destructor
# callbacks; several threads sharing a queue; a burst of non-blocking kernels; a program that
# dlopen()s libOpenCL. The job exits 0 each time.
export POCL_MAX_PTHREAD_COUNT=1
for app in cl_vector_add cl_events_callbacks cl_threads cl_burst cl_dlopen; do
  POCL_DEVICES=pthread "$SLUICE_APPS_DIR/$app" >"$app.local" 2>&1
  POCL_DEVICES=pthread rc_of mpirun 2 env SLUICE_OPENCL=distributed "SLUICE_DEVICES=SELECT ALL WHERE node = 1" \
    LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/$app" >"$app.remote" 2>&1
  expect_eq "$app on rank 1's device: exit code" 0 "$rc"
  diff "$app.local" "$app.remote" >diff.out || fail "$app on rank 1's device differs: $(head -20 diff.out)"
  echo "ok: $app on rank 1's device prints what it prints locally ($(wc -l <"$app.remote") lines)"
done
expect_contains "callbacks ran" "event callback: 1 status=0" "$(cat cl_events_callbacks.remote)"
expect_contains "destructor callbacks ran" "context destructor callback: 1" "$(cat cl_events_callbacks.remote)"
