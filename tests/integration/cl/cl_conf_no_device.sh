# SPDX-License-Identifier: MIT
# A SLUICE_DEVICES query that selects no device (docs/FAULTS.md): the program sees its platform
# with no device, as a local platform without a device of the asked type answers (the same
# program asking plain PoCL for a GPU): clGetPlatformIDs succeeds, clGetDeviceIDs and
# clCreateContextFromType say CL_DEVICE_NOT_FOUND, and sluice says so in one line naming the
# query (docs/DQL.md). On 2 and 3 ranks; the job's exit code is the program's.
export POCL_MAX_PTHREAD_COUNT=1
POCL_DEVICES=pthread rc_of "$SLUICE_APPS_DIR/cl_conf_no_device" gpu >plain.out 2>plain.err
expect_eq "plain PoCL, no GPU: the program's exit code" 3 "$rc"
expect_contains "plain PoCL: clGetDeviceIDs says CL_DEVICE_NOT_FOUND" "clGetDeviceIDs: -1" "$(cat plain.out)"
query="SELECT ALL WHERE node = 7"
for n in 2 3; do
  POCL_DEVICES=pthread rc_of timeout 60 "$MPIEXEC" -n "$n" env SLUICE_OPENCL=distributed "SLUICE_DEVICES=$query" \
    LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/cl_conf_no_device" >"dist.$n.out" 2>"dist.$n.err"
  expect_eq "$n ranks, no device selected: the program's exit code" 3 "$rc"
  diff plain.out "dist.$n.out" >diff.out || fail "$n ranks: the program saw otherwise: $(cat diff.out)"
  expect_eq "$n ranks: one line on stderr" 1 "$(wc -l <"dist.$n.err")"
  expect_contains "$n ranks: the line names the query" "SLUICE_DEVICES=\"$query\" selects none of the $n devices of $n ranks" \
    "$(cat "dist.$n.err")"
done
# A query that selects devices still prints nothing.
POCL_DEVICES=pthread rc_of timeout 60 "$MPIEXEC" -n 2 env SLUICE_OPENCL=distributed "SLUICE_DEVICES=SELECT ALL WHERE node = 1" \
  LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/cl_conf_no_device" all >some.out 2>some.err
expect_eq "a device selected: exit code" 0 "$rc"
expect_contains "a device selected: found" "clGetDeviceIDs: 0, 1 device(s)" "$(cat some.out)"
[ ! -s some.err ] || fail "a query that selects a device printed: $(head -3 some.err)"
