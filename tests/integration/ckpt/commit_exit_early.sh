# SPDX-License-Identifier: MIT
# A rank that calls exit(1) without MPI_Finalize (how most MPI programs fail) while the others
# wait in MPI_Barrier: with SLUICE_CAPTURE set the job must end as it does without sluice
# (the launcher kills the others), never hang in an exit collective. With a pattern that
# matches nothing sluice adds nothing (no line); with members, no data is lost: whatever the early exit
# did not commit stays staged, and `sluice-ckpt recover` commits every rank's member.
app=$SLUICE_APPS_DIR/mpi_exit_early
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE

for n in 2 3; do
  mkdir -p "plain$n" "none$n" "cap$n"
  set +e
  timeout 60 "$MPIEXEC" -n "$n" "$app" "$PWD/plain$n" > plain.out 2>&1
  plain_rc=$?
  SLUICE_CAPTURE="$PWD/nothing/ckpt.%r" RUN_TIMEOUT=60 run_dist "$n" \
    "$app" "$PWD/none$n" > none.out 2>&1
  none_rc=$?
  SLUICE_CAPTURE="$PWD/cap$n/ckpt.%r" RUN_TIMEOUT=60 run_dist "$n" \
    "$app" "$PWD/cap$n" > cap.out 2>&1
  cap_rc=$?
  set -e
  [ "$none_rc" != 124 ] || fail "$n ranks, pattern matching nothing: the job hung ($(tail -3 none.out))"
  [ "$cap_rc" != 124 ] || fail "$n ranks, members captured: the job hung ($(tail -3 cap.out))"
  [ "$plain_rc" != 0 ] || fail "$n ranks: the job without sluice should fail"
  # hydra's status is that of the first process it sees end (1, or 9 for one it killed)
  [ "$none_rc" != 0 ] || fail "$n ranks, nothing captured: the job should fail as without sluice"
  [ "$cap_rc" != 0 ] || fail "$n ranks, members captured: the job should fail as without sluice"
  echo "ok: $n ranks: the job ends with status $none_rc / $cap_rc (without sluice: $plain_rc)"
  expect_eq "$n ranks, nothing captured: no sluice line" "" "$(grep '^sluice' none.out || true)"
  # rank 1's member is committed, or staged with one line saying so
  if ! grep -q "cap$n/ckpt\.1\$" <<<"$("$ckpt" ls "cap$n" 2>/dev/null)"; then
    expect_contains "$n ranks: the early exit says what it left staged" "sluice-ckpt recover" "$(cat cap.out)"
  fi
  "$ckpt" recover --stage "$SLUICE_STAGE_DIR" > recover.out 2>&1 || fail "recover: $(cat recover.out)"
  for r in $(seq 0 $((n - 1))); do
    expect_eq "$n ranks: member $r kept (committed or recovered)" "rank $r" \
      "$(SLUICE_CAPTURE="$PWD/cap$n/ckpt.%r" run_sluice cat "cap$n/ckpt.$r")"
  done
  expect_eq "$n ranks: stage folder empty after recover" "" "$(ls -A "$SLUICE_STAGE_DIR")"
done

# A home that hangs (rank 0, the set's home, stops itself with SIGSTOP at once): rank 1's exit
# work waits for its answer at most 10 s, then leaves with the line; the
# launcher ends the job; nothing is lost: after recover rank 1's member reads back.
# The set's home is FNV-1a(key) % ranks (commit_home_of): pick a folder whose home is rank 0.
stop=$(python3 -c '
import sys
for i in range(1000):
    h = 14695981039346656037
    for b in ("%s/stop%d/ckpt.%%r" % (sys.argv[1], i)).encode():
        h = ((h ^ b) * 1099511628211) % 2**64
    if h % 2 == 0:
        print("stop%d" % i)
        break
' "$PWD")
mkdir -p "$stop"
start=$(date +%s)
SLUICE_CAPTURE="$PWD/$stop/ckpt.%r" RUN_TIMEOUT=60 rc_of run_dist 2 \
  "$app" "$PWD/$stop" stop > stop.out 2>&1
took=$(( $(date +%s) - start ))
[ "$rc" != 124 ] || fail "a stopped peer: the job hung ($(tail -3 stop.out))"
[ "$took" -lt 40 ] || fail "a stopped peer: the job took $took s"
echo "ok: a stopped peer: the job ended in $took s with status $rc"
expect_contains "a stopped home: the early exit says what it left staged" \
  "leaving without MPI_Finalize: checkpoint members not committed" "$(cat stop.out)"
[ ! -e "$stop/ckpt.@r.sluice" ] || fail "a stopped home committed something"

"$ckpt" recover --stage "$SLUICE_STAGE_DIR" > recover.out 2>&1 || fail "recover: $(cat recover.out)"
expect_eq "a stopped peer: member 1 kept" "rank 1" \
  "$(SLUICE_CAPTURE="$PWD/$stop/ckpt.%r" run_sluice cat "$stop/ckpt.1")"
