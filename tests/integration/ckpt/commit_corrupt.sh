# SPDX-License-Identifier: MIT
# A corrupt or truncated container seen through the per-rank names: a read of the damaged
# member fails with EIO and one stderr line naming the container and the member, the other
# members still read correctly (checked with unmodified cmp and cat); a truncated container
# fails every read with EIO and a line naming it.
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE
d=$PWD/run
mkdir -p "$d"
export SLUICE_CAPTURE="$d/ckpt.%r"
run_dist 4 "$SLUICE_APPS_DIR/ckpt_commit_steps" \
  write "$d" 1 || fail "writer job failed"
c=$d/ckpt.@r.sluice
"$ckpt" extract -o "$PWD/ref" "$c" > /dev/null
[ -f ref/ckpt.2 ] || ref_layout=$(find ref -type f)
[ -f ref/ckpt.2 ] || fail "extract layout unexpected: $ref_layout"

# Flip one byte in the middle of rank 2's data (the 3 MiB member: in its third block; where it
# starts is the layout's business, so it is read from the index).
start=$("$ckpt" info -m "$c" | awk '/^member/ { m = ($NF ~ /ckpt\.2$/) } m && /extent/ { print $NF; exit }')
[ -n "$start" ] || fail "sluice-ckpt info -m does not list rank 2's extent"
off=$(( start + 8192 + 1000 ))
flip_byte "$c" $off

rc_of run_sluice cmp "$d/ckpt.2" ref/ckpt.2 > cmp2.out 2> cmp2.err
[ "$rc" -ne 0 ] || fail "reading the corrupt member succeeded"
expect_contains "program sees EIO" "Input/output error" "$(cat cmp2.err)"
expect_eq "one sluice line" 1 "$(grep -c '^sluice[[:punct:]]' cmp2.err)"
line=$(grep '^sluice[[:punct:]]' cmp2.err)
expect_contains "line names the container" "$c" "$line"
expect_contains "line names the member" "$d/ckpt.2" "$line"
for r in 0 1 3; do
  run_sluice cmp "$d/ckpt.$r" "ref/ckpt.$r" || fail "member $r no longer reads"
done
expect_eq "cat of an intact member" "$(md5sum < ref/ckpt.3)" \
  "$(run_sluice cat "$d/ckpt.3" | md5sum)"
echo "ok: the other members still read"

# Truncated: the footer is gone, nothing can be trusted.
truncate -s -100 "$c"
rc_of run_sluice cat "$d/ckpt.1" > /dev/null 2> cat1.err
[ "$rc" -ne 0 ] || fail "reading from a truncated container succeeded"
expect_contains "program sees EIO" "Input/output error" "$(cat cat1.err)"
expect_contains "line names the container" "$c" "$(grep '^sluice[[:punct:]]' cat1.err)"
expect_contains "line names the member" "$d/ckpt.1" "$(grep '^sluice[[:punct:]]' cat1.err)"
