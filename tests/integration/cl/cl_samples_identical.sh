# SPDX-License-Identifier: MIT
# Every sample OpenCL program in tests/apps prints the same and exits the same with sluice
# preloaded as without: pass-through, trace on (profiling added behind the program's back),
# and SLUICE_OPENCL=off; and the output is right, not merely identical.
export POCL_MAX_PTHREAD_COUNT=2
export POCL_DEVICES="pthread pthread pthread"

run_four_ways() {
  local app=$1 expected_rc=$2
  local bin="$SLUICE_APPS_DIR/$app"
  set +e
  "$bin" >"$app.plain" 2>"$app.plain.err"; local rc0=$?
  run_sluice "$bin" >"$app.on" 2>"$app.on.err"; local rc1=$?
  run_sluice env SLUICE_DEBUG="$PWD/$app.debug" "$bin" >"$app.traced" 2>"$app.traced.err"; local rc2=$?
  run_sluice env SLUICE_OPENCL=off SLUICE_DEBUG="$PWD/$app.off.debug" "$bin" >"$app.off" 2>"$app.off.err"; local rc3=$?
  set -e
  expect_eq "$app exit code without sluice" "$expected_rc" "$rc0"
  expect_eq "$app exit code with sluice" "$rc0" "$rc1"
  expect_eq "$app exit code traced" "$rc0" "$rc2"
  expect_eq "$app exit code SLUICE_OPENCL=off" "$rc0" "$rc3"
  for mode in on traced off; do
    diff "$app.plain" "$app.$mode" >/dev/null || fail "$app output differs ($mode): $(diff "$app.plain" "$app.$mode" | head)"
  done
  echo "ok: $app output identical three ways ($(wc -l <"$app.plain") lines)"
  # The traced run went through sluice; the off run did not.
  grep -q 'CL_CALL' "$app.debug" || fail "$app: no OpenCL call in the trace"
  if grep -q 'CL_CALL\|CL_ENQUEUE' "$app.off.debug" 2>/dev/null; then fail "$app: SLUICE_OPENCL=off still traced OpenCL"; fi
}

run_four_ways cl_vector_add 0
expect_contains "vector add correct" "wrong=0" "$(cat cl_vector_add.on)"

run_four_ways cl_multi_device 0
expect_contains "three devices" "devices: 3" "$(cat cl_multi_device.on)"
expect_contains "split work correct" "wrong=0" "$(cat cl_multi_device.on)"
if grep -q DIFFERENT cl_multi_device.on; then fail "a query returned another object: $(grep DIFFERENT cl_multi_device.on)"; fi
expect_eq "object queries checked" 18 "$(grep -c ' same$' cl_multi_device.on)"

run_four_ways cl_events_callbacks 0
for cb in "build callback: 1" "event callback: 1 status=0" "memory destructor callback: 1" "context destructor callback: 1" \
          "event queue same, context same" "profiling on plain queue: -7" "plain=0 plain-array-bytes=0"; do
  expect_contains "$cb" "$cb" "$(cat cl_events_callbacks.traced)"
done

run_four_ways cl_map_subbuffer 0
expect_contains "sub-buffer parent" "sub-buffer parent same, offset matches 1" "$(cat cl_map_subbuffer.on)"
expect_contains "parent kept alive" "parent after release: same" "$(cat cl_map_subbuffer.on)"
expect_contains "use-host-ptr map" "use-host-ptr map is host+0: 1, values 0 126 7" "$(cat cl_map_subbuffer.on)"

run_four_ways cl_user_events_ooo 0
expect_contains "user-event gated values" "values wrong: 0 (out[0]=105)" "$(cat cl_user_events_ooo.on)"
expect_contains "failed user event" "status negative 1" "$(cat cl_user_events_ooo.on)"

run_four_ways cl_dlopen 0
expect_contains "dlopen program correct" "wrong=0 sum=96256" "$(cat cl_dlopen.on)"
# Entry points found with dlsym on the loader's own handle still reach sluice.
grep -q 'clEnqueueNDRangeKernel' cl_dlopen.debug || fail "dlsym'd clEnqueueNDRangeKernel bypassed sluice"
echo "ok: dlsym on the loader's handle is intercepted"
# ocl-icd's versioned symbol is the loader's own function (dlvsym is not interposed): handed a
# sluice handle, the loader dispatches through the handle's ICD table back into sluice.
expect_contains "ICD dispatch of sluice handles" "versioned loader symbol: ret 0, units > 0: 1" "$(cat cl_dlopen.on)"

run_four_ways cl_extension_functions 0
expect_contains "command buffer" "command buffer replayed twice: b[0]=2 b[63]=65" "$(cat cl_extension_functions.on)"
grep -q 'clCommandNDRangeKernelKHR' cl_extension_functions.debug || fail "extension function bypassed sluice"
echo "ok: extension functions are intercepted"

run_four_ways cl_threads 0
expect_contains "four threads creating and releasing concurrently" "threads=4 rounds=60 wrong=0" "$(cat cl_threads.traced)"

# Under mpiexec, odd and even rank counts: every rank's output is unchanged.
for n in 2 3; do
  mpirun "$n" "$SLUICE_APPS_DIR/cl_vector_add" | sort >mpi.plain
  run_dist "$n" "$SLUICE_APPS_DIR/cl_vector_add" | sort >mpi.sluice
  diff mpi.plain mpi.sluice >/dev/null || fail "mpiexec -n $n output differs"
  expect_eq "mpiexec -n $n ranks correct" "$n" "$(grep -c 'wrong=0' mpi.sluice)"
done
