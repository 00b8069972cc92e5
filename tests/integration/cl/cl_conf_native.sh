# SPDX-License-Identifier: MIT
# clEnqueueNativeKernel and CL_DEVICE_EXECUTION_CAPABILITIES agree (docs/DISTRIBUTED.md, "Conformance"): PoCL advertises
# native kernels and runs them, locally and in distributed mode, where the function runs on its
# device's rank (the same executable: dist_native.c). tests/apps/cl_conf_native checks the
# agreement itself, on plain PoCL, passed through and on 1, 2 and 3 ranks (rank 0's own device and
# remote ones), and, linked without a build-id, on 2 and 3 ranks.
export POCL_MAX_PTHREAD_COUNT=1
POCL_DEVICES="pthread pthread" "$SLUICE_APPS_DIR/cl_conf_native" >plain.out
expect_eq "plain PoCL advertises and runs native kernels" 2 "$(grep -c 'advertised=1 enqueue=0 ran=1 agree=1' plain.out)"
POCL_DEVICES="pthread pthread" SLUICE_OPENCL=on run_sluice "$SLUICE_APPS_DIR/cl_conf_native" >on.out
diff plain.out on.out >diff.out || fail "pass-through differs: $(cat diff.out)"

# native_on_ranks PREFIX WHAT PROGRAM N...: PROGRAM distributed on each N ranks: exit code 0, every
# device advertises native kernels and runs one, nothing on stderr. Leaves PREFIX.N.{out,err}.
native_on_ranks() {
  local prefix=$1 what=$2 prog=$3 n rc
  shift 3
  for n in "$@"; do
    POCL_DEVICES=pthread RUN_TIMEOUT=60 rc_of run_dist "$n" SLUICE_OPENCL=distributed \
      "$prog" >"$prefix.$n.out" 2>"$prefix.$n.err"
    expect_eq "$n ranks$what: advert and behaviour agree (exit code)" 0 "$rc"
    expect_eq "$n ranks$what: every device advertises native kernels and runs one" "$n" \
      "$(grep -c 'advertised=1 enqueue=0 ran=1 agree=1' "$prefix.$n.out")"
    [ ! -s "$prefix.$n.err" ] || fail "$n ranks$what: something was printed on stderr: $(head -3 "$prefix.$n.err")"
  done
}
native_on_ranks dist "" "$SLUICE_APPS_DIR/cl_conf_native" 1 2 3

# The same program linked without a GNU build-id: its object is named by the file's device, inode
# and size instead, found on every rank running that file; a copy of it elsewhere is another file.
nobid=$SLUICE_APPS_DIR/cl_conf_native_no_build_id
if command -v readelf >/dev/null; then
  expect_eq "the test program has no build-id" 0 "$(readelf -n "$nobid" | grep -c 'Build ID' || true)"
fi
native_on_ranks nobid ", no build-id" "$nobid" 2 3
cp "$nobid" ./copy_no_build_id
POCL_DEVICES=pthread RUN_TIMEOUT=60 rc_of run_dist 1 SLUICE_OPENCL=distributed "$nobid" : \
  -n 1 env SLUICE_OPENCL=distributed LD_PRELOAD="$SLUICE_LIB" ./copy_no_build_id >copy.out 2>copy.err
# Rank 1's process is another program: its device does not advertise native kernels and refuses.
expect_eq "a copy of the file on rank 1: advert and behaviour agree (exit code)" 0 "$rc"
expect_eq "rank 0's device runs it" 1 "$(grep -c '^device 0: native kernels advertised=1 enqueue=0 ran=1 agree=1' copy.out)"
expect_eq "rank 1's device neither advertises nor runs it" 1 \
  "$(grep -c '^device 1: native kernels advertised=0 enqueue=-59 ran=0 agree=1' copy.out)"
expect_eq "one line naming the rank and the program" 1 \
  "$(grep -c "the process serving rank 1 is not rank 0's program $nobid" copy.err)"
