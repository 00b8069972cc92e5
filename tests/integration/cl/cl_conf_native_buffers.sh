# SPDX-License-Identifier: MIT
# Native kernels on remote devices (docs/DISTRIBUTED.md, "Conformance"; dist_native.c): tests/apps/cl_conf_native_buffers
# runs a host function that reads one buffer and writes another, with values passed by value,
# after a write (wait list), behind a user event, in queue order, and on a buffer another device's
# native kernel wrote, on a sub-buffer; then the errors the driver returns at enqueue. The same output and exit
# code on plain PoCL, passed through, and on 1, 2 and 3 ranks (rank 0's own device and remote
# ones). A rank whose process is another program refuses the function at enqueue with
# CL_INVALID_OPERATION and one line naming the program and the rank.
source "$(dirname "${BASH_SOURCE[0]}")/cl_conf_lib.bash"
app=$SLUICE_APPS_DIR/cl_conf_native_buffers
conf_same native "$app"
expect_eq "2 ranks: every result right" 10 "$(grep -c ': right, sum' native.dist.2)"
expect_eq "3 ranks: every result right" 15 "$(grep -c ': right, sum' native.dist.3)"
expect_eq "3 ranks: the command type is CL_COMMAND_NATIVE_KERNEL" 3 "$(grep -c 'event: type 0x11f2, status 0' native.dist.3)"
expect_eq "3 ranks: a NULL function is CL_INVALID_VALUE" 3 "$(grep -c '^  NULL function: -30$' native.dist.3)"
expect_eq "3 ranks: a sub-buffer's function gets what PoCL gives it, read on the next rank" 3 \
  "$(grep -c 'a sub-buffer \[256, 768): at 0 +100, 255 +100, 256 +100, 768 +0' native.dist.3)"
expect_eq "3 ranks: a NULL memory object is CL_INVALID_MEM_OBJECT" 3 "$(grep -c '^  a NULL memory object: -38$' native.dist.3)"

# One rank: no distributed platform (nothing to merge); the program's output is plain PoCL's.
POCL_DEVICES=pthread "$app" >plain.1
POCL_DEVICES=pthread RUN_TIMEOUT=60 rc_of run_dist 1 SLUICE_OPENCL=distributed "$app" \
  >dist.1 2>dist.1.err
expect_eq "1 rank: exit code" 0 "$rc"
diff plain.1 dist.1 >diff.out || fail "1 rank differs from plain PoCL: $(head -20 diff.out)"

# refused_on_1_and_2 NAME WHAT PATTERN MPIEXEC-ARGS...: that distributed run ends with 0; rank 0's
# own device runs the function, ranks 1 and 2 refuse it at enqueue (nothing ran), each with one
# line on stderr matching PATTERN, and nothing else is printed there. Leaves NAME.{out,err}.
refused_on_1_and_2() {
  local name=$1 what=$2 pattern=$3 rc
  shift 3
  POCL_DEVICES=pthread rc_of timeout 60 "$MPIEXEC" "$@" >"$name.out" 2>"$name.err"
  expect_eq "$what: exit code" 0 "$rc"
  expect_eq "$what: rank 0's own device runs it" 1 "$(grep -c '^device 0: enqueue 0, sum 9216$' "$name.out")"
  expect_eq "$what: ranks 1 and 2 refuse at enqueue, nothing ran" 2 \
    "$(grep -cE '^device [12]: enqueue -59, sum 0$' "$name.out")"
  expect_eq "$what: one line per refusing rank" 2 "$(grep -c "$pattern" "$name.err")"
  expect_eq "$what: nothing else on stderr" 2 "$(wc -l <"$name.err")"
}

# Ranks 1 and 2 run another program (MPMD): the function's executable is not loaded there.
refused_on_1_and_2 mpmd "another program on ranks 1 and 2" \
  "clEnqueueNativeKernel: the process serving rank [12] is not rank 0's program .*cl_conf_native_buffers" \
  -n 1 env SLUICE_OPENCL=distributed LD_PRELOAD="$SLUICE_LIB" "$app" --each-device : \
  -n 2 env SLUICE_OPENCL=distributed LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/cl_conf_native"

# A function of a library the program loads itself: serving ranks never ran its main.
plugin=$SLUICE_APPS_DIR/libcl_conf_native_plugin.so
POCL_DEVICES=pthread "$app" --plugin "$plugin" >plugin.plain
expect_eq "plain PoCL runs the library's function" 1 "$(grep -c '^device 0: enqueue 0, sum 9216$' plugin.plain)"
refused_on_1_and_2 plugin "library function on 3 ranks, naming the library" \
  "the function's object .*libcl_conf_native_plugin.so is not loaded in the process serving rank [12]" \
  -n 3 env SLUICE_OPENCL=distributed LD_PRELOAD="$SLUICE_LIB" "$app" --plugin "$plugin"
