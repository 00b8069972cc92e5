# SPDX-License-Identifier: MIT
# A rank that ends before or during MPI's start-up while the other ranks wait in it (docs/FAULTS.md
# "A rank that ends before MPI starts"): every case ends the job with the expected
# exit status and one line (sluice's, or the program's own where the program failed), never a
# hang. Each job runs under `timeout 60` as the hang detector (the documented bound is 5 s after
# the rank ends), and no process of it may be left. Real wrappers (env, bash -c, python3 -c with
# os.execvp), MPMD, 2 to 4 ranks, two hydra proxies (how hydra runs a job on two nodes), and a
# capture job. tests/apps/cl_early_end.c is an ordinary OpenCL program.
# What the launcher does with a rank that ends is MPICH hydra's: the expectations are measured
# with it (srun's are in slurm_jobs.sh).
if ! grep -q HYDRA <<<"$("$MPIEXEC" --version 2>&1)"; then
  echo "SKIP: the expectations are MPICH hydra's, and $MPIEXEC is another launcher"
  exit 77
fi
export POCL_DEVICES=pthread POCL_MAX_PTHREAD_COUNT=1
ulimit -c 0 # the crash case leaves no core file
app=$SLUICE_APPS_DIR/cl_early_end
bad='SELEKT ALL'
dql_line="SLUICE_DEVICES: column 1: expected SELECT at the start of the query, found 'SELEKT'"
dist=(env LD_PRELOAD="$SLUICE_LIB" SLUICE_OPENCL=distributed)
# Marks this test's processes (in their environment) so that concurrent runs are never confused.
export EARLY_END_TAG="dist_early_end.$$"

# pids of the jobs' processes still alive
job_pids() {
  local p
  for p in $(pgrep -x cl_early_end || true) $(pgrep -x mpi_ring || true); do
    { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qx "EARLY_END_TAG=$EARLY_END_TAG" && echo "$p"
  done
  return 0
}

# job NAME CMD...: runs the job; sets rc; fails on a hang or on a process left behind. A run whose
# launcher failed by itself (hydra's proxy died of EPIPE, exit 255: MPICH's race between a rank's
# death and its PMI answer, about 1 run in 10 of ctor_crash at load 4) runs again, at most twice.
job() {
  local name=$1 t0=$EPOCHREALTIME left try
  shift
  for try in 1 2 3; do
    rc_of timeout -k 10 60 "$@" >"$name.out" 2>"$name.err"
    [ "$rc" = 255 ] && hydra_proxy_epipe "$name.err" || break
    echo "$name: hydra's proxy died of EPIPE (exit 255, MPICH's launcher); run $try of 3"
    t0=$EPOCHREALTIME
  done
  [ "$rc" != 124 ] && [ "$rc" != 137 ] || fail "$name: the job hung (ended by the test's timeout): $(head -5 "$name.err")"
  sleep 0.2
  left=$(job_pids)
  if [ -n "$left" ]; then
    kill -KILL $left 2>/dev/null || true
    fail "$name: processes of the job survive: $left"
  fi
  echo "$name: exit $rc after $(python3 -c "print(f'{$EPOCHREALTIME - $t0:.2f}')") s"
}

# stopped NAME RANK [LINE]: exit 2, sluice's one line from RANK (the bad query by default), and
# the program ran nowhere
stopped() {
  expect_eq "$1: exit status" 2 "$rc"
  expect_eq "$1: one line, from rank $2" "sluice[$2]: ${3:-$dql_line}" "$(grep -v '^\[proxy\|^\[mpiexec' "$1.err")"
  ! grep -q '^devices:' "$1.out" || fail "$1: the program ran: $(cat "$1.out")"
}

# 1. The issue's command: the wrapper `env` of every rank but 0 never sees the query, so ranks
#    1..N-1 serve and wait in MPI_Init for rank 0, which stops before main.
for n in 2 3; do
  job "issue$n" "$MPIEXEC" -n $n "${dist[@]}" env SLUICE_DEVICES="$bad" "$app"
  stopped "issue$n" 0
done

# 2. bash -c: a bad value that one rank alone sees; rank 0 (before its MPI), then a serving rank
#    (rank 0 waits for it in MPI_Init at its first OpenCL call).
job bash_rank0 "$MPIEXEC" -n 3 "${dist[@]}" bash -c \
  'if [ "$PMI_RANK" = 0 ]; then export SLUICE_DEVICES="$1"; fi; exec "$0"' "$app" "$bad"
stopped bash_rank0 0
job bash_rank3 "$MPIEXEC" -n 4 "${dist[@]}" bash -c \
  'if [ "$PMI_RANK" = 3 ]; then export SLUICE_DEVICES="$1"; fi; exec "$0"' "$app" "$bad"
stopped bash_rank3 3

# 3. python3 -c with os.execvp on 4 ranks: rank 0's Python sets the query and execs the program
#    (serving ranks serve from their Python process).
job python_rank0 "$MPIEXEC" -n 4 "${dist[@]}" python3 -c 'import os, sys
if os.environ["PMI_RANK"] == "0":
    os.environ["SLUICE_DEVICES"] = sys.argv[2]
os.execvp(sys.argv[1], sys.argv[1:2])' "$app" "$bad"
stopped python_rank0 0

# 4. MPMD: rank 1 of 3 runs with the bad query, ranks 0 and 2 without.
job mpmd_rank1 "$MPIEXEC" -n 1 "${dist[@]}" "$app" : -n 1 "${dist[@]}" SLUICE_DEVICES="$bad" "$app" \
  : -n 1 "${dist[@]}" "$app"
stopped mpmd_rank1 1

# 5. Two hydra proxies (as on two nodes): hydra's proxy cleans up its own node only, so rank 0's
#    stop must reach the other proxy (PMI abort). hydra prints its banner on stdout here.
job proxies2 "$MPIEXEC" -launcher fork -hosts localhost,127.0.0.1 -ppn 1 -n 2 "${dist[@]}" bash -c \
  'if [ "$PMI_RANK" = 0 ]; then export SLUICE_DEVICES="$1"; fi; exec "$0"' "$app" "$bad"
stopped proxies2 0

# 6. Rank 0's program runs without sluice (exec'd with LD_PRELOAD removed) and exits 3 before any
#    OpenCL call: no sluice is left on rank 0 to end the servers; the launcher does.
job no_sluice_rank0 "$MPIEXEC" -n 2 "${dist[@]}" bash -c \
  'if [ "$PMI_RANK" = 0 ]; then exec env -u LD_PRELOAD sh -c "exit 3"; fi; exec "$0"' "$app"
# hydra's status is the OR of the statuses its proxy holds when it reports: rank 0's 3 once the
# proxy reaped it; 1 where it reported first (the proxy's stand-in status for a process whose
# PMI socket closed; 2 of 6 runs at load 1); 9 where it reaped rank 1, killed by its clean-up,
# first (ORed with 3's raw status, the signal wins). All are hydra's; none hangs.
case "$rc" in 3 | 1 | 9) ;; *) fail "no_sluice_rank0: exit status $rc, not hydra's 3, 1 or 9: $(cat no_sluice_rank0.out)" ;; esac
expect_eq "no_sluice_rank0: nothing said" "" "$(cat no_sluice_rank0.err)"

# 7. A crash in a constructor of rank 0's program (before main), MPMD: the program's own failure,
#    which hydra reports (its banner, on stdout); sluice says nothing.
job ctor_crash "$MPIEXEC" -n 1 "${dist[@]}" "$app" crash 0 : -n 2 "${dist[@]}" "$app"
expect_eq "ctor_crash: the signal's number" 11 "$rc"
expect_contains "ctor_crash: the launcher's line" \
  "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Segmentation fault (signal 11)" "$(cat ctor_crash.out)"
expect_eq "ctor_crash: sluice says nothing" "" "$(grep '^sluice' ctor_crash.err || true)"

# 8. An exec failure behind bash on rank 0: bash's line and status.
job exec_fails "$MPIEXEC" -n 3 "${dist[@]}" bash -c \
  'if [ "$PMI_RANK" = 0 ]; then exec ./no-such-program; fi; exec "$0"' "$app"
expect_eq "exec_fails: bash's status" 127 "$rc"
expect_contains "exec_fails: bash's line" "no-such-program: No such file or directory" "$(cat exec_fails.err)"
expect_eq "exec_fails: one line" 1 "$(grep -vc '^\[proxy\|^\[mpiexec' exec_fails.err)"

# 9. Checkpoint capture: rank 1 of an MPI program stops before main (a bad value only it sees)
#    while rank 0 waits in MPI_Init.
job capture_rank1 "$MPIEXEC" -n 2 env LD_PRELOAD="$SLUICE_LIB" SLUICE_CAPTURE='ckpt.%r' SLUICE_STAGE_DIR="$SLUICE_TEST_STAGE" bash -c \
  'if [ "$PMI_RANK" = 1 ]; then export SLUICE_TRACE_LIMIT=12Q; fi; exec "$0"' "$SLUICE_APPS_DIR/mpi_ring"
stopped capture_rank1 1 "invalid value SLUICE_TRACE_LIMIT='12Q': expected a size such as 16M or 1GiB"
expect_eq "capture_rank1: nothing written" "" "$(ls ckpt.* 2>/dev/null || true)"

# The same wrappers with nothing wrong: the jobs run as before.
job good_bash "$MPIEXEC" -n 3 "${dist[@]}" bash -c 'exec "$0"' "$app"
expect_eq "good_bash: runs" "0 devices: 3" "$rc $(cat good_bash.out)"
job good_python "$MPIEXEC" -n 2 "${dist[@]}" python3 -c 'import os, sys; os.execvp(sys.argv[1], sys.argv[1:])' "$app"
expect_eq "good_python: runs" "0 devices: 2" "$rc $(cat good_python.out)"
echo "dist_early_end: all passed"
