# SPDX-License-Identifier: MIT
# SLUICE_DRAIN_EVERY and SLUICE_KEEP on one host (docs/REDUNDANCY.md). 3 and 4 ranks write 7
# steps of one set with SLUICE_DRAIN_EVERY=4 SLUICE_KEEP=2 and then wait: versions 1-3 and 5-7
# stay node-local, 4 is drained. Once every rank recorded version 7, the whole job is killed
# (SIGKILL): the container must hold version 4, `sluice-ckpt ls` must show versions 6 and 7
# staged and complete (5 no more: KEEP), and a restart on another rank count must read every
# member of step 7 without reading the container (its trace: CKPT_LOCAL_READ, no
# CONTAINER_READ). (A job that ends instead drains at exit: levels_job_end.sh.) With the default
# (SLUICE_DRAIN_EVERY=1, 3 ranks) the killed job's container holds step 7. Ranks compute 100 ms
# between steps. SLUICE_TEST_ROUNDS (default 1) repeats the whole.
app=$SLUICE_APPS_DIR/mpi_ckpt_levels
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
strace_bin=$SLUICE_BIN_DIR/sluice-trace
rounds=${SLUICE_TEST_ROUNDS:-1}

# records N VERSION STAGE: how many node-local records of VERSION the stage folder holds.
records() { ls "$2" 2>/dev/null | grep -c -- "-$(printf %020d "$1")-[0-9]*\.rec$" || true; }

# run_job N DIR STAGE MODE [VAR=VALUE...]: the writer job, SIGKILLed once every rank recorded
# version 7 (or, with the default drain, once the container is at version 7); MODE names it in
# messages.
run_job() {
  local n=$1 d=$2 stage=$3 mode=$4
  shift 4
  rm -rf "$d" "$stage"
  mkdir -p "$d"
  setsid env SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_STAGE_DIR="$stage" "$@" \
    timeout 120 "$MPIEXEC" -n "$n" env LD_PRELOAD="$SLUICE_LIB" "$app" write "$d" 7 100 \
    > "$d.out" 2>&1 &
  local job=$! t=0
  while :; do
    if [ "${WAIT_RECORDS:-1}" = 1 ] && [ "$(records 7 "$stage")" = "$n" ]; then break; fi
    # Every step written and drained: nothing is staged any more (steps of a busy home may
    # share a version, so its number is not waited for).
    if [ "${WAIT_RECORDS:-1}" = 0 ] && [ -e "$d/.written" ] && \
       [ -z "$(ls "$stage" 2>/dev/null | grep '\.data$' || true)" ]; then break; fi
    t=$((t + 1))
    [ $t -lt 1200 ] || { kill -9 -- -$job 2>/dev/null || true; fail "n$n $mode: version 7 never came: $(cat "$d.out")"; }
    sleep 0.05
  done
  kill -9 -- -$job
  wait $job 2>/dev/null || true
  # Until the last rank is gone (reaped), a read takes its staged files for a running
  # process's (commit_read.c), not for a kept version: wait, bounded. The ranks are not in
  # mpiexec's process group (hydra's proxy gives each a session): they are killed by name.
  for t in $(seq 200); do kill -0 -- -$job 2>/dev/null || break; sleep 0.05; done
  ! kill -0 -- -$job 2>/dev/null || fail "n$n: the killed job's processes are still there after 10 s"
  ranks_gone "$app write $d "
}

for round in $(seq "$rounds"); do
  for n in 3 4; do
    d=$PWD/n$n stage=$PWD/stage$n m=$(( n == 3 ? 2 : 3 ))
    WAIT_RECORDS=1 run_job $n "$d" "$stage" kill SLUICE_DRAIN_EVERY=4 SLUICE_KEEP=2
    "$ckpt" ls --stage "$stage" "$d" > ls$n.txt
    expect_contains "n$n: the container holds the drained version 4" " version 4  level durable" "$(cat ls$n.txt)"
    expect_contains "n$n: version 6 kept node-local" "version 6  level staged  node-local: records of $n of $n ranks here (complete)" "$(cat ls$n.txt)"
    expect_contains "n$n: version 7 kept node-local" "version 7  level staged  node-local: records of $n of $n ranks here (complete)" "$(cat ls$n.txt)"
    expect_eq "n$n: version 5 no longer kept (SLUICE_KEEP=2)" "" "$(grep ' version 5 ' ls$n.txt || true)"
    expect_eq "n$n: version 5's records gone" 0 "$(records 5 "$stage")"
    # Restart on another rank count, traced: step 7 from node-local storage.
    rm -rf "tr$n"
    SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_STAGE_DIR="$stage" SLUICE_TRACE_DIR="$PWD/tr$n" \
      RUN_TIMEOUT=60 run_dist $m "$app" verify "$d" 7 $n 2> v$n.err \
      || fail "n$n: the restart did not read step 7: $(cat v$n.err)"
    "$strace_bin" dump "tr$n" > dump$n.txt 2>&1 || fail "n$n: sluice-trace dump failed: $(cat dump$n.txt)"
    expect_eq "n$n: every member read from node-local storage" "$n" "$(grep -c CKPT_LOCAL_READ dump$n.txt || true)"
    expect_eq "n$n: no container read" 0 "$(grep -c CONTAINER_READ dump$n.txt || true)"
  done
  # The default drains every version (3 ranks): killed, the container holds step 7.
  d=$PWD/n3 stage=$PWD/stage3
  WAIT_RECORDS=0 run_job 3 "$d" "$stage" kill
  expect_eq "n3 default: no node-local record" "" "$(ls "$stage" | grep '\.rec$' || true)"
  SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_STAGE_DIR="$PWD/empty3" \
    RUN_TIMEOUT=60 run_dist 2 "$app" verify "$d" 7 3 2> v3.err \
    || fail "n3 default: the container does not hold step 7: $(cat v3.err)"
  echo "ok: round $round: 3 and 4 ranks, DRAIN_EVERY=4 KEEP=2, killed after step 7: versions 6-7 node-local, step 7 restarted without a container read; default (3 ranks): step 7 durable"
done
