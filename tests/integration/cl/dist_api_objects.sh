# SPDX-License-Identifier: MIT
# Distributed OpenCL, object-level API (docs/DISTRIBUTED.md): three unchanged sample programs print on three
# ranks (one PoCL device each) exactly what they print with three local devices, and exit 0.
# - cl_dist_api_context: clCreateContextFromType for every device type, with the platform named
#   and without properties (the default platform is the merged one): error codes, the devices
#   and properties of each context, and a kernel on each of its devices.
# - cl_dist_api_buffers: clCreateBuffer and clCreateSubBuffer flags, valid and invalid (the same
#   errors as PoCL), CL_MEM_FLAGS and CL_MEM_HOST_PTR (USE_HOST_PTR gives the program's pointer),
#   the CL_MEM_HOST_*_ACCESS rules of reads, writes and maps, and USE_HOST_PTR and ALLOC_HOST_PTR
#   buffers through a kernel on every device.
# - cl_dist_api_programs: build options as the program passed them (the servers' added
#   -cl-kernel-arg-info hidden), kernel names, separate compilation with an embedded header,
#   linking a library and an executable (notify callbacks), built-in kernels, IL (the error PoCL
#   gives), unloading the compiler, and a kernel of every executable on every device.
# - cl_dist_api_refs: 31 calls with NULL or invalid handles, arguments and queue properties
#   (kernel arguments checked against their declarations), reference counts as objects are made
#   and retained, and objects released by the program in an unusual order but kept alive by their
#   users.
# Compiler diagnostics of the builds meant to fail go to stderr, from the rank that compiled, so
# only stdout is compared.
export POCL_MAX_PTHREAD_COUNT=1
for app in cl_dist_api_context cl_dist_api_buffers cl_dist_api_programs cl_dist_api_refs; do
  POCL_DEVICES="pthread pthread pthread" "$SLUICE_APPS_DIR/$app" >"$app.local" 2>"$app.local.err"
  # The pass-through layer (SLUICE_OPENCL=on, one process) changes nothing either.
  POCL_DEVICES="pthread pthread pthread" SLUICE_OPENCL=on run_sluice "$SLUICE_APPS_DIR/$app" \
    >"$app.on" 2>/dev/null
  diff "$app.local" "$app.on" >diff.out || fail "$app with SLUICE_OPENCL=on differs: $(head -20 diff.out)"
  POCL_DEVICES=pthread rc_of run_dist 3 SLUICE_OPENCL=distributed "$SLUICE_APPS_DIR/$app" \
    >"$app.dist" 2>"$app.dist.err"
  expect_eq "$app on 3 ranks: exit code" 0 "$rc"
  diff "$app.local" "$app.dist" >diff.out || fail "$app on 3 ranks differs from 3 local devices: $(head -20 diff.out)"
  echo "ok: $app on 3 ranks prints what it prints with 3 local devices ($(wc -l <"$app.dist") lines)"
done

# The outputs say what they should (not only the same as locally).
ctx=$(cat cl_dist_api_context.dist)
expect_contains "ALL gives the three devices" $'ALL (platform named): err=0\n  devices: 3 (24 bytes): 0 1 2' "$ctx"
expect_contains "no properties: the merged platform's devices" $'ALL (no properties): err=0\n  devices: 3 (24 bytes): 0 1 2' "$ctx"
expect_contains "DEFAULT gives the first device" $'DEFAULT (platform named): err=0\n  devices: 1 (8 bytes): 0' "$ctx"
expect_contains "GPU: no device" "GPU (platform named): err=-1" "$ctx"
expect_eq "kernels right on every device of every context" 0 "$(grep -c 'wrong=[1-9]' <<<"$ctx" || true)"
expect_eq "kernels run (ALL, CPU, CPU|GPU: 3 each, DEFAULT: 1, twice)" 20 "$(grep -c 'wrong=0' <<<"$ctx")"

buf=$(cat cl_dist_api_buffers.dist)
expect_contains "USE_HOST_PTR: CL_MEM_HOST_PTR is the program's" "create USE_HOST_PTR: err=0 flags=0x8 host_ptr=the program's" "$buf"
expect_contains "invalid combination refused" "create USE_HOST_PTR|ALLOC_HOST_PTR: err=-30" "$buf"
expect_contains "host access enforced" "HOST_NO_ACCESS: write=-59 read=-59 map read=-59 map write=-59" "$buf"
expect_contains "sub-buffer of USE_HOST_PTR" "host_ptr=the program's + origin" "$buf"
expect_eq "host pointer buffers right on every device" 6 "$(grep -c '_HOST_PTR: wrong=0' <<<"$buf")"

prog=$(cat cl_dist_api_programs.dist)
expect_contains "build options as passed" "options [-DSCALE=1 -cl-mad-enable] (25 bytes)" "$prog"
expect_contains "NULL build options" "NULL options, device 2: status 0, binary type 0x4, options [] (1 bytes)" "$prog"
expect_contains "linked executable" "executable: kernel names err=0 [calc;other], number err=0 2" "$prog"
expect_eq "kernels of every executable right on every device" 9 "$(grep -c 'calc on device [0-2] wrong=0' <<<"$prog")"
refs=$(cat cl_dist_api_refs.dist)
expect_contains "kernel argument size checked" "clSetKernelArg int of size 8: -51" "$refs"
expect_contains "reference counts" "context after a queue: 4" "$refs"
expect_contains "released objects kept alive by their users" \
  "kernel of a released program into a sub-buffer of a released buffer: 3" "$refs"
[ ! -s cl_dist_api_context.dist.err ] || fail "cl_dist_api_context printed on stderr: $(head -5 cl_dist_api_context.dist.err)"
