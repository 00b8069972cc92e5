# SPDX-License-Identifier: MIT
# A pyopencl script (Debian's python3-pyopencl, run with /usr/bin/python3) behaves identically
# with sluice preloaded, on two PoCL devices, and its calls went through sluice.
export POCL_MAX_PTHREAD_COUNT=2
export POCL_DEVICES="pthread pthread"
/usr/bin/python3 -c 'import pyopencl' 2>/dev/null || fail "python3-pyopencl is not installed for /usr/bin/python3"
script="$SOURCE_DIR/tests/apps/cl_pyopencl_check.py"
/usr/bin/python3 "$script" >plain.out
run_sluice env SLUICE_DEBUG="$PWD/py.debug" /usr/bin/python3 "$script" >sluice.out
diff plain.out sluice.out >/dev/null || fail "pyopencl output differs: $(diff plain.out sluice.out | head)"
expect_eq "both devices computed" 2 "$(grep -c 'axpy ok: True' sluice.out)"
expect_eq "handles consistent" 0 "$(grep -c 'False' sluice.out)"
expect_contains "finished" "done" "$(tail -1 sluice.out)"
grep -q 'clEnqueueNDRangeKernel' py.debug || fail "pyopencl's enqueues bypassed sluice"
echo "ok: pyopencl identical and intercepted"
