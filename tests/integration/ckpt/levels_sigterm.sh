# SPDX-License-Identifier: MIT
# A job ended by SIGTERM right after its last checkpoint keeps it (docs/REDUNDANCY.md,
# "SIGTERM"): mpi_ckpt_levels writes 5 steps with SLUICE_DRAIN_EVERY=3 (version 3 drained, 4 and
# 5 node-local) and waits; once every rank recorded version 5, every process of the job gets
# SIGTERM (as a batch system's time limit sends it: mpiexec and each rank). sluice holds the
# signal back, drains, then hands it to the program's disposition:
#   3 ranks, no handler of their own: they die (mpiexec reports signal 15; or 9 where hydra's
#     proxies, which the group's SIGTERM reaches too, ended a rank with SIGKILL first: 1 full
#     suite run of 2 under load; or nothing, where the signal ended mpiexec before the ranks'
#     statuses reached it; a rank that kept the signal would still run, checked), and the
#     container holds step 5 (`sluice-ckpt ls`: version 6, the drain's number, level durable,
#     nothing left staged; its bytes are step 5's);
#   4 ranks with a SIGTERM handler of their own (sigaction reports it back as installed): each
#     rank's handler runs with the signal's own siginfo (SI_USER, a sender's pid) and the
#     ranks end gracefully (they leave their wait, finalize MPI and exit 43); the container
#     holds step 5 too. Ranks 1 and 3 set theirs the System V way (sigignore, ssignal,
#     siginterrupt, sigset: glibc builds them on its internal sigaction, which sluice's sigaction
#     never sees), each checked against what sigaction reports; without their wrappers the
#     rank sees sluice's handler or a stale disposition and exits 4.
# Without the hold the ranks die at once and the container stays at version 3.
# Steps are 300 ms apart: written back to back under load (ctest -j2), two steps can become one
# version and version 5 never comes (1 of 8 runs hung so).
# SLUICE_TEST_ROUNDS (default 1) repeats the whole.
app=$SLUICE_APPS_DIR/mpi_ckpt_levels
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
rounds=${SLUICE_TEST_ROUNDS:-1}

records() { ls "$2" 2>/dev/null | grep -c -- "-$(printf %020d "$1")-[0-9]*\.rec$" || true; }

# termed N DIR STAGE [term]: the writer, sent SIGTERM (all its processes) once every rank
# recorded version 5; waits for the job to end.
termed() {
  local n=$1 d=$2 stage=$3 t=0
  rm -rf "$d" "$stage"
  mkdir -p "$d"
  # No `timeout` in the group: it passes the group's SIGTERM on to the group a second time, and
  # hydra's mpiexec, signalled twice, sometimes exits without its report (2 of 8 runs under load).
  setsid env SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_STAGE_DIR="$stage" SLUICE_DRAIN_EVERY=3 SLUICE_KEEP=2 \
    "$MPIEXEC" -n "$n" env LD_PRELOAD="$SLUICE_LIB" "$app" write "$d" 5 300 ${4:-} > "$d.out" 2>&1 &
  local job=$!
  # the bound on the job (its own session: killing it ends its sleep too, and the sleep holds no
  # descriptor of the test's output)
  setsid bash -c 'sleep 60; kill -9 -- -$1 2> /dev/null' sh "$job" < /dev/null > /dev/null 2>&1 &
  local watchdog=$!
  until [ "$(records 5 "$stage")" = "$n" ]; do
    t=$((t + 1))
    [ $t -lt 1200 ] || { kill -9 -- -$job 2>/dev/null; fail "version 5 never recorded: $(cat "$d.out")"; }
    kill -0 $job 2>/dev/null || fail "the job ended before version 5 was recorded: $(cat "$d.out")"
    sleep 0.05
  done
  kill -TERM -- -$job
  rc=0
  wait $job 2>/dev/null || rc=$?
  for t in $(seq 400); do kill -0 -- -$job 2>/dev/null || break; sleep 0.05; done
  kill -0 -- -$job 2>/dev/null && { kill -9 -- -$job; fail "the job still runs 20 s after SIGTERM: $(cat "$d.out")"; }
  kill -- -"$watchdog" 2> /dev/null || true
  cat "$d.out"
}

# durable_step DIR STEP N: ls says the drain of step STEP (version 6: drains take the next
# number) is durable, the N members hold its bytes and nothing is left node-local.
durable_step() {
  expect_contains "$1: step $2 durable after SIGTERM" "version 6  level durable" "$("$ckpt" ls --stage "$1.stage" "$1/ckpt.@r.sluice" 2>&1)"
  expect_eq "$1: nothing left node-local" "" "$("$ckpt" ls --stage "$1.stage" "$1/ckpt.@r.sluice" | grep 'level staged' || true)"
  rm -rf "$1.x"
  "$ckpt" extract -q -o "$1.x" "$1/ckpt.@r.sluice" > /dev/null || fail "extract of $1 failed"
  /usr/bin/python3 "$SOURCE_DIR/tests/integration/ckpt/levels_step_bytes.py" "$1.x" "$2" "$3" || fail "$1: the container does not hold step $2"
}

for round in $(seq "$rounds"); do
  d=$PWD/plain
  termed 3 "$d" "$d.stage"
  durable_step "$d" 5 3
  # hydra reports how the ranks ended unless the group's SIGTERM ended mpiexec before their
  # statuses reached it (1 full suite run of 3 under load: no report at all); a report of
  # anything but a signal (a rank that exited after the drain) fails.
  if [ -s "$d.out" ]; then
    grep -qE 'signal (15|9)\b' "$d.out" ||
      fail "plain: the ranks did not die of SIGTERM (the default action) or hydra's SIGKILL: $(cat "$d.out")"
    echo "ok: plain: the ranks died of a signal ($(grep -oE 'signal (15|9)' "$d.out" | head -1))"
  else
    echo "ok: plain: mpiexec ended by the group's SIGTERM before its report"
  fi

  d=$PWD/handler
  termed 4 "$d" "$d.stage" term
  durable_step "$d" 5 4
  # Each SIGTERM the rank got runs its handler once (mpiexec may pass the group's signal on too).
  for r in 0 1 2 3; do
    lines=$(cat "$d/.term.$r" 2>/dev/null || true)
    want='^sigterm code 0 from pid [1-9][0-9]*$'
    [ $((r % 2)) = 0 ] || want='^sigterm sysv$'
    [ -n "$lines" ] && ! grep -qvE "$want" <<< "$lines" ||
      fail "handler: rank $r's own SIGTERM handler did not run (as ${want//[\^\$]/}): [$lines]"
  done
  echo "ok: handler: every rank's own SIGTERM handler ran (ranks 0, 2 with the sender's siginfo; 1, 3 set by sigset and the other System V calls)"
  echo "ok: round $round: SIGTERM right after version 5: drained before the default action (3 ranks) and before the program's own handler (4 ranks)"
done
