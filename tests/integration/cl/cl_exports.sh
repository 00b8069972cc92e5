# SPDX-License-Identifier: MIT
# libsluice.so exports every OpenCL entry point the installed ICD loader exports (and the
# extension functions of the headers besides), does not depend on libOpenCL itself, and
# exports dlsym for programs that look the loader's functions up by hand.
# (ldconfig's listing is kept first: awk stops reading at its match, and under pipefail the
# SIGPIPE that ldconfig then gets failed this script at random.)
ldconfig -p >ldconfig.txt
loader=$(awk '/libOpenCL\.so\.1 .*x86-64/ {print $NF; exit}' ldconfig.txt)
[ -n "$loader" ] || loader=$(awk '/libOpenCL\.so\.1 / {print $NF; exit}' ldconfig.txt)
[ -n "$loader" ] || fail "no libOpenCL.so.1 found by ldconfig (apt-get install ocl-icd-libopencl1)"
nm -D --defined-only "$loader" | awk '$3 ~ /^cl[A-Z]/ {sub(/@.*/, "", $3); print $3}' | sort -u >loader.syms
nm -D --defined-only "$SLUICE_LIB" | awk '$2 == "T" && $3 ~ /^cl[A-Z]/ {print $3}' | sort -u >sluice.syms
missing=$(comm -23 loader.syms sluice.syms)
[ -z "$missing" ] || fail "loader entry points sluice does not export: $missing"
echo "ok: all $(wc -l <loader.syms) entry points of $loader are exported by sluice"
[ "$(wc -l <sluice.syms)" -ge 190 ] || fail "only $(wc -l <sluice.syms) cl* functions exported"
echo "ok: $(wc -l <sluice.syms) OpenCL functions exported (core and extensions)"
for ext in clCreateCommandBufferKHR clEnqueueCommandBufferKHR clCreateSemaphoreWithPropertiesKHR clGetKernelSuggestedLocalWorkSizeKHR; do
  grep -qx "$ext" sluice.syms || fail "extension function $ext not exported"
done
echo "ok: extension functions from cl_ext.h exported"
# Whole outputs are kept before grep: `cmd | grep -q` under pipefail fails when grep stops
# reading early and cmd gets SIGPIPE, which made this check fail at random under load.
readelf -d "$SLUICE_LIB" >dynamic.txt
if grep -q 'NEEDED.*libOpenCL' dynamic.txt; then fail "libsluice.so links libOpenCL"; fi
echo "ok: libsluice.so does not link libOpenCL"
nm -D --defined-only "$SLUICE_LIB" >defined.txt
grep -qw dlsym defined.txt || fail "dlsym not exported"
echo "ok: dlsym exported"
