# SPDX-License-Identifier: MIT
# Distributed OpenCL, faults (docs/FAULTS.md): every case ends the job (each run is under
# `timeout 60`, a hang detector, with SIGKILL 10 s later if the launcher stays), with a non-zero exit code where it must be, exactly one sluice
# line on stderr naming the rank that died (none where nothing of sluice's failed), and no process
# of the job left. tests/apps/cl_dist_fault.c is an ordinary program: one context over every
# device, kernels on each in turn. 3 ranks, one pthread device each.
# What the launcher does with a dead rank (and what it prints) is MPICH hydra's: the expectations
# are measured with it.
if ! "$MPIEXEC" --version 2>&1 | grep -q HYDRA; then
  echo "skipped: the expectations are MPICH hydra's, and $MPIEXEC is another launcher"
  exit 0
fi
export POCL_DEVICES=pthread POCL_MAX_PTHREAD_COUNT=1
app="$SLUICE_APPS_DIR/cl_dist_fault"
# Marks this test's processes (in their environment) so that concurrent runs are never confused.
export FAULTS_TEST_TAG="dist_faults.$$"

# pids of the job's processes of rank $1 (any rank when empty)
job_pids() {
  local p
  for p in $(pgrep -x cl_dist_fault || true); do
    local envs
    envs=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null) || continue
    grep -qx "FAULTS_TEST_TAG=$FAULTS_TEST_TAG" <<<"$envs" || continue
    [ -z "${1:-}" ] || grep -qx "PMI_RANK=$1" <<<"$envs" || continue
    echo "$p"
  done
}

# start NAME ARGS...: the job in the background (its timeout's pid in $job); traced into NAME.tr
# when $traced is set
start() {
  local name=$1; shift
  timeout -k 10 60 "$MPIEXEC" -n 3 env SLUICE_OPENCL=distributed ${traced:+SLUICE_TRACE_DIR="$PWD/$name.tr"} \
    LD_PRELOAD="$SLUICE_LIB" "$app" "$@" >"$name.out" 2>"$name.err" &
  job=$!
}

# The sluice lines of a fault, in FILE. While gdb holds a rank (inject) for more than 5 s, rank 0
# may say that rank has not answered (and then that it answers again): true, and not the fault's.
fault_lines() { grep '^sluice' "$1" | grep -vE 'has not answered for|answers again$' || true; }

# finish NAME: waits for the job; sets rc and secs, fails on a hang or a survivor (killed first:
# a rank left stopped would keep the next cases and the launcher waiting)
finish() {
  local name=$1 t0=$SECONDS
  set +e
  wait "$job"
  rc=$?
  set -e
  secs=$((SECONDS - t0))
  [ "$rc" != 124 ] && [ "$rc" != 137 ] || fail "$name: the job hung (ended by timeout, exit $rc): $(cat "$name.err")"
  sleep 0.2
  local left
  left=$(job_pids)
  if [ -n "$left" ]; then
    kill -KILL $left 2>/dev/null || true
    fail "$name: processes of the job survive: $left"
  fi
  sluice_lines=$(fault_lines "$name.err")
  echo "$name: exit $rc after ${secs}s; sluice said: ${sluice_lines:-nothing}"
}

# run_until_running NAME: a job looping kernels on every device, once it runs
run_until_running() {
  start "$1" loop 40
  local i
  for i in $(seq 300); do
    grep -q '^running devices=3' "$1.out" 2>/dev/null && return 0
    sleep 0.1
  done
  fail "$1: the program never ran: $(cat "$1.err")"
}

# expect_one_line NAME RANK SIGNAL-TEXT: exactly one sluice line, from the rank that died
expect_one_line() {
  expect_eq "$1: one sluice line" 1 "$(fault_lines "$1.err" | grep -c . || true)"
  expect_contains "$1: the line names rank $2 and what it served" \
    "sluice[$2]: distributed OpenCL: serving rank $2 (devices: pthread-" "$sluice_lines"
  expect_contains "$1: the line says why" "died of signal $3; the job ends" "$sluice_lines"
}

expect_failed() { [ "$rc" != 0 ] || fail "$1: exit code 0 after a fault"; echo "ok: $1: exit code $rc"; }

# 1. A kernel crashes the driver's process on rank 2 (a real SIGSEGV in PoCL's worker thread).
#    Traced: the trace core's fatal handler still runs after sluice's line.
traced=1 start segv crash 2 segv
finish segv
expect_failed segv
expect_one_line segv 2 "11 (Segmentation fault)"
"$SLUICE_BIN_DIR/sluice-trace" dump segv.tr >dump.txt 2>&1 || true
expect_contains "segv: rank 2's trace records the signal" "SIGNAL_FATAL" "$(grep '^rank 2 ' dump.txt || true)"

# 2. A kernel traps on rank 1 (SIGILL).
start trap crash 1 trap
finish trap
expect_failed trap
expect_one_line trap 1 "4 (Illegal instruction)"

# 3. The driver aborts on rank 1 (simulated by SIGABRT from outside), 4. rank 2 is sent SIGTERM.
for c in "abrt 1 ABRT 6 (Aborted)" "term 2 TERM 15 (Terminated)"; do
  read -r name rank sig text <<<"$c"
  run_until_running "$name"
  kill -"$sig" "$(job_pids "$rank")"
  finish "$name"
  expect_failed "$name"
  expect_one_line "$name" "$rank" "$text"
done

# inject NAME RANK EXPR: gdb calls EXPR in rank RANK's main thread, stopped where it waits (the
# program's sleep, the serving loop's sleep or timed wait), never inside the MPI library, whose
# lock an interrupted MPI call may hold. Where gdb cannot do it (no gdb, no ptrace, no symbol),
# the job is ended and the case skipped (status 1).
# gdb gets 30 s (SIGKILL 5 s later: killed while it holds the rank, it can leave it stopped,
# and a stopped rank ignores the launcher's SIGTERM): the rank is continued in any case.
inject() {
  local pid why="gdb could not call $3 in rank $2"
  pid=$(job_pids "$2")
  [ -n "$pid" ] || fail "$1: rank $2 of the job is gone before the injection: $(cat "$1.err")"
  if command -v gdb >/dev/null 2>&1; then
    local grc=0
    timeout -k 5 30 gdb -p "$pid" -batch -ex 'break clock_nanosleep thread 1' \
      -ex 'break pthread_cond_timedwait thread 1' -ex continue -ex "call $3" >"$1.gdb" 2>&1 || grc=$?
    kill -CONT "$pid" 2>/dev/null || true
    [ "$grc" != 124 ] && [ "$grc" != 137 ] || why="gdb did not finish within 30 s (exit $grc)"
    grep -q 'hit Breakpoint' "$1.gdb" && ! grep -q 'No symbol' "$1.gdb" && return 0
  fi
  kill -TERM "$job"
  finish "$1"
  echo "skipped: $1 ($why)"
  return 1
}

# 4b. The driver calls exit(1) on rank 2 (injected with gdb, where gdb can attach).
run_until_running exit1
if inject exit1 2 '(void)exit(1)'; then
  finish exit1
  expect_failed exit1
  expect_eq "exit1: one sluice line" 1 "$(fault_lines exit1.err | grep -c . || true)"
  expect_contains "exit1: the line names rank 2 and the status" \
    "sluice[2]: distributed OpenCL: serving rank 2 (devices: pthread-" "$sluice_lines"
  expect_contains "exit1: the line says why" "exited with status 1 while serving; the job ends" "$sluice_lines"
fi

# 4c. An MPI call fails (injected with gdb): rank 0 about rank 2 (rank 0's backend calls
#     dist_fault_peer), then rank 2 about rank 0 (the serving rank's transport and engine reach it
#     through the hook rank 0's backend registered, cl/serve/remote_peer.h). One sluice line from the
#     rank that saw it, MPI_Abort ends every rank with exit code 86 (MPICH adds its own
#     "Abort(86)" line), no MPICH noise.
for c in "peer0 0 2 dist_fault_peer" "peer2 2 0 sluice_remote_peer_failed"; do
  read -r name rank peer fn <<<"$c"
  run_until_running "$name"
  inject "$name" "$rank" "(void)$fn($peer, 15, (const char *)program_invocation_short_name)" || continue
  finish "$name"
  # The launcher may SIGKILL a rank before MPI ends it, whichever rank aborts: 86 or 9 (seen for
  # an abort on rank 0 as well, once, on a loaded machine).
  if [ "$rc" != 9 ]; then expect_eq "$name: exit code" 86 "$rc"; fi
  expect_eq "$name: one sluice line" 1 "$(fault_lines "$name.err" | grep -c . || true)"
  if [ "$rank" = 0 ]; then
    expect_contains "$name: rank 0 names the serving rank and its devices" \
      "sluice[0]: distributed OpenCL: serving rank 2 (devices: pthread-" "$sluice_lines"
  else
    expect_contains "$name: rank 2 names rank 0" "sluice[2]: distributed OpenCL: rank 0 (the program) failed" \
      "$sluice_lines"
  fi
  expect_contains "$name: what failed, and the end" "failed while cl_dist_fault: " "$sluice_lines"
  expect_contains "$name: the exit code said" "ending the job (exit code 86)" "$sluice_lines"
  expect_eq "$name: no MPI noise from exit work on the aborted job" "" \
    "$(grep -E 'Assertion failed|Internal error' "$name.err" || true)"
done

# 5. SIGKILL of a serving rank: no process can say anything (the launcher kills the others at
#    once, with SIGKILL); MPICH's banner (on mpiexec's stdout) gives the pid and the signal. When
#    rank 0 was reading the dead rank's memory at that moment (UCX's CMA), UCX aborts rank 0
#    first and the banner names rank 0's SIGABRT instead.
run_until_running kill9
kill -KILL "$(job_pids 2)"
finish kill9
expect_failed kill9
expect_eq "kill9: no sluice line" "" "$sluice_lines"
expect_contains "kill9: the launcher's banner" "BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES" "$(cat kill9.out)"

# 6. The launcher ending the job (mpiexec gets SIGTERM and forwards it to every rank): not a
#    fault of any rank, so no sluice line.
run_until_running launcher_term
kill -TERM "$job" # timeout passes it on to mpiexec
finish launcher_term
expect_eq "launcher_term: no sluice line" "" "$sluice_lines"

# 7. Rank 0 ends in every way: the servers end with it, the exit code is the program's, and
#    nobody prints anything, except for a crash of rank 0 (the launcher's banner).
for c in "exit3 3" "_exit5 5" "_exit0 0" "return 0"; do
  read -r how want <<<"$c"
  traced=1 start "end$how" end "$how"
  finish "end$how"
  expect_eq "rank 0 $how: the job's exit code" "$want" "$rc"
  expect_eq "rank 0 $how: nothing on stderr" "" "$(cat "end$how.err")"
  "$SLUICE_BIN_DIR/sluice-trace" dump "end$how.tr" >"end$how.dump" 2>&1 || true
  expect_eq "rank 0 $how: both servers finalized MPI and exited 0" 2 \
    "$(grep -cE '^rank [12] .*PROCESS_EXIT exit status=0' "end$how.dump" || true)"
done
# A child of rank 0 leaving through _exit is not rank 0 ending: the servers keep serving.
start forkexit end fork
finish forkexit
expect_eq "forkexit: exit code" 0 "$rc"
expect_contains "forkexit: the servers still serve after the child's _exit" "child status 0, second round ok" \
  "$(cat forkexit.out)"
expect_eq "forkexit: nothing on stderr" "" "$(cat forkexit.err)"
start crash0 crash 0 segv
finish crash0
expect_failed crash0
expect_eq "crash0: no sluice line (rank 0 is the program)" "" "$sluice_lines"
run_until_running kill0
kill -KILL "$(job_pids 0)"
finish kill0
expect_failed kill0

# 8. A command that fails on one device (a local size above the device's maximum, on rank 1):
#    the program gets CL_INVALID_WORK_GROUP_SIZE from the enqueue or its event, and every device,
#    rank 1's included, still runs kernels right afterwards.
start badlocal badlocal
finish badlocal
expect_eq "badlocal: exit code" 0 "$rc"
expect_contains "badlocal: the error reaches the program" "bad local size: CL_INVALID_WORK_GROUP_SIZE (-54)" \
  "$(cat badlocal.out)"
for d in 0 1 2; do
  expect_contains "badlocal: device $d works after it" "device $d after the fault: 1..1" "$(cat badlocal.out)"
done
expect_eq "badlocal: nothing on stderr" "" "$(cat badlocal.err)"
