# SPDX-License-Identifier: MIT
# What the commit engine records in the trace (SLUICE_TRACE_DIR, read back with sluice-trace):
# per version the set, version and members (COMMIT_BEGIN/COMMIT_MEMBER with their bytes), every
# file-system write of the container with offset and size (COMMIT_FS_WRITE), the metadata
# operations create/rename/fsync (COMMIT_FS_META), the time until durable (COMMIT_DURABLE)
# and the time the program waited (COMMIT_END at fsync and exit).
app=$SLUICE_APPS_DIR/ckpt_commit_steps
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE
d=$PWD/run
mkdir -p "$d"
# The direct path (the node's aggregator copies each member from its staging file, no shuffle);
# the two-phase path has its own test.
export SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_TRACE_DIR=$PWD/trace SLUICE_CB_WRITE=disable
run_dist 3 "$app" write "$d" 2 --fsync \
  || fail "writer job failed"
"$SLUICE_BIN_DIR/sluice-trace" dump trace > dump.txt || fail "sluice-trace dump failed"
grep -q 'COMMIT_BEGIN set=".*ckpt.%r", version=1' dump.txt || fail "no COMMIT_BEGIN for version 1"
echo "ok: COMMIT_BEGIN"
grep -q 'COMMIT_MEMBER member rank=2, bytes=3158074, path=".*/ckpt.2"' dump.txt \
  || fail "member 2 of step 1 not recorded with its bytes"
echo "ok: COMMIT_MEMBER"
grep -q 'COMMIT_FS_META operation="create", path=".*/\.ckpt\.@r\.sluice\.tmp\.[0-9]*"' dump.txt \
  || fail "no create of the temporary file"
grep -q 'COMMIT_FS_META operation="rename", path=".*/ckpt\.@r\.sluice"' dump.txt || fail "no rename"
grep -q 'COMMIT_FS_META operation="fsync", path="'"$d"'"' dump.txt || fail "no fsync of the folder"
echo "ok: COMMIT_FS_META create, rename, folder fsync"
# Rank 2's 3 MiB member (step 1) is written by its node's aggregator in one request (they are up
# to 4 MiB), at a block-aligned offset.
grep -q '^rank [0-9]* .*COMMIT_FS_WRITE.*bytes=3158074,' dump.txt || fail "rank 2's member was not written in one request"
off=$(grep 'COMMIT_FS_WRITE' dump.txt | grep '^rank [0-9]* .*bytes=3158074,' | head -1 | sed 's/.*offset=\([0-9]*\),.*/\1/')
expect_eq "first write of rank 2's member block-aligned" 0 $(( off % 4096 ))
grep -q 'COMMIT_DURABLE set=".*ckpt.%r", version=' dump.txt || fail "no COMMIT_DURABLE"
grep -q 'COMMIT_END set=".*ckpt.%r"' dump.txt || fail "no COMMIT_END for the fsyncs"
grep -q 'COMMIT_END set="(exit: all sets)"' dump.txt || fail "no COMMIT_END for the exit flush"
echo "ok: COMMIT_DURABLE and COMMIT_END"
