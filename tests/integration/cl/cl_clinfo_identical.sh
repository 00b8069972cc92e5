# SPDX-License-Identifier: MIT
# clinfo, a real third-party OpenCL program, prints exactly the same with sluice preloaded (pass
# through, trace on, and SLUICE_OPENCL=off), in its human, raw, all-properties and JSON forms,
# with one device and with three.
export POCL_MAX_PTHREAD_COUNT=2
command -v clinfo >/dev/null || fail "clinfo is not installed (apt-get install clinfo)"

check_clinfo() {
  local label=$1; shift
  for form in "" --raw -a --json; do
    clinfo $form >plain.out 2>plain.err
    local rc_plain=$?
    run_sluice "$@" clinfo $form >sluice.out 2>sluice.err
    local rc_sluice=$?
    expect_eq "$label clinfo $form exit code" "$rc_plain" "$rc_sluice"
    [ "$(wc -c <plain.out)" -gt 2000 ] || fail "$label clinfo $form printed almost nothing"
    diff plain.out sluice.out >diff.out || fail "$label clinfo $form differs: $(head -20 diff.out)"
    echo "ok: $label clinfo $form identical ($(wc -c <plain.out) bytes)"
  done
}

set +e
unset POCL_DEVICES
check_clinfo "1 device" env
check_clinfo "1 device, traced" env SLUICE_TRACE_DIR="$PWD/trace"
check_clinfo "1 device, SLUICE_OPENCL=off" env SLUICE_OPENCL=off
export POCL_DEVICES="pthread pthread pthread"
check_clinfo "3 devices" env
set -e
expect_eq "three devices listed with sluice" 3 "$(run_sluice clinfo -l | grep -c 'Device #')"
