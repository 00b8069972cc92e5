# SPDX-License-Identifier: MIT
# Distributed OpenCL from Python: the pyopencl sample (tests/apps/cl_pyopencl_check.py: kernels,
# pyopencl arrays and generated elementwise kernels, events, a sub-buffer and a map on every device
# of the first platform) run on rank 0 under `mpiexec -n 3`, one device per rank, prints exactly
# what it prints with three local devices, twice with pyopencl's on-disk cache in a fresh folder:
# the first run stores the program binaries it reads from every rank (CL_PROGRAM_BINARIES), the
# second creates its programs from them (clCreateProgramWithBinary, on every rank).
export POCL_MAX_PTHREAD_COUNT=1
/usr/bin/python3 -c 'import pyopencl' 2>/dev/null || fail "python3-pyopencl is not installed for /usr/bin/python3"
script="$SOURCE_DIR/tests/apps/cl_pyopencl_check.py"
mkdir -p cache-local cache-dist
POCL_DEVICES="pthread pthread pthread" XDG_CACHE_HOME="$PWD/cache-local" /usr/bin/python3 "$script" >local.out
for run in cold warm; do
  POCL_DEVICES=pthread XDG_CACHE_HOME="$PWD/cache-dist" rc_of mpirun 3 env SLUICE_OPENCL=distributed \
    SLUICE_TRACE_DIR="$PWD/tr.$run" LD_PRELOAD="$SLUICE_LIB" /usr/bin/python3 "$script" >"$run.out" 2>"$run.err"
  expect_eq "pyopencl on 3 ranks ($run cache): exit code" 0 "$rc"
  diff local.out "$run.out" >diff.out || fail "pyopencl output ($run cache) differs from three local devices: $(head -20 diff.out)"
  expect_eq "every device computed ($run)" 3 "$(grep -c 'axpy ok: True' "$run.out")"
  expect_eq "every device's elementwise expression ($run)" 3 "$(grep -c 'expression ok: True' "$run.out")"
  expect_eq "nothing false ($run)" 0 "$(grep -c 'False' "$run.out" || true)"
  [ ! -s "$run.err" ] || fail "stderr not empty ($run): $(head -5 "$run.err")"
  "$SLUICE_BIN_DIR/sluice-trace" dump "tr.$run" >"dump.$run"
  [ "$(grep -cE '^rank 0 .*clEnqueueNDRangeKernel' "dump.$run")" -ge 3 ] || fail "rank 0 did not enqueue the kernels ($run)"
  echo "ok: pyopencl identical on three ranks ($run cache)"
done
grep -qE '^rank 0 .*function="clCreateProgramWithBinary", return code=0' dump.warm ||
  fail "the warm run did not create its programs from the cached binaries"
echo "ok: the warm run built its programs from the binaries the cold run read from every rank"
