# SPDX-License-Identifier: MIT
# Where sluice's own threads run when the launcher binds the ranks (SLUICE_HELPER_CPUS,
# docs/ENV.md). cl_dist_threads does real OpenCL work, then prints the CPUs each of its threads
# may use. Every job runs under taskset -c 0,1 (the job has CPUs 0 and 1 whatever the machine
# has), and Hydra binds the ranks as asked (-bind-to user:0,0: every rank on CPU 0, CPU 1 free):
#   - auto (the default): rank 0's scheduler thread moves to CPU 1, every other thread of the
#     program keeps CPU 0; each serving rank's process may use 0-1 (trace: HELPER_CPUS read back
#     from the kernel); on 2 and 3 ranks;
#   - ranks bound to CPUs 0 and 1 (-bind-to core), or not bound: no CPU is free, nothing moves;
#     nor when rank 0's program bound a thread of its own to CPU 1 before its first OpenCL call
#     (a hybrid program's OpenMP threads: their CPUs are taken too);
#   - a job given CPU 0 alone (taskset -c 0 mpiexec ...): nothing moves, CPU 1 is not the job's;
#   - inherit: nothing moves; a CPU list: sluice's threads go exactly there;
#   - a bad value stops the program before main with one line naming the variable; a valid one
#     leaves a program that is not distributed OpenCL as it is.
export POCL_MAX_PTHREAD_COUNT=1 POCL_DEVICES=pthread
"$MPIEXEC" --version 2>&1 | grep -q HYDRA || { echo "needs MPICH's Hydra launcher (its -bind-to user:): skipped"; exit 77; }
grep -q -E '^Cpus_allowed_list:[[:space:]]+0-' /proc/self/status || { echo "needs CPUs 0 and 1: skipped"; exit 77; }
app=$SLUICE_APPS_DIR/cl_dist_threads
"$app" >local.out 2>&1 || fail "cl_dist_threads without sluice: $(head -3 local.out)"
grep -q '^devices 1, 1048576 bytes each written and read back$' local.out || fail "local run: $(head -3 local.out)"

# run LABEL NRANKS BIND ENV...: the program on NRANKS ranks, one device each, traced into LABEL.tr.
run() {
  local label=$1 n=$2 bind=$3 rc=0 args=() cpus=${JOB_CPUS:-0,1}
  shift 3
  [ "${1:-}" != --pin-thread ] || { args=("$1" "$2"); shift 2; }
  rc_of timeout 120 taskset -c "$cpus" "$MPIEXEC" -n "$n" $bind env SLUICE_OPENCL=distributed SLUICE_TRACE_DIR="$PWD/$label.tr" "$@" \
    LD_PRELOAD="$SLUICE_LIB" "$app" "${args[@]}" >"$label.out" 2>"$label.err"
  expect_eq "$label: exit code ($(head -3 "$label.err"))" 0 "$rc"
  [ ! -s "$label.err" ] || fail "$label: printed on stderr: $(head -3 "$label.err")"
  grep -q "^devices $n, 1048576 bytes each written and read back$" "$label.out" ||
    fail "$label: $(head -3 "$label.out")"
  "$SLUICE_BIN_DIR/sluice-trace" dump "$label.tr" | grep ' HELPER_CPUS ' >"$label.moves" || true
}
# threads_on LABEL NAME: the CPU lists of the program's threads called NAME, one per line.
threads_on() { sed -n "s/^thread $2 cpus //p" "$1.out" | sort -u; }
program_threads() { grep -v '^thread sluice-' "$1.out" | sed -n 's/^thread .* cpus //p' | sort -u; }

for n in 2 3; do
  all0=$(printf '0,%.0s' $(seq "$n")); all0=${all0%,}
  run auto$n "$n" "-bind-to user:$all0"
  expect_eq "auto, $n ranks on CPU 0: the scheduler thread" 1 "$(threads_on auto$n sluice-sched)"
  expect_eq "auto, $n ranks on CPU 0: the program's threads" 0 "$(program_threads auto$n)"
  expect_eq "auto, $n ranks on CPU 0: rank 0 moved its scheduler thread only" 1 \
    "$(grep -c '^rank 0 .* CPUs now=2, CPUs the rank is bound to=1$' auto$n.moves)"
  for r in $(seq 1 $((n - 1))); do
    # the serving thread is the process's first (thread id = pid), its pong thread follows it
    grep -q -E "^rank $r pid ([0-9]+) tid \\1 .* HELPER_CPUS thread id=\\1, CPUs now=3, CPUs the rank is bound to=1$" \
      auto$n.moves || fail "auto, $n ranks: serving rank $r's process not moved to CPUs 0-1: $(cat auto$n.moves)"
  done
done

run core 2 "-bind-to core"
expect_eq "ranks bound to CPUs 0 and 1: the scheduler thread stays" 0 "$(threads_on core sluice-sched)"
expect_eq "ranks bound to CPUs 0 and 1: nothing moved" 0 "$(wc -l <core.moves)"

run unbound 2 ""
expect_eq "unbound ranks: the scheduler thread" 0-1 "$(threads_on unbound sluice-sched)"
expect_eq "unbound ranks: nothing moved" 0 "$(wc -l <unbound.moves)"

run pinned 2 "-bind-to user:0,0" --pin-thread 1
expect_eq "a program thread on CPU 1: it stays there" 1 "$(threads_on pinned pinned)"
expect_eq "a program thread on CPU 1: the scheduler thread stays" 0 "$(threads_on pinned sluice-sched)"
expect_eq "a program thread on CPU 1: rank 0 moved nothing" 0 "$(grep -c '^rank 0 ' pinned.moves)"

JOB_CPUS=0 run job0 2 "-bind-to user:0,0"
expect_eq "a job given CPU 0 alone: the scheduler thread stays" 0 "$(threads_on job0 sluice-sched)"
expect_eq "a job given CPU 0 alone: nothing moved" 0 "$(wc -l <job0.moves)"

run inherit 2 "-bind-to user:0,0" SLUICE_HELPER_CPUS=inherit
expect_eq "inherit: the scheduler thread stays" 0 "$(threads_on inherit sluice-sched)"
expect_eq "inherit: nothing moved" 0 "$(wc -l <inherit.moves)"

run list 2 "-bind-to user:0,0" SLUICE_HELPER_CPUS=1
expect_eq "SLUICE_HELPER_CPUS=1: the scheduler thread" 1 "$(threads_on list sluice-sched)"
expect_eq "SLUICE_HELPER_CPUS=1: the program's threads" 0 "$(program_threads list)"
grep -q -E '^rank 1 pid ([0-9]+) tid \1 .* CPUs now=2, CPUs the rank is bound to=1$' list.moves ||
  fail "SLUICE_HELPER_CPUS=1: the serving process is not on CPU 1: $(cat list.moves)"

for bad in "3-1" "0,x" "all"; do
  SLUICE_HELPER_CPUS=$bad rc_of run_sluice /bin/echo hi >bad.out 2>bad.err
  expect_eq "SLUICE_HELPER_CPUS='$bad': exit status" 2 "$rc"
  expect_eq "SLUICE_HELPER_CPUS='$bad': one line on stderr" 1 "$(wc -l <bad.err)"
  grep -q "SLUICE_HELPER_CPUS: '$bad' is not a CPU list" bad.err || fail "SLUICE_HELPER_CPUS='$bad': $(cat bad.err)"
  [ ! -s bad.out ] || fail "SLUICE_HELPER_CPUS='$bad': the program ran"
done
expect_eq "a valid SLUICE_HELPER_CPUS outside distributed OpenCL" hi \
  "$(SLUICE_HELPER_CPUS=1 run_sluice /bin/echo hi)"
