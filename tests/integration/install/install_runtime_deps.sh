# SPDX-License-Identifier: MIT
# libsluice.so loads MPI, the OpenCL loader and libunwind at run time. With each one made
# unloadable (a private mount namespace binds /dev/null over the library file), the feature that
# needs it says so in one line naming the Debian package, and the program still runs unchanged.
unshare -m --propagation private true 2>/dev/null || { echo "SKIP: no private mount namespace (unshare -m) here"; exit 77; }
soname_file() { # the file the dynamic linker loads for SONAME: ask it, through a preloaded probe
  LD_PRELOAD="$1" LD_TRACE_LOADED_OBJECTS=1 /bin/true 2>/dev/null | awk -v so="$1" '$1 == so {print $3; exit}'
}
unwind=$(readlink -f "$(soname_file libunwind.so.8)")
opencl=$(readlink -f "$(soname_file libOpenCL.so.1)")
mpi=$(readlink -f "$(soname_file libmpich.so.12)")
[ -f "$unwind" ] && [ -f "$opencl" ] || fail "libunwind.so.8 or libOpenCL.so.1 not found by ldconfig"
# without FILE CMD...: CMD with FILE unloadable.
without() {
  local f=$1; shift
  unshare -m --propagation private bash -c 'mount --bind /dev/null "$0" && exec "$@"' "$f" "$@"
}

echo hello > input.txt
# libunwind: SLUICE_BACKTRACE asks for call sites.
rc_of without "$unwind" env LD_PRELOAD="$SLUICE_LIB" SLUICE_BACKTRACE=4 SLUICE_TRACE_DIR="$PWD/t1" cat input.txt \
  >out.txt 2>err.txt
out=$(cat out.txt)
expect_eq "without libunwind: the program runs" "0 hello" "$rc $out"
expect_eq "without libunwind: one line" 1 "$(wc -l < err.txt)"
expect_contains "without libunwind: names the package" "(Debian package libunwind8)" "$(cat err.txt)"
without "$unwind" env LD_PRELOAD="$SLUICE_LIB" SLUICE_TRACE_DIR="$PWD/t2" cat input.txt >/dev/null 2>err.txt
expect_eq "without libunwind and no SLUICE_BACKTRACE: nothing said" "" "$(cat err.txt)"

# OpenCL loader: the first OpenCL call (found through sluice's exported entry points).
cat > clprobe.c <<'C'
#include <dlfcn.h>
#include <stdio.h>
typedef int (*get_platforms)(unsigned, void *, unsigned *);
int main(void)
{
    get_platforms f = (get_platforms)dlsym(RTLD_DEFAULT, "clGetPlatformIDs");
    unsigned n = 0;
    printf("before\n");
    fflush(stdout);
    int rc = f ? f(0, NULL, &n) : -999;
    printf("clGetPlatformIDs: %d, %u platforms\n", rc, n);
    return 0;
}
C
cc -o clprobe clprobe.c -ldl
out=$(without "$opencl" env LD_PRELOAD="$SLUICE_LIB" ./clprobe 2>err.txt)
expect_eq "without the OpenCL loader: the call fails as without a loader" "before
clGetPlatformIDs: -1001, 0 platforms" "$out"
expect_eq "without the OpenCL loader: one line" 1 "$(wc -l < err.txt)"
expect_contains "without the OpenCL loader: names the package" "(Debian package ocl-icd-libopencl1)" "$(cat err.txt)"

# MPI: a program that does not link MPI, capturing under mpiexec (sluice loads MPI itself).
if [ -f "$mpi" ]; then
  mkdir ck
  (cd ck && without "$mpi" timeout 120 "$MPIEXEC" -n 2 env LD_PRELOAD="$SLUICE_LIB" SLUICE_CAPTURE='ckpt.%r' \
     SLUICE_STAGE_DIR="$SLUICE_TEST_STAGE" sh -c 'echo "rank $PMI_RANK" > ckpt.$PMI_RANK' 2>../err.txt)
  expect_contains "without MPI: names the package" "cannot load the MPI library libmpich.so.12 (Debian package libmpich12)" "$(cat err.txt)"
  expect_eq "without MPI: one line per rank" 2 "$(wc -l < err.txt)"
  expect_eq "without MPI: the data is still all there" "rank 0rank 1" "$(timeout 60 "$SLUICE_BIN_DIR/sluice-ckpt" extract -c ck | tr -d '\n')"
else
  echo "note: MPICH's libmpich.so.12 not in use (another MPI flavour): MPI case not run"
fi
echo "install_runtime_deps: all passed"
