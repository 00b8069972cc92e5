# SPDX-License-Identifier: MIT
# Two jobs commit one set in one folder at the same time: two `mpiexec -n 2` jobs write members
# 0-1 and 2-3 of the same set, 20 times. Each job's homes take the folder lock and use their
# own temporary names, so every round both jobs succeed and the container holds all four
# members, byte for byte (never a corrupt container, never a member silently gone).
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE
mkdir -p ref
for i in 0 1 2 3; do
  head -c $(( (i + 1) * 50000 + i )) /dev/urandom > "ref/ckpt.$i"
done
job() { # job DIR OFFSET: ranks write members OFFSET and OFFSET+1
  SLUICE_CAPTURE="$1/ckpt.%r" RUN_TIMEOUT=60 run_dist 2 \
    sh -c 'r=$((PMI_RANK + '"$2"')); exec cp "ref/ckpt.$r" "$0/ckpt.$r"' "$1"
}
for round in $(seq 1 20); do
  d=$PWD/round$round
  mkdir -p "$d"
  job "$d" 0 > a.out 2>&1 &
  a=$!
  job "$d" 2 > b.out 2>&1 &
  b=$!
  wait "$a" || fail "round $round: job 0-1 failed: $(tail -3 a.out)"
  wait "$b" || fail "round $round: job 2-3 failed: $(tail -3 b.out)"
  "$ckpt" verify "$d/ckpt.@r.sluice" > verify.out 2>&1 || fail "round $round: corrupt container: $(cat verify.out)"
  expect_eq "round $round: both jobs' members merged" 4 "$("$ckpt" ls "$d" | grep -c "$d/ckpt\.[0-3]$")"
  for i in 0 1 2 3; do
    SLUICE_CAPTURE="$d/ckpt.%r" run_sluice cmp "$d/ckpt.$i" "ref/ckpt.$i" \
      || fail "round $round: member $i differs"
  done
  expect_eq "round $round: no temporary file left" "" "$(ls -A "$d" | grep 'sluice\.tmp' || true)"
  expect_eq "round $round: nothing left staged" "" "$(ls -A "$SLUICE_STAGE_DIR")"
done
