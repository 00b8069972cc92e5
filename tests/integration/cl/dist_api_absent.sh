# SPDX-License-Identifier: MIT
# Distributed OpenCL: what does not work across ranks says so with OpenCL's own answers, never a
# crash or a wrong result (docs/DISTRIBUTED_API.md).
# - cl_dist_api_absent on 2 ranks: every device reports no pipes or SVM (with OpenCL 3.0's values
#   for a device without them), each class of their entry points returns the error the
#   specification gives such a device, and the program's buffer fallback runs right. Its image and
#   sampler lines are those of the local device (images work across ranks: cl_dist_image.sh).
#   Locally the same program finds SVM (so the difference is distributed OpenCL's).
# - cl_extension_functions on 3 ranks: clGetExtensionFunctionAddressForPlatform of the merged
#   platform gives sluice's entry points the distributed backend implements (clIcdGetPlatformIDsKHR)
#   and NULL for unknown names; cl_khr_command_buffer, whose functions it lacks, is not offered, so
#   the program does not try it and exits 0.
export POCL_MAX_PTHREAD_COUNT=1
POCL_DEVICES=pthread "$SLUICE_APPS_DIR/cl_dist_api_absent" >absent.local 2>&1
expect_contains "locally, images and SVM are there" "image and SVM path: wrong=0" "$(cat absent.local)"
POCL_DEVICES=pthread rc_of run_dist 2 SLUICE_OPENCL=distributed \
  "$SLUICE_APPS_DIR/cl_dist_api_absent" >absent.dist 2>absent.err
expect_eq "cl_dist_api_absent on 2 ranks: exit code" 0 "$rc"
{
  sed -n 1p absent.local
  echo "SVM capabilities 0x0, pipe support 0"
  sed -n 3,8p absent.local
  cat <<'OUT'
clCreatePipe: -59 none
clGetPipeInfo of a buffer: -38
clSVMAlloc: NULL
clEnqueueSVMMemcpy: -59
clEnqueueSVMMemFill: -59
clSetKernelArgSVMPointer: -59
buffer fallback path: wrong=0
OUT
} >absent.expected
expect_contains "locally, image support" "image support 1," "$(sed -n 1p absent.local)"
diff absent.expected absent.dist >diff.out || fail "images, samplers, pipes, SVM on 2 ranks: $(cat diff.out)"
echo "ok: images and samplers as the local device, no pipes or SVM on 2 ranks, each entry point with its error; the fallback runs"
[ ! -s absent.err ] || fail "something was printed on stderr: $(head -5 absent.err)"

POCL_DEVICES=pthread rc_of run_dist 3 SLUICE_OPENCL=distributed \
  "$SLUICE_APPS_DIR/cl_extension_functions" >ext.dist 2>ext.err
expect_eq "cl_extension_functions on 3 ranks: exit code" 0 "$rc"
cat >ext.expected <<'OUT'
clIcdGetPlatformIDsKHR: found
bogus name: absent
clGetICDLoaderInfoOCLICD: found
cl_khr_command_buffer: not offered
OUT
diff ext.expected ext.dist >diff.out || fail "extension functions on 3 ranks: $(cat diff.out)"
echo "ok: extension functions of the merged platform: implemented ones found, command buffers not offered"
