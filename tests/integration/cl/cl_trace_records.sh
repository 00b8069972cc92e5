# SPDX-License-Identifier: MIT
# With the trace on, an OpenCL program's calls are recorded with what docs/OPENCL.md promises: every
# call, enqueues with command ids, queue-order and wait-list dependencies, bytes moved each way
# and device execution times from profiling that sluice enabled itself.
export POCL_MAX_PTHREAD_COUNT=2
unset POCL_DEVICES
run_sluice env SLUICE_DEBUG="$PWD/va.debug" "$SLUICE_APPS_DIR/cl_vector_add" >/dev/null
d=$(cat va.debug)
expect_contains "a call with its function" 'CL_CALL function="clBuildProgram", return code=0' "$d"
expect_contains "an enqueue" 'CL_ENQUEUE function="clEnqueueNDRangeKernel"' "$d"
expect_contains "in-order dependency" 'depends on command id=1' "$d"
expect_contains "host-to-device bytes" 'CL_TRANSFER direction=0, bytes=262144' "$d"
expect_contains "device-to-host bytes" 'CL_TRANSFER direction=1, bytes=262144' "$d"
expect_eq "device executions (write, kernel, read)" 3 "$(grep -c 'CL_DEVICE_EXEC' va.debug)"

run_sluice env SLUICE_DEBUG="$PWD/ooo.debug" "$SLUICE_APPS_DIR/cl_user_events_ooo" >/dev/null
# k2 waits on k1's event (wait list, kind 0); the out-of-order queue adds no queue-order edge.
grep -q 'CL_DEP .*kind=0' ooo.debug || fail "no wait-list dependency recorded"
if grep -q 'CL_DEP .*kind=1' ooo.debug; then fail "queue-order edge on an out-of-order queue"; fi
echo "ok: wait-list dependencies, none from queue order on an out-of-order queue"
grep -q 'CL_CALL function="clSetUserEventStatus", return code=0' ooo.debug || fail "clSetUserEventStatus not recorded"
echo "ok: user event calls recorded"

# A burst of 1000 kernels enqueued without waiting (more than the per-queue timing ring holds):
# the output is unchanged and every command still gets its device time.
"$SLUICE_APPS_DIR/cl_burst" >burst.plain
run_sluice env SLUICE_DEBUG="$PWD/burst.debug" "$SLUICE_APPS_DIR/cl_burst" >burst.traced
diff burst.plain burst.traced >/dev/null || fail "burst output differs"
expect_contains "burst result" "counter=500500 expected=500500" "$(cat burst.traced)"
expect_eq "enqueues recorded" 1001 "$(grep -c 'CL_ENQUEUE' burst.debug)"
expect_eq "device times recorded for every command" 1001 "$(grep -c 'CL_DEVICE_EXEC' burst.debug)"

# sluice-trace summary shows the OpenCL side: calls by function, host and device time, bytes
# each way per device.
mkdir -p tr
run_sluice env SLUICE_TRACE_DIR="$PWD/tr" "$SLUICE_APPS_DIR/cl_vector_add" >/dev/null
"$SLUICE_BIN_DIR/sluice-trace" summary --top 100 tr >summary.txt
s=$(sed -n '/== OpenCL ==/,/^== [^O]/p' summary.txt)
expect_contains "OpenCL section" "== OpenCL ==" "$s"
expect_contains "host and device time" "ms of device execution" "$s"
echo "$s" | grep -q 'clEnqueueNDRangeKernel  *1  *yes  *0' || fail "NDRange row missing: $s"
echo "$s" | grep -q 'clSetKernelArg  *4 ' || fail "clSetKernelArg row missing: $s"
echo "$s" | grep -q 'Portable Comp.*  3  .*256.0 KiB  *256.0 KiB  *0 B' || fail "device row (3 commands, 256 KiB each way) missing: $s"
echo "ok: sluice-trace summary OpenCL section"

# Folded (what more than 16 ranks get by default; --compact here): one line per quantity with
# its spread over ranks, functions summed; --ranks=LIST brings back the per-rank tables.
c=$("$SLUICE_BIN_DIR/sluice-trace" summary --compact --top 100 tr | sed -n '/== OpenCL ==/,/^== [^O]/p')
expect_contains "folded: ranks counted" "1 ranks recorded OpenCL events" "$c"
echo "$c" | grep -q '^  OpenCL calls  *1 ' || fail "folded calls line missing: $c"
echo "$c" | grep -q '^  host->dev  *1  *256.0 KiB' || fail "folded host->dev line (256 KiB) missing: $c"
echo "$c" | grep -q 'clEnqueueNDRangeKernel  *1  *1  *0 ' || fail "folded NDRange row missing: $c"
[ "$(echo "$c" | grep -c '^rank ')" = 0 ] || fail "folded: per-rank tables printed: $c"
r=$("$SLUICE_BIN_DIR/sluice-trace" summary --ranks=0 tr | sed -n '/== OpenCL ==/,/^== [^O]/p')
expect_contains "--ranks=0: rank 0's table" "rank 0:" "$r"
"$SLUICE_BIN_DIR/sluice-trace" summary --ranks=x tr >bad.out 2>&1 && fail "--ranks=x accepted"
expect_contains "--ranks=x: one line naming the problem" "--ranks wants ranks such as" "$(cat bad.out)"
echo "ok: sluice-trace summary OpenCL section folded over ranks, --ranks"
