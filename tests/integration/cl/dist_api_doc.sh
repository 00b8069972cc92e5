# SPDX-License-Identifier: MIT
# docs/DISTRIBUTED_API.md, the coverage of every OpenCL entry point by distributed OpenCL, is what
# runtime/cl/intercept/gen_wrappers.py --api-doc generates from the installed headers and the distributed
# backend's install functions: regenerated here and compared, so that a slot added or removed
# without regenerating the page fails. The page lists every entry point the headers declare.
defines=(-DCL_TARGET_OPENCL_VERSION=300 -DCL_USE_DEPRECATED_OPENCL_1_0_APIS -DCL_USE_DEPRECATED_OPENCL_1_1_APIS
         -DCL_USE_DEPRECATED_OPENCL_1_2_APIS -DCL_USE_DEPRECATED_OPENCL_2_0_APIS -DCL_USE_DEPRECATED_OPENCL_2_1_APIS
         -DCL_USE_DEPRECATED_OPENCL_2_2_APIS)
python3 "$SOURCE_DIR/runtime/cl/intercept/gen_wrappers.py" --api-doc api.md cc "${defines[@]}"
diff "$SOURCE_DIR/docs/DISTRIBUTED_API.md" api.md >diff.out ||
  fail "docs/DISTRIBUTED_API.md is not current (regenerate it: see its first lines): $(head -20 diff.out)"
echo "ok: docs/DISTRIBUTED_API.md is current"
declared=$(printf '#include <CL/cl.h>\n#include <CL/cl_ext.h>\n#include <CL/cl_gl.h>\n#include <CL/cl_egl.h>\n' |
  cc -E -P "${defines[@]}" -x c - | grep -oE '\bcl[A-Z][A-Za-z0-9]*[[:space:]]*\(' | tr -d '( \t' | sort -u |
  while read -r fn; do grep -q "^| \`$fn\` |" api.md && echo "$fn"; done | wc -l)
listed=$(grep -c '^| `cl' api.md)
expect_eq "every entry point the headers declare is listed once" "$declared" "$listed"
expect_contains "clCreateContextFromType works across ranks" '| `clCreateContextFromType` | yes |' "$(cat api.md)"
expect_contains "images work across ranks" '| `clCreateImage` | yes |' "$(cat api.md)"
expect_contains "pipes give the error of a device without them" '| `clCreatePipe` | NULL, errcode CL_INVALID_OPERATION |' "$(cat api.md)"
