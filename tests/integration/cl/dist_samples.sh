# SPDX-License-Identifier: MIT
# Distributed OpenCL, end to end: unchanged sample programs run on rank 0 and use one PoCL device
# per rank through SLUICE_OPENCL=distributed. With 1, 2 and 3 ranks their output and exit code are
# those of a single process with as many local devices (POCL_DEVICES="pthread ..."), which also
# shows that the serving ranks print nothing (their stdout goes to the same place). Every rank
# exits 0 (each one's trace records PROCESS_EXIT with status 0, and only rank 0 runs main).
export POCL_MAX_PTHREAD_COUNT=1

for app in cl_multi_device cl_vector_add; do
  for n in 1 2 3; do
    same_as_local "$n" "$app." "$SLUICE_APPS_DIR/$app"
  done
done
expect_contains "three devices seen" "devices: 3" "$(cat cl_multi_device.dist3.out)"
expect_contains "work split over three ranks is right" "wrong=0" "$(cat cl_multi_device.dist3.out)"
if grep -q DIFFERENT cl_multi_device.dist3.out; then fail "a query returned another object: $(grep DIFFERENT cl_multi_device.dist3.out)"; fi
expect_eq "object queries answered with the program's objects" 18 "$(grep -c ' same$' cl_multi_device.dist3.out)"

# Every rank wrote its trace and ended with status 0; the servers never ran the program's
# OpenCL calls (no clCreateKernel there: they serve requests with the real loader directly).
"$SLUICE_BIN_DIR/sluice-trace" dump cl_multi_device.tr3 >dump.txt
for r in 0 1 2; do
  expect_contains "rank $r exited 0" "rank $r pid" "$(grep PROCESS_EXIT dump.txt | grep 'exit status=0')"
done
expect_eq "kernels created by the program on rank 0 only" "0" "$(grep -E '^rank [12] ' dump.txt | grep -c 'clCreateKernel' || true)"
[ "$(grep -E '^rank 0 ' dump.txt | grep -c 'clCreateKernel')" -ge 1 ] || fail "rank 0's trace has no clCreateKernel"
echo "ok: rank 0's trace has the program's clCreateKernel"

# With PoCL's kernel cache empty, the serving ranks compile, and PoCL starts its linker as a child
# process that inherits the preload and the rank: it must run as a plain helper (it once took
# itself for a server and failed the build).
mkdir -p pocl-cache
POCL_CACHE_DIR="$PWD/pocl-cache" POCL_DEVICES=pthread mpirun 2 env SLUICE_OPENCL=distributed \
  LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/cl_multi_device" >cold.out 2>cold.err
diff cl_multi_device.local2.out cold.out >diff.out || fail "cold-cache run differs: $(head -5 diff.out; head -5 cold.err)"
[ ! -s cold.err ] || fail "cold-cache run printed on stderr: $(head -5 cold.err)"
echo "ok: kernels compiled from scratch on the serving rank"
