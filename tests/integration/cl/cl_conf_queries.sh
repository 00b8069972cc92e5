# SPDX-License-Identifier: MIT
# Object queries in distributed mode answer as PoCL does (docs/DISTRIBUTED.md, "Conformance"), on rank 0's device and on
# remote ones, 2 and 3 ranks: tests/apps/cl_conf_queries (CL_MEM_PROPERTIES and
# CL_QUEUE_PROPERTIES_ARRAY after no, an empty and a full property list; CL_QUEUE_DEVICE_DEFAULT;
# the build log of a device of a program built for another device only: CL_SUCCESS, empty), the
# C++ bindings' Program::build({device}) (which asks every device's log and throws on an error)
# and pyopencl building a program per device: the same output without sluice, passed through and
# distributed.
source "$(dirname "${BASH_SOURCE[0]}")/cl_conf_lib.bash"
conf_same queries "$SLUICE_APPS_DIR/cl_conf_queries"
out=$(cat queries.dist.3)
expect_contains "CL_MEM_PROPERTIES after an empty list: its 0" "CL_MEM_PROPERTIES, empty list: rc=0 size=8 [0]" "$out"
expect_contains "CL_QUEUE_PROPERTIES_ARRAY after an empty list: its 0" \
  "CL_QUEUE_PROPERTIES_ARRAY, empty list: rc=0 size=8 [0]" "$out"
expect_contains "CL_QUEUE_PROPERTIES_ARRAY of a full list" "profiling: rc=0 size=24 [0x1093 0x2 0]" "$out"
expect_eq "CL_QUEUE_DEVICE_DEFAULT answered on every queue" 15 \
  "$(grep -c 'CL_QUEUE_DEVICE_DEFAULT: rc=0 size=8 value=NULL' <<<"$out")"
expect_eq "the log of a device not built: empty, CL_SUCCESS" 2 \
  "$(grep -c 'last device built, device [01] (not built): log rc=0 size=1 empty=1' <<<"$out")"

conf_same cxx "$SLUICE_APPS_DIR/cl_conf_build"
expect_eq "C++: every device's program built and ran" 3 "$(grep -c "built alone: 3 logs, status 0" cxx.dist.3)"

/usr/bin/python3 -c 'import pyopencl' 2>/dev/null || fail "python3-pyopencl is not installed for /usr/bin/python3"
# Without pyopencl's binary cache: a program from cached binaries has only the device it was built
# for (PoCL then refuses the others' logs, as distributed mode does).
mkdir -p xdg
export XDG_CACHE_HOME=$PWD/xdg PYOPENCL_NO_CACHE=1
conf_same pyopencl /usr/bin/python3 "$SOURCE_DIR/tests/apps/cl_conf_build.py"
expect_eq "pyopencl: every device's logs asked, program built and ran" 3 \
  "$(grep -c 'built alone: logs 3 all empty True its status 0' pyopencl.dist.3)"
