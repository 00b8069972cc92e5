# SPDX-License-Identifier: MIT
# A process that leaves through _exit (dash ends every shell that way) after its commit failed
# exits non-zero with the failure line, as exit() would, and a program that closed its own
# stderr (head) still gets the line: the checkpoint folder is a 2 MiB
# tmpfs and the member 3 MB (the stage folder is elsewhere, so staging succeeds and the
# commit fails).
export SLUICE_STAGE_DIR="$SLUICE_TEST_STAGE"
mkdir -p full
mount -t tmpfs -o size=2M tmpfs full || fail "cannot mount a tmpfs (needs root)"
trap 'umount "$SLUICE_TEST_SCRATCH/full" 2>/dev/null' EXIT
export SLUICE_CAPTURE="$PWD/full/ckpt.%r"
rc=0
timeout 60 env LD_PRELOAD="$SLUICE_LIB" dash -c 'head -c 3000000 /dev/zero > full/ckpt.0' 2>err.txt || rc=$?
expect_contains "the failure is printed" "No space left on device" "$(cat err.txt)"
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "dash exited $rc after a failed commit: $(cat err.txt)"
echo "ok: dash exited $rc after the failed commit"
rc=0
timeout 60 env LD_PRELOAD="$SLUICE_LIB" dash -c 'printf small > full/ckpt.1' 2>err.txt || rc=$?
expect_eq "a commit that fits still exits 0" 0 "$rc"

# head closes its stderr itself before the exit commit (gnulib's close_stdout): the failure
# line still arrives, through sluice's own copy of fd 2.
rc=0
timeout 60 env LD_PRELOAD="$SLUICE_LIB" sh -c 'exec head -c 3000000 /dev/zero > full/ckpt.2' 2>err.txt || rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "head exited $rc after a failed commit"
expect_contains "head's failure line arrives though head closed fd 2" "No space left on device" "$(cat err.txt)"
