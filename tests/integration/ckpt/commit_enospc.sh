# SPDX-License-Identifier: MIT
# A full disk during commit (a 2 MiB tmpfs as the checkpoint folder; the stage folder is
# elsewhere, so staging succeeds and the commit is what fails):
#  - at exit: every rank exits non-zero with one message line, the committed container of the
#    previous job is untouched and still verifies, no temporary file is left, the staged data
#    is kept, and `sluice-ckpt recover` commits it once there is room;
#  - at fsync: the program's fsync() fails with ENOSPC.
app=$SLUICE_APPS_DIR/ckpt_commit_steps
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE
mkdir -p full full2
mount -t tmpfs -o size=2M tmpfs full || fail "cannot mount a tmpfs (needs root)"
trap 'umount "$SLUICE_TEST_SCRATCH/full" 2>/dev/null; umount "$SLUICE_TEST_SCRATCH/full2" 2>/dev/null' EXIT
mount -t tmpfs -o size=2M tmpfs full2 || fail "cannot mount a tmpfs (needs root)"

# Version 1 fits: 2 ranks, 0 and 1 byte.
export SLUICE_CAPTURE="$PWD/full/ckpt.%r"
run_dist 2 "$app" write "$PWD/full" 1 \
  || fail "first job failed"

# Three ranks, rank 2 writes 3 MiB: no room.
rc_of run_dist 3 "$app" write "$PWD/full" 2 > job.out 2>&1
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "job should have exited non-zero (got $rc): $(cat job.out)"
echo "ok: job exit status $rc"
expect_eq "one message line per rank" 3 "$(grep -c '^sluice\[[0-9]\]: checkpoint commit failed' job.out)"
expect_contains "message names the error" "No space left on device" "$(cat job.out)"
expect_contains "message points to recover" "sluice-ckpt recover" "$(cat job.out)"
# Versions holding only the small members of ranks 0 and 1 may have been committed; what
# must hold is that the container on disk is complete and never holds rank 2's member.
"$ckpt" verify full/ckpt.@r.sluice > /dev/null || fail "container damaged"
echo "ok: container verifies"
expect_eq "no temporary file left" "ckpt.@r.sluice" "$(ls -A full)"
expect_eq "rank 2 never committed" 0 "$("$ckpt" ls full | grep -c 'full/ckpt\.2')"
[ -n "$(ls "$SLUICE_STAGE_DIR"/*.data)" ] || fail "staged data was not kept"

# Room again: recover commits step 2 of all three ranks.
mount -o remount,size=64M full
"$ckpt" recover --stage "$SLUICE_STAGE_DIR" > recover.out 2>&1 || fail "recover: $(cat recover.out)"
run_sluice "$app" verify "$PWD/full" 2 3 || fail "recovered data wrong"
echo "ok: recover committed the kept data"

# fsync() reports the failure to the program itself.
export SLUICE_CAPTURE="$PWD/full2/ckpt.%r"
rc_of run_dist 3 "$app" write "$PWD/full2" 1 --fsync \
  > fsync.out 2>&1
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "fsync job should have failed (got $rc): $(cat fsync.out)"
expect_contains "fsync got ENOSPC" "fsync $PWD/full2/ckpt.2: No space left on device" "$(cat fsync.out)"
expect_eq "no temporary file left" "" "$(ls -A full2 | grep sluice.tmp || true)"
