# SPDX-License-Identifier: MIT
# A full stage folder (an 8 MB tmpfs as SLUICE_STAGE_DIR, members of 3 MB): the call that could
# not stage its bytes fails as on a full file system (write, pwrite, writev, fprintf, fwrite,
# fflush, the flush inside fclose; dd and cp from coreutils), the program sees ENOSPC, and that
# member is never committed: the previous complete version stays the one a restart reads, with
# one line saying so, and nothing of the failed version is left staged.
app=$SLUICE_APPS_DIR/ckpt_fill
M=3000000
export SLUICE_CAPTURE="$PWD/ckpt.%r"
"$app" write ref1 $M 1
"$app" write ref2 $M 2

# Version 1 of members 0-2, staged in the ordinary (roomy) stage folder: complete.
SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE run_dist 3 \
  "$app" write "$PWD/ckpt.%r" $M 1 || fail "version 1 failed"

mkdir full
mount -t tmpfs -o size=8M,mode=0700 tmpfs full || fail "cannot mount a tmpfs (needs root)"
trap 'umount "$SLUICE_TEST_SCRATCH/full" 2>/dev/null' EXIT
export SLUICE_STAGE_DIR=$PWD/full
fallocate -l 6M full/filler # 2 MiB left: a 3 MB member never fits

# expect_v1 WHAT N: member N still holds version 1, and nothing is left staged.
expect_v1() {
  run_sluice cmp ref1 "ckpt.$2" || fail "$1: ckpt.$2 is not version 1 any more"
  expect_eq "$1: nothing left staged" "" "$(cd full && ls | grep -v '^filler$' || true)"
}
# expect_enospc WHAT RC ERRFILE: the program failed with ENOSPC, and sluice said why in a line.
expect_enospc() {
  expect_eq "$1: exit status" 1 "$2"
  expect_contains "$1: the program saw ENOSPC" "No space left on device" "$(cat "$3")"
  expect_eq "$1: one line from sluice" 1 "$(grep -c 'not committed: staging it in .* failed: No space left on device' "$3")"
}

for how in write pwrite writev fprintf fwrite fclose; do
  rc_of timeout 60 env LD_PRELOAD="$SLUICE_LIB" "$app" $how "$PWD/ckpt.0" $M 2 2> err.$how
  expect_contains "$how: the failing call is named" "ckpt_fill: $how" "$(cat err.$how)$([ $how = fwrite ] && echo 'ckpt_fill: fwrite')"
  expect_enospc "$how" $rc err.$how
  expect_v1 "$how" 0
done

# coreutils: dd (write(2)) and cp (copy_file_range or read/write).
set +e
timeout 60 env LD_PRELOAD="$SLUICE_LIB" dd if=ref2 of=ckpt.1 bs=64k 2> err.dd
rc_dd=$?
timeout 60 env LD_PRELOAD="$SLUICE_LIB" cp ref2 ckpt.2 2> err.cp
rc_cp=$?
set -e
expect_enospc dd $rc_dd err.dd
expect_v1 dd 1
expect_enospc cp $rc_cp err.cp
expect_v1 cp 2

# Three ranks at once with 7 MB free: 9 MB cannot all be staged, so some rank fails; every
# rank's member is either its complete new version (the rank exited 0) or version 1.
rm full/filler
fallocate -l 1M full/filler
set +e
run_dist 3 sh -c \
  'touch ready.$PMI_RANK; while [ "$(ls ready.* | wc -l)" -lt 3 ]; do sleep 0.01; done
   "$0" write "$1" "$2" 2; echo "rank $PMI_RANK status $?" > status.$PMI_RANK' \
  "$app" "$PWD/ckpt.%r" $M > job.out 2>&1
set -e
failed=0
for r in 0 1 2; do
  st=$(cat status.$r)
  case $st in
    *"status 0") run_sluice cmp ref2 ckpt.$r || fail "rank $r exited 0 but ckpt.$r is not version 2" ;;
    *"status 1") run_sluice cmp ref1 ckpt.$r || fail "rank $r failed but ckpt.$r is not version 1"
      failed=$((failed + 1)) ;;
    *) fail "rank $r: $st" ;;
  esac
done
[ "$failed" -ge 1 ] || fail "no rank ran out of room: $(cat job.out)"
expect_eq "one sluice line per failed rank" "$failed" "$(grep -c 'not committed: staging it' job.out)"
expect_eq "3 ranks: nothing left staged" "" "$(cd full && ls | grep -v '^filler$' || true)"
echo "ok: 3 ranks, $failed ran out of room, each member complete (new or previous version)"
