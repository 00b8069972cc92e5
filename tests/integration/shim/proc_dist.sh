# SPDX-License-Identifier: MIT
# Distributed OpenCL when rank 0's program is not the process the launcher started (docs/MPI.md, "Every process of a rank"):
# env chains of one and two levels after the preload (`env LD_PRELOAD=... SLUICE_OPENCL=
# distributed env SLUICE_DEVICES=... prog`), bash -c, a bash job script, a Python driver
# (/usr/bin/python3, subprocess: it closes every descriptor above 2 in the child), each with an
# empty PoCL kernel cache on 3 ranks, so that PoCL forks its linker (ld, preloaded too) for
# every kernel it builds, on rank 0 and on the servers. Two programs: cl_matmul_split (kernels
# over every device) and cl_dist_api_programs (several programs and kernels: source, compile
# and link, built-in). cl_matmul_split runs behind each wrapper on 3 ranks (cold cache) and
# behind three of them on 1, 2 and 4 (warm), cl_dist_api_programs on 3 (cold) and 2: each must
# print exactly what it prints without sluice on as many local devices (one per rank), on
# stdout and stderr (but for the compiler's error count line), and exit 0; every run is
# bounded by `timeout` (a hang fails).
export POCL_MAX_PTHREAD_COUNT=1
devices() { local n=$1 s=""; for ((i = 0; i < n; i++)); do s+="pthread "; done; echo "${s% }"; }

cat > job.sh <<'SH'
#!/bin/bash
# a job script: sets up, runs the program, reports
export OMP_NUM_THREADS=1
"$@"
status=$?
exit $status
SH
cat > driver.py <<'PY'
import subprocess, sys
sys.exit(subprocess.run(sys.argv[1:]).returncode)
PY
chmod +x job.sh

# run LABEL N CACHE APP WRAPPER...: APP on N ranks behind WRAPPER, against N local devices.
# CACHE is "cold" (an empty PoCL kernel cache: PoCL forks ld for every kernel it builds) or
# "warm" (the test's shared cache, to keep the whole matrix within a minute or two).
mkdir warm
run() {
  local label=$1 n=$2 cache=$3 app=$4; shift 4
  POCL_CACHE_DIR=$PWD/warm POCL_DEVICES="$(devices "$n")" "$SLUICE_APPS_DIR/$app" >ref.out 2>ref.err ||
    fail "$app without sluice failed: $(head -3 ref.err)"
  local dir=$PWD/warm
  if [ "$cache" == cold ]; then
    rm -rf cold && mkdir cold
    dir=$PWD/cold
  fi
  set +e
  POCL_CACHE_DIR=$dir POCL_DEVICES=pthread timeout 120 "$MPIEXEC" -n "$n" \
    env LD_PRELOAD="$SLUICE_LIB" SLUICE_OPENCL=distributed "$@" "$SLUICE_APPS_DIR/$app" >dist.out 2>dist.err
  local rc=$?
  set -e
  [ "$rc" == 0 ] || fail "$label, $app on $n ranks ($cache cache): exit code $rc: $(head -5 dist.err)"
  # cl_dist_api_programs builds a program that fails on purpose: the compiler's own count line
  # comes once per building process (each rank, and the servers' retry without the added
  # -cl-kernel-arg-info, DISTRIBUTED.md), so that line is left out of the comparison
  diff <(grep -Ev '^[0-9]+ errors? generated\.$' ref.err) <(grep -Ev '^[0-9]+ errors? generated\.$' dist.err) \
    >diff.err || fail "$label, $app on $n ranks ($cache cache): stderr: $(head -5 diff.err)"
  diff ref.out dist.out >diff.out || fail "$label, $app on $n ranks ($cache cache): output differs: $(head -10 diff.out)"
  [ "$cache" != cold ] || [ -n "$(ls cold)" ] || fail "$label: PoCL's kernel cache stayed empty (no kernel was built)"
  echo "ok: $label, $app on $n ranks ($cache cache) prints what it prints on $n local devices"
}

# every wrapper on 3 ranks with a cold cache and on 4 with a warm one; the env chain also on 1
# and 2 (the rank counts where rank 0 serves nothing or one peer)
run "env chain" 3 cold cl_matmul_split env SLUICE_DEVICES="SELECT ALL"
run "bash job script" 3 cold cl_matmul_split ./job.sh
for n in 3 1 2 4; do
  cache=warm
  [ "$n" != 3 ] || cache=cold
  run "env env chain" "$n" $cache cl_matmul_split env A=1 env SLUICE_DEVICES="SELECT ALL"
  case $n in 1 | 2) continue ;; esac
  run "bash -c" "$n" $cache cl_matmul_split bash -c '"$0" "$@"; true'
  run "Python driver" "$n" $cache cl_matmul_split /usr/bin/python3 driver.py
done
# several programs and kernels built with a cold cache behind the deepest wrapper, a Python
# driver, and on 2 ranks with a warm one behind an env chain
run "Python driver" 3 cold cl_dist_api_programs /usr/bin/python3 driver.py
run "env env chain" 2 warm cl_dist_api_programs env A=1 env SLUICE_DEVICES="SELECT ALL"

# The issue's command: a wrapper after the preload on rank 0 and a query selecting 2 devices.
rm -rf cache && mkdir cache
POCL_CACHE_DIR=$PWD/cache POCL_DEVICES=pthread run_dist 3 \
  SLUICE_OPENCL=distributed env SLUICE_DEVICES="SELECT TOP 2" clinfo -l >top2.out 2>top2.err
expect_eq "env SLUICE_DEVICES=\"SELECT TOP 2\" clinfo: two devices" 2 "$(grep -c 'Device #' top2.out)"
[ ! -s top2.err ] || fail "SELECT TOP 2: stderr: $(head -3 top2.err)"

# Rank 0's program never asks for OpenCL: its shell ends the servers at exit, no hang.
RUN_TIMEOUT=60 run_dist 3 SLUICE_OPENCL=distributed bash -c 'true; echo done' \
  >none.out 2>none.err || fail "no OpenCL on rank 0: $(head -3 none.err)"
expect_eq "no OpenCL on rank 0: the shells ran, the job ended" "done done done" "$(echo $(cat none.out))"
