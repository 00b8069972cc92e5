# SPDX-License-Identifier: MIT
# A rank that opens its member with the others but closes it long after them (a loaded node)
# does not split the step into two versions (docs/COMMIT.md, "stale"): rank 1 of 2 holds every
# member of its step open 2.6 s, past the 2 s after which a set that cannot complete is
# committed with what it has, and each set still gets exactly one version holding both ranks.
# Before the rule knew of open members, each set's version 1 held rank 0 alone.
app=$SLUICE_APPS_DIR/mpi_ckpt_multifile
d=$PWD/data
mkdir -p "$d"
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE SLUICE_TRACE_DIR=$PWD/trace
export SLUICE_CAPTURE="$d/s*/ckpt.%r:$d/state.%r:$d/log.%r"
run_dist 2 "$app" write "$d" 1 --stagger 2600 >write.out || fail "the writer job failed"
"$SLUICE_BIN_DIR/sluice-ckpt" ls -r "$d" >ls.txt || fail "sluice-ckpt ls failed: $(cat ls.txt)"
for set in s1/ckpt state log; do
  expect_eq "$set.%r: one version" 1 "$(grep -F "set $d/$set.%r " ls.txt | sed 's/.* version \([0-9]*\) .*/\1/')"
  expect_eq "$set.%r: both members" 2 "$(grep -F "set $d/$set.%r " ls.txt | sed 's/.* members \([0-9]*\) .*/\1/')"
done
"$SLUICE_BIN_DIR/sluice-trace" dump trace >dump.txt || fail "sluice-trace dump failed"
expect_eq "one commit per set, each of both ranks" "3 3" \
  "$(grep -c COMMIT_BEGIN dump.txt) $(grep COMMIT_BEGIN dump.txt | grep -c 'members=2\b')"
run_dist 3 "$app" verify "$d" 1 2 || fail "a restart on 3 ranks read other bytes than were written"
echo "commit_late_rank: all passed"
