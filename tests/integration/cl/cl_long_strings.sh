# SPDX-License-Identifier: MIT
# OpenCL strings are as long as the driver makes them (docs/OPENCL.md). PoCL 3.1 names a CPU device
# "pthread-<LLVM CPU>-<model name of /proc/cpuinfo>" and versions it "OpenCL 3.0 PoCL HSTR:
# pthread-<triple>-<LLVM CPU>", 64 characters on an AVX-512 CPU (this machine's): rank 0 once
# asked it with 63 bytes, left the version at 1.0 and refused OpenCL 2.1's empty launches. In a
# private mount namespace /proc/cpuinfo is a copy whose model name is over 300 bytes, so that
# PoCL's own device name is too. Without sluice, passed through and distributed on 2 and 3 ranks:
# the same device names, versions and platform printed whole, a kernel of a 244-byte name (PoCL's
# longest: it names a file after it) created and cloned on every device with an argument of a
# 124-byte struct type, the same enqueue results (tests/apps/cl_conf_enqueue); the trace's device
# records carry the whole name; a SLUICE_DEVICES query that reads the name (kept to 255 bytes)
# ends the job with one line, one on other attributes selects as usual.
if [ "${CL_LONG_STRINGS_NS:-}" != 1 ]; then
  if [ "$(id -u)" != 0 ] || ! unshare --mount true 2>/dev/null; then
    echo "SKIP: a private mount namespace (unshare --mount) needs root"
    exit 77
  fi
  exec env CL_LONG_STRINGS_NS=1 SLUICE_LIB="$SLUICE_LIB" SLUICE_BIN_DIR="$SLUICE_BIN_DIR" \
    SLUICE_APPS_DIR="$SLUICE_APPS_DIR" unshare --mount --propagation private bash "$0" "${BASH_SOURCE[0]}"
fi
unset CL_LONG_STRINGS_NS
source "$(dirname "${BASH_SOURCE[0]}")/cl_conf_lib.bash"
/usr/bin/python3 -c 'import pyopencl' 2>/dev/null || fail "python3-pyopencl is not installed for /usr/bin/python3"

model=$(grep -m1 '^model name' /proc/cpuinfo | sed 's/^model name[[:space:]]*: //')
long="$model, as this test names it:$(printf ' a long model name,%.0s' $(seq 15)) end"
sed "s|^\(model name[[:space:]]*:\).*|\1 $long|" /proc/cpuinfo >cpuinfo.long
mount --bind cpuinfo.long /proc/cpuinfo
name=$(POCL_DEVICES=pthread /usr/bin/python3 "$SOURCE_DIR/tests/apps/cl_long_names.py" | sed -n 's/^device 0 name \(.*\) ([0-9]* bytes)$/\1/p')
expect_contains "PoCL names its device after the model name" "$long" "$name"
echo "ok: PoCL's device name is ${#name} bytes; its version: $(POCL_DEVICES=pthread /usr/bin/python3 "$SOURCE_DIR/tests/apps/cl_long_names.py" | sed -n 's/^device 0 version //p')"

conf_same long_names /usr/bin/python3 "$SOURCE_DIR/tests/apps/cl_long_names.py"
expect_eq "every device's name printed whole, on 3 ranks" 3 "$(grep -cF "name $name (${#name} bytes)" long_names.dist.3)"
expect_eq "kernels created and cloned on every device" 6 \
  "$(grep -c 'kernel: \[5, 8, 11, 14, 17, 20, 23, 26\]' long_names.dist.3)"
conf_same enqueue "$SLUICE_APPS_DIR/cl_conf_enqueue"
expect_eq "NULL global size: a command that does nothing (OpenCL 2.1), on every device" 3 \
  "$(grep -c 'null global size: rc=0 event=yes' enqueue.dist.3)"

# The trace's device records (sluice-trace dump reads them whole): rank 0 names every device.
POCL_DEVICES=pthread rc_of mpirun 2 env SLUICE_OPENCL=distributed SLUICE_TRACE_DIR="$PWD/tr" \
  LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/cl_vector_add" >va.out 2>va.err
expect_eq "cl_vector_add on 2 ranks: exit code" 0 "$rc"
"$SLUICE_BIN_DIR/sluice-trace" dump tr | grep 'CL_DEVICE ' >dev.dist || fail "no device recorded: $(head -3 va.err)"
expect_eq "every device record of the distributed run names the device whole" "$(wc -l <dev.dist)" \
  "$(grep -cF "name=\"$name\"" dev.dist)"
"$SLUICE_BIN_DIR/sluice-trace" perfetto p.json tr >/dev/null
expect_eq "the timeline's device tracks name the device whole, then what they show" 1 \
  "$(( $(grep -cF "\"device $name: commands\"" p.json) > 0 ))"
mkdir tr.on
POCL_DEVICES=pthread SLUICE_OPENCL=on SLUICE_TRACE_DIR="$PWD/tr.on" run_sluice \
  "$SLUICE_APPS_DIR/cl_vector_add" >/dev/null
expect_contains "passed through, the device record names the device whole" "name=\"$name\"" \
  "$("$SLUICE_BIN_DIR/sluice-trace" dump tr.on | grep 'CL_DEVICE ')"

# SLUICE_DEVICES compares up to 255 bytes of text: a query that reads a longer name ends the job
# with one line (it once matched the cut name: '*end' selected nothing), others select as usual.
POCL_DEVICES=pthread rc_of timeout 60 "$MPIEXEC" -n 2 env SLUICE_OPENCL=distributed "SLUICE_DEVICES=SELECT ALL WHERE name LIKE '*end'" \
  LD_PRELOAD="$SLUICE_LIB" clinfo -l >dql.out 2>dql.err
expect_eq "a query on the long name: exit code" 2 "$rc"
expect_eq "one line names the device and the attribute" 1 \
  "$(grep -c "SLUICE_DEVICES: the name of device 0 of rank 0 is longer than the 255 bytes a query compares" dql.err)"
POCL_DEVICES=pthread "$MPIEXEC" -n 2 env SLUICE_OPENCL=distributed "SLUICE_DEVICES=SELECT ALL WHERE type = cpu" \
  LD_PRELOAD="$SLUICE_LIB" clinfo -l >dql2.out
expect_eq "a query on other attributes selects both devices" 2 "$(grep -c 'Device #' dql2.out)"
