# SPDX-License-Identifier: MIT
# The end of a job never loses a node-local version (docs/REDUNDANCY.md, "Scavenge"), on one
# host, SLUICE_DRAIN_EVERY=3 SLUICE_KEEP=2, mpi_ckpt_levels writing 5 steps (versions 3 drained,
# 4 and 5 node-local):
#   ends: 4 ranks, released before they start and computing nothing between steps, so the job
#     ends right after its last checkpoint: the exit drains it; the container holds step 5 and
#     nothing is left node-local;
#   killed: 3 ranks, 100 ms between steps, SIGKILLed once every rank recorded version 5 (an
#     allocation's end after its grace time; a SIGTERM drains first: levels_sigterm.sh): the
#     container holds version 3. With rank 1's record of version 5 moved
#     away (its node gone), `sluice-ckpt scavenge` says in one line which rank and member
#     version 5 lacks and makes version 4 durable (step 4); with it back, version 5 (`ls` says
#     so, its bytes are step 5's: extracted and compared here); run again, it finds nothing to
#     do and the container is untouched.
# Bad set keys and options are refused with one line. Members are compared by `sluice-ckpt extract` against the program's byte formula.
# SLUICE_TEST_ROUNDS (default 2) repeats the whole.
app=$SLUICE_APPS_DIR/mpi_ckpt_levels
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
rounds=${SLUICE_TEST_ROUNDS:-2}

records() { ls "$2" 2>/dev/null | grep -c -- "-$(printf %020d "$1")-[0-9]*\.rec$" || true; }

# same_step DIR STEP N: the container's N members hold step STEP's bytes (mpi_ckpt_levels.c).
same_step() {
  rm -rf "$1.x"
  "$ckpt" extract -q -o "$1.x" "$1/ckpt.@r.sluice" > /dev/null || fail "extract of $1 failed"
  /usr/bin/python3 "$SOURCE_DIR/tests/integration/ckpt/levels_step_bytes.py" "$1.x" "$2" "$3" || fail "$1: the container does not hold step $2"
}

# killed N DIR STAGE SIGNAL: the writer, stopped by SIGNAL once every rank recorded version 5.
killed() {
  local n=$1 d=$2 stage=$3 sig=$4 t=0
  rm -rf "$d" "$stage"
  mkdir -p "$d"
  setsid env SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_STAGE_DIR="$stage" SLUICE_DRAIN_EVERY=3 SLUICE_KEEP=2 \
    timeout 60 "$MPIEXEC" -n "$n" env LD_PRELOAD="$SLUICE_LIB" "$app" write "$d" 5 100 > "$d.out" 2>&1 &
  local job=$!
  until [ "$(records 5 "$stage")" = "$n" ]; do
    t=$((t + 1))
    [ $t -lt 1200 ] || { kill -9 -- -$job 2>/dev/null; fail "version 5 never recorded: $(cat "$d.out")"; }
    sleep 0.05
  done
  kill -"$sig" -- -$job
  wait $job 2>/dev/null || true
  for t in $(seq 200); do kill -0 -- -$job 2>/dev/null || break; sleep 0.05; done
  ranks_gone "$app write $d "
}

# Bad input: one line, exit 2, nothing touched.
for bad in "run/ckpt.%r" "$PWD/ckpt.0" "--node --finish $PWD/ckpt.%r" "--wait soon $PWD/ckpt.%r"; do
  rc=0
  out=$("$ckpt" scavenge $bad 2>&1) || rc=$?
  expect_eq "scavenge $bad: usage error" 2 "$rc"
  expect_eq "scavenge $bad: one line (and the hint)" 2 "$(printf '%s\n' "$out" | wc -l)"
  echo "refused: $(printf '%s\n' "$out" | head -1)"
done

for round in $(seq "$rounds"); do
  d=$PWD/ends stage=$PWD/stage-ends
  rm -rf "$d" "$stage"; mkdir -p "$d"; touch "$d/.release"
  SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_STAGE_DIR="$stage" SLUICE_DRAIN_EVERY=3 SLUICE_KEEP=2 \
    RUN_TIMEOUT=60 run_dist 4 "$app" write "$d" 5 || fail "ends: the job failed"
  expect_eq "ends: no version left node-local" "" "$("$ckpt" ls --stage "$stage" "$d" | grep 'level staged' || true)"
  expect_eq "ends: nothing left node-local" "" "$(ls -A "$stage" 2>/dev/null)"
  same_step "$d" 5 4

  d=$PWD/killed stage=$PWD/stage-killed key="$PWD/killed/ckpt.%r"
  sig=KILL
  killed 3 "$d" "$stage" $sig
  "$ckpt" ls --stage "$stage" "$d" > ls.txt
  expect_contains "killed (SIG$sig): version 3 durable" "version 3  level durable" "$(cat ls.txt)"
  expect_contains "killed (SIG$sig): version 5 left node-local" "version 5  level staged  node-local: records of 3 of 3 ranks here (complete)" "$(cat ls.txt)"
  # Rank 1's part of version 5 gone (as with its node): named, and version 4 made durable.
  rec=$(ls "$stage"/lv-*-$(printf %020d 5)-1.rec)
  mv "$rec" aside.rec
  "$ckpt" scavenge --stage "$stage" "$key" 2> scav1.err || fail "lost: scavenge failed: $(cat scav1.err)"
  cat scav1.err
  expect_contains "lost: the missing rank named" "version 5 is incomplete over the surviving nodes: no record of rank 1 ($d/ckpt.1) of its 3 ranks" "$(cat scav1.err)"
  expect_contains "lost: version 4 made durable" "version 4 is durable" "$(cat scav1.err)"
  same_step "$d" 4 3
  # Back again: version 5 is complete and newer than the container's 4.
  mv aside.rec "$rec"
  "$ckpt" scavenge --stage "$stage" "$key" 2> scav.err || fail "killed: scavenge failed: $(cat scav.err)"
  cat scav.err
  expect_contains "killed: scavenge says what it did" "version 5 is durable in $d/ckpt.@r.sluice: 3 members, 3 from node-local storage of 1 node" "$(cat scav.err)"
  expect_contains "killed: ls shows version 5 durable" "version 5  level durable" "$("$ckpt" ls --stage "$stage" "$d")"
  same_step "$d" 5 3
  before=$(stat -c '%i %Y %s' "$d/ckpt.@r.sluice")
  "$ckpt" scavenge --stage "$stage" "$key" 2> scav2.err || fail "killed: second scavenge failed: $(cat scav2.err)"
  expect_contains "killed: run twice, nothing to do" "nothing to scavenge" "$(cat scav2.err)"
  expect_eq "killed: the container untouched by the second run" "$before" "$(stat -c '%i %Y %s' "$d/ckpt.@r.sluice")"
  expect_eq "killed: no scavenge folder left" "" "$(ls -A "$d" | grep scavenge || true)"
  echo "ok: round $round: ended right after the last checkpoint: drained at exit; stopped by SIG$sig after version 5: rank 1's part lost: named, version 4 scavenged; whole again: version 5 scavenged, a second run does nothing"
done
