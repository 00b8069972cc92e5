# SPDX-License-Identifier: MIT
# Holes stay holes (docs/FORMAT.md): a member with a hole is committed as its data runs only
# (SEEK_DATA/SEEK_HOLE of its staging file), the container takes little room on disk, and a
# reader gets the member byte for byte with zeros in the holes. One process (3 bytes behind a
# 200 MB hole, written by dd), and 3 ranks on the direct and on the two-phase path (data at the
# start, a 64 MB hole, 3 bytes at the end).
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE

# on_disk FILE: bytes the file takes on disk.
on_disk() { echo $(( $(stat -c %b "$1") * $(stat -c %B "$1") )); }

mkdir one
printf abc | dd of=one/ref bs=1 seek=200M status=none
(cd one && SLUICE_CAPTURE="$PWD/ckpt.%r" run_sluice sh -c 'printf abc | dd of=ckpt.0 bs=1 seek=200M status=none')
"$ckpt" verify one/ckpt.@r.sluice > /dev/null || fail "container does not verify"
(cd one && SLUICE_CAPTURE="$PWD/ckpt.%r" run_sluice cmp ref ckpt.0) || fail "the member differs"
expect_eq "size seen by stat" 209715203 "$(cd one && SLUICE_CAPTURE="$PWD/ckpt.%r" run_sluice stat -c %s ckpt.0)"
used=$(on_disk one/ckpt.@r.sluice)
[ "$used" -lt $((1 << 20)) ] || fail "a 3-byte member behind a 200 MB hole takes $used bytes on disk"
echo "ok: 1 process: the container takes $used bytes on disk for $(stat -c %s one/ckpt.@r.sluice)"
expect_contains "one extent, of 3 bytes" "1 extents" "$("$ckpt" info one/ckpt.@r.sluice)"

# Rank r writes 5000 + r bytes at 0, then 3 bytes at 64 MiB + r (pwrite past the end).
for r in 0 1 2; do
  head -c $((5000 + r)) /dev/urandom > part.$r
  cp part.$r ref.$r
  printf 'r%d' $r | dd of=ref.$r bs=1 seek=$((64 * 1048576 + r)) conv=notrunc status=none
done
for mode in disable enable; do
  d=$PWD/three-$mode
  mkdir "$d"
  SLUICE_CB_WRITE=$mode SLUICE_CB_NODES=2 SLUICE_CAPTURE="$d/ckpt.%r" timeout 120 "$MPIEXEC" -n 3 \
    env LD_PRELOAD="$SLUICE_LIB" sh -c 'cp ref.$PMI_RANK "$0/ckpt.$PMI_RANK"' "$d" || fail "$mode: job failed"
  "$ckpt" verify "$d/ckpt.@r.sluice" > /dev/null || fail "$mode: container does not verify"
  for r in 0 1 2; do
    SLUICE_CAPTURE="$d/ckpt.%r" run_sluice cmp ref.$r "$d/ckpt.$r" || fail "$mode: member $r differs"
  done
  used=$(on_disk "$d/ckpt.@r.sluice")
  [ "$used" -lt $((4 << 20)) ] || fail "$mode: three sparse members of 64 MiB take $used bytes on disk"
  echo "ok: 3 ranks, two-phase $mode: members equal, the container takes $used bytes on disk for $(stat -c %s "$d/ckpt.@r.sluice")"
done
