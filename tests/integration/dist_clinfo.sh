# Distributed OpenCL, devices: under `mpiexec -n 3` with SLUICE_OPENCL=distributed and one PoCL
# device per rank, clinfo (a real third-party program, run on rank 0 only: ranks 1 and 2 never
# enter its main) lists three devices under ONE platform, exactly as a single process with three
# local devices lists them; the serving ranks print nothing and the job exits 0. Full clinfo
# output is compared too, except the lines that truly differ (docs/DISTRIBUTED.md): PoCL numbers
# the vendor id per device of a process, and NULL-platform defaults are not distributed yet.
export POCL_MAX_PTHREAD_COUNT=1
command -v clinfo >/dev/null || fail "clinfo is not installed (apt-get install clinfo)"

POCL_DEVICES="pthread pthread pthread" clinfo -l >local.out
set +e
POCL_DEVICES=pthread mpirun 3 env SLUICE_OPENCL=distributed LD_PRELOAD="$SLUICE_LIB" clinfo -l >dist.out 2>dist.err
rc=$?
set -e
expect_eq "clinfo -l under mpiexec -n 3: exit code" 0 "$rc"
expect_eq "platforms listed" 1 "$(grep -c '^Platform #' dist.out)"
expect_eq "devices listed under that platform" 3 "$(grep -c 'Device #' dist.out)"
diff local.out dist.out >diff.out || fail "clinfo -l differs from three local devices: $(cat diff.out)"
echo "ok: clinfo -l identical to a single process with three devices ($(wc -l <dist.out) lines)"
[ ! -s dist.err ] || fail "something was printed on stderr: $(head -5 dist.err)"

# Full output: every property of every device comes from the rank that owns it.
POCL_DEVICES="pthread pthread pthread" clinfo >local_full.out
POCL_DEVICES=pthread mpirun 3 env SLUICE_OPENCL=distributed LD_PRELOAD="$SLUICE_LIB" clinfo >dist_full.out
filter() { sed -n '/NULL platform behavior/q;p' "$1" | grep -v 'Device Vendor ID'; }
diff <(filter local_full.out) <(filter dist_full.out) >diff_full.out ||
  fail "clinfo differs from three local devices: $(head -20 diff_full.out)"
[ "$(filter dist_full.out | wc -l)" -gt 400 ] || fail "clinfo printed too little"
echo "ok: clinfo properties identical for three devices on three ranks ($(filter dist_full.out | wc -l) lines)"

# With two ranks the platform holds two devices (even and odd counts).
POCL_DEVICES=pthread mpirun 2 env SLUICE_OPENCL=distributed LD_PRELOAD="$SLUICE_LIB" clinfo -l >dist2.out
expect_eq "devices with two ranks" 2 "$(grep -c 'Device #' dist2.out)"
