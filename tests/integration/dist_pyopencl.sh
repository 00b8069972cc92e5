# Distributed OpenCL from Python: the pyopencl sample (tests/apps/cl_pyopencl_check.py: kernels,
# pyopencl arrays and generated elementwise kernels, events, a sub-buffer and a map on every device
# of the first platform) run on rank 0 under `mpiexec -n 3`, one device per rank, prints exactly
# what it prints with three local devices. pyopencl's on-disk binary cache is off
# (PYOPENCL_NO_CACHE): program binaries are not distributed yet and the cache would warn.
export POCL_MAX_PTHREAD_COUNT=1
/usr/bin/python3 -c 'import pyopencl' 2>/dev/null || fail "python3-pyopencl is not installed for /usr/bin/python3"
export PYOPENCL_NO_CACHE=1
script="$SOURCE_DIR/tests/apps/cl_pyopencl_check.py"
POCL_DEVICES="pthread pthread pthread" /usr/bin/python3 "$script" >local.out
set +e
POCL_DEVICES=pthread mpirun 3 env SLUICE_OPENCL=distributed SLUICE_TRACE_DIR="$PWD/tr" LD_PRELOAD="$SLUICE_LIB" \
  /usr/bin/python3 "$script" >dist.out 2>dist.err
rc=$?
set -e
expect_eq "pyopencl on 3 ranks: exit code" 0 "$rc"
diff local.out dist.out >diff.out || fail "pyopencl output differs from three local devices: $(head -20 diff.out)"
expect_eq "every device computed" 3 "$(grep -c 'axpy ok: True' dist.out)"
expect_eq "every device's elementwise expression" 3 "$(grep -c 'expression ok: True' dist.out)"
expect_eq "nothing false" 0 "$(grep -c 'False' dist.out || true)"
[ ! -s dist.err ] || fail "stderr not empty: $(head -5 dist.err)"
# The program's calls went through sluice on rank 0 (the trace has its kernel launches).
"$SLUICE_BIN_DIR/sluice-trace" dump tr >dump.txt
[ "$(grep -cE '^rank 0 .*clEnqueueNDRangeKernel' dump.txt)" -ge 3 ] || fail "rank 0 did not enqueue the kernels"
echo "ok: pyopencl identical on three ranks"
