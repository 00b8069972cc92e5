# SPDX-License-Identifier: MIT
# Unlink of captured names, seen by the commit engine: removing a committed member drops it
# from the container's next version (the other members stay readable), removing the last one
# removes the container, and a member written and removed before its set is committed never
# reaches the file system. Unmodified bash, rm, cat and ls under mpiexec.
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE
d=$PWD/run
mkdir -p "$d"
export SLUICE_CAPTURE="$d/ckpt.%r"
run_dist 3 bash -c "echo hello\$PMI_RANK > $d/ckpt.\$PMI_RANK" \
  || fail "writer job failed"
expect_eq "members committed" 3 "$("$ckpt" ls "$d" | grep -c "$d/ckpt\.[0-9]")"

run_sluice rm "$d/ckpt.1" || fail "rm of a committed member failed"
expect_eq "member dropped from the container" "0 2" \
  "$("$ckpt" ls "$d" | grep -o "$d/ckpt\.[0-9]" | sed 's/.*\.//' | tr '\n' ' ' | sed 's/ $//')"
"$ckpt" verify "$d/ckpt.@r.sluice" > /dev/null || fail "container does not verify after unlink"
rc_of run_sluice cat "$d/ckpt.1" > /dev/null 2> cat.err
[ "$rc" -ne 0 ] || fail "removed member still readable"
expect_contains "removed member is gone" "No such file or directory" "$(cat cat.err)"
expect_eq "other member reads" "hello2" "$(run_sluice cat "$d/ckpt.2")"

run_sluice rm "$d/ckpt.0" "$d/ckpt.2" || fail "rm failed"
expect_eq "container removed with its last member" "" "$(ls -A "$d")"
rc_of run_sluice rm "$d/ckpt.5" 2> rm.err
[ "$rc" -ne 0 ] || fail "rm of a member that never existed succeeded"
expect_contains "ENOENT as without sluice" "No such file or directory" "$(cat rm.err)"

# Written and removed at once on every rank: whether or not a commit slipped in between, the
# end state is no member on disk and nothing staged.
d2=$PWD/run2
mkdir -p "$d2"
export SLUICE_CAPTURE="$d2/ckpt.%r"
# One process per rank writes and removes (a second process of the same rank, such as a shell's
# rm child, cannot reach MPI while its parent holds the rank: docs/COMMIT.md, "Limits").
run_dist 2 /usr/bin/python3 -c \
  "import os; p='$d2/ckpt.'+os.environ['PMI_RANK']; f=open(p,'w'); f.write('x'); f.close(); os.unlink(p)" \
  || fail "write+rm job failed"
expect_eq "nothing reached the file system" "" "$(ls -A "$d2")"
expect_eq "nothing left staged" "" "$(ls -A "$SLUICE_STAGE_DIR")"
