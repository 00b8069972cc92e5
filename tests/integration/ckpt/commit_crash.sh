# SPDX-License-Identifier: MIT
# A rank killed with SIGKILL in the middle of a commit: the previous version stays complete
# and verified, the new version never appears half-written, and `sluice-ckpt recover` later
# commits what the dead job had staged.
#
# Three ranks write three steps; steps 1 and 2 are fsynced (each is durable before the next
# begins). At step 3, rank 1 (48 MiB member) closes its file and, as soon as the commit of
# step 3 is under way (its temporary container file appears), kills itself; hydra then ends
# the job.
app=$SLUICE_APPS_DIR/ckpt_commit_steps
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE
d=$PWD/run
mkdir -p "$d"
export SLUICE_CAPTURE="$d/ckpt.%r"

rc_of run_dist 3 "$app" write "$d" 3 --fsync --big 1 \
  --kill-at 3 > job.out 2>&1
[ "$rc" -ne 0 ] || fail "the job should have died with its rank"
[ "$rc" -ne 124 ] || fail "the job hung after the rank died: $(tail -5 job.out)"
echo "ok: job ended with status $rc after the kill"

tmp=$(ls -A "$d" | grep '^\.ckpt\.@r\.sluice\.tmp\.' || true)
[ -n "$tmp" ] || fail "no commit was in flight at the kill"
echo "ok: the kill interrupted a commit (its temporary file $tmp is left)"

"$ckpt" verify "$d/ckpt.@r.sluice" > verify.out || fail "container damaged: $(cat verify.out)"
echo "ok: the container verifies"
# Step 2 exactly, for every rank, read through the per-rank names.
run_sluice "$app" verify "$d" 2 3 --big 1 || fail "step 2 not intact"
echo "ok: every member holds step 2"

"$ckpt" recover --stage "$SLUICE_STAGE_DIR" > recover.out 2>&1 || fail "recover: $(cat recover.out)"
expect_contains "recover report" "recovered version" "$(cat recover.out)"
"$ckpt" verify "$d/ckpt.@r.sluice" > /dev/null || fail "recovered container does not verify"
run_sluice "$app" verify "$d" 3 3 --big 1 || fail "step 3 not recovered"
echo "ok: recover committed step 3"
expect_eq "stage folder empty after recover" "" "$(ls -A "$SLUICE_STAGE_DIR")"
expect_eq "no temporary file left" "" "$(ls -A "$d" | grep 'sluice\.tmp' || true)"
