# SPDX-License-Identifier: MIT
# Shared rounds (docs/TWOPHASE.md): the writers on an aggregator's node copy their pieces of each
# round into a round buffer they share with it, a file in the stage folder, instead of sending
# MPI messages. Counted from outside with strace on 4 ranks writing the blocks of a 4 MiB global
# array (rows of 512 bytes interleaving in every stripe): the aggregator creates one round file
# (m-<host>-<pid>-tp<tag>.round), reserves its space with fallocate, the three other ranks
# open it, and it is removed once the version is written; the restart on 3 ranks reads the
# exact blocks. With SLUICE_CB_SHARED=off no round file exists and the container holds the
# same array. In a stage folder with room for the members but not for the round buffers (a
# small tmpfs) the reservation fails and the pieces travel as messages: the same array again,
# nothing left in the folder; with room for one slot, that one is shared and the other not. The contiguous two-phase path (whole members, SLUICE_CB_WRITE=
# enable) shares its rounds too.
app=$SLUICE_APPS_DIR/mpi_ckpt_array
sized=$SLUICE_APPS_DIR/ckpt_sized
export SLUICE_STRIPING_UNIT=256K SLUICE_CB_BUFFER_SIZE=1M
command -v strace >/dev/null || fail "strace not found (apt-get install strace)"

# write DIR TAG: a 4-rank write of the array into DIR under strace (TAG.strace), the env given.
write() {
  mkdir -p "$1"
  SLUICE_CAPTURE="$1/ckpt.%r" SLUICE_LAYOUT="$1/ckpt.%r:header=64,dtype=f8,shape=64x64x128" \
    timeout 120 strace -ff -qq -e signal=none -e trace=openat,unlink,fallocate -o "$2.st" \
    "$MPIEXEC" -n 4 env LD_PRELOAD="$SLUICE_LIB" "$app" write "$1" 64 64 128 64 >"$2.out" 2>"$2.err" ||
    fail "$2: writer job failed: $(tail -3 "$2.err")"
}
# restart DIR TAG: 3 ranks read their blocks of another grid; the program checks every value.
restart() {
  SLUICE_CAPTURE="$1/ckpt.%r" RUN_TIMEOUT=60 run_dist 3 "$app" read "$1" 64 64 128 64 >"$2.read" 2>&1 ||
    fail "$2: a restart on 3 ranks read wrong blocks: $(tail -3 "$2.read")"
  "$SLUICE_BIN_DIR/sluice-ckpt" verify "$1/ckpt.@r.sluice" >/dev/null || fail "$2: the container does not verify"
}
# rounds TAG WHAT: round-file calls of a kind in TAG's strace logs (one per thread: TAG.st.TID);
# "openers" counts the threads (one progress thread per writer) that opened one.
rounds() {
  case $2 in
    created) cat "$1".st.* | grep -c 'openat(.*\.round", O_RDWR|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, 0600) = [0-9]' || true ;;
    openers) grep -l 'openat(.*\.round", O_RDWR|O_NOFOLLOW|O_CLOEXEC) = [0-9]' "$1".st.* | wc -l ;;
    removed) cat "$1".st.* | grep -c 'unlink(".*\.round") = 0' || true ;;
    reserved) cat "$1".st.* | grep -c 'fallocate(' || true ;;
  esac
}

export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE
write "$PWD/on" on
expect_eq "on: round files created (one aggregator, one version)" 1 "$(rounds on created)"
expect_eq "on: processes that opened it (the other three ranks)" 3 "$(rounds on openers)"
expect_eq "on: round files removed" 1 "$(rounds on removed)"
[ "$(rounds on reserved)" -ge 2 ] || fail "on: the round file's space was not reserved (fallocate, a slot each)"
expect_eq "on: round files left in the stage folder" "" "$(ls "$SLUICE_STAGE_DIR" | grep '\.round$' || true)"
restart "$PWD/on" on
echo "ok: one round file, opened by the three writers of the node, removed; the restart read every block"

SLUICE_CB_SHARED=off write "$PWD/off" off
expect_eq "off: round files" 0 "$(rounds off created)"
restart "$PWD/off" off
# raw DIR: the array of DIR's container as a raw file, DIR.raw.
raw() { "$SLUICE_BIN_DIR/sluice-ckpt" extract -q --raw "$1.raw" "$1/ckpt.@r.sluice" || fail "cannot extract $1's array"; }
raw "$PWD/on"
raw "$PWD/off"
cmp on.raw off.raw ||
  fail "the array written through shared rounds differs from the one sent as messages"
echo "ok: SLUICE_CB_SHARED=off: messages only, the same array"

# Ranks that disagree (off on ranks 0-1, on on 2-3): the home's value holds for the whole
# commit, so no writer waits for a GO that its aggregator never sends.
mkdir -p "$PWD/mixed"
SLUICE_CAPTURE="$PWD/mixed/ckpt.%r" SLUICE_LAYOUT="$PWD/mixed/ckpt.%r:header=64,dtype=f8,shape=64x64x128" \
  timeout 120 "$MPIEXEC" -n 2 env LD_PRELOAD="$SLUICE_LIB" SLUICE_CB_SHARED=off "$app" write "$PWD/mixed" 64 64 128 64 : \
  -n 2 env LD_PRELOAD="$SLUICE_LIB" SLUICE_CB_SHARED=on "$app" write "$PWD/mixed" 64 64 128 64 >mixed.out 2>mixed.err ||
  fail "mixed: writer job failed (or hung): $(tail -3 mixed.err)"
restart "$PWD/mixed" mixed
raw "$PWD/mixed"
cmp on.raw mixed.raw || fail "the array written by ranks that disagree differs"
echo "ok: ranks that disagree on SLUICE_CB_SHARED: the home's value, the same array"

# A stage folder with room for the members (4 x 1 MiB) but not for two round buffers of 1 MiB.
mkdir small
mount -t tmpfs -o size=8M,mode=0700 tmpfs small || fail "cannot mount a tmpfs (needs root)"
trap 'umount "$SLUICE_TEST_SCRATCH/small" 2>/dev/null' EXIT
fallocate -l 3584K small/filler
SLUICE_STAGE_DIR=$PWD/small write "$PWD/full" full
expect_eq "full: reservations refused (ENOSPC)" 1 "$(cat full.st.* | grep -c 'fallocate(.* = -1 ENOSPC')"
expect_eq "full: processes that opened a round file" 0 "$(rounds full openers)"
restart "$PWD/full" full
expect_eq "full: files left in the stage folder" "filler" "$(ls small)"
raw "$PWD/full"
cmp on.raw full.raw ||
  fail "the array written without room for shared rounds differs"
echo "ok: no room for the round buffers: messages, the same array, nothing left staged"

# Room for one round buffer: the first slot is shared, the second is the aggregator's own memory
# (its GOs name no file: messages). 8 MiB = 2,048 pages; the members take 4 x 257 and their
# sidecars 4: 2,528 KiB of filler leaves 384 pages, a 256-page slot and not two.
rm small/filler
fallocate -l 2528K small/filler
SLUICE_STAGE_DIR=$PWD/small write "$PWD/half" half
expect_eq "half: slots reserved" 1 "$(cat half.st.* | grep -c 'fallocate(.* = 0$')"
expect_eq "half: slots refused (ENOSPC)" 1 "$(cat half.st.* | grep -c 'fallocate(.* = -1 ENOSPC')"
expect_eq "half: processes that opened the round file" 3 "$(rounds half openers)"
restart "$PWD/half" half
expect_eq "half: files left in the stage folder" "filler" "$(ls small)"
raw "$PWD/half"
cmp on.raw half.raw || fail "the array written with one shared slot differs"
echo "ok: room for one slot: that slot shared, the other sent as messages, the same array"

# Whole members on the two-phase path (no layout): 3 ranks, members of 700,000 bytes that share
# stripes, shuffled; the round file is opened by the two other ranks.
mkdir -p "$PWD/plain"
SLUICE_CAPTURE="$PWD/plain/ckpt.%r" SLUICE_CB_WRITE=enable \
  timeout 120 strace -ff -qq -e signal=none -e trace=openat,unlink,fallocate -o plain.st \
  "$MPIEXEC" -n 3 env LD_PRELOAD="$SLUICE_LIB" "$sized" write "$PWD/plain" 700000 >plain.out 2>plain.err ||
  fail "plain: writer job failed: $(tail -3 plain.err)"
expect_eq "plain: processes that opened the round file" 2 "$(rounds plain openers)"
run_dist 2 SLUICE_CAPTURE="$PWD/plain/ckpt.%r" "$sized" verify "$PWD/plain" 3 700000 ||
  fail "plain: the restart read wrong bytes"
echo "ok: whole members shuffled through shared rounds; the restart read every byte"

# The round file of an aggregator killed during a commit: `sluice-ckpt recover` removes it, with
# a line, once its process is gone (the name carries this host and that pid).
host=$(cat on.st.* | sed -n 's#.*/\(m-[0-9a-f]*-\)[0-9]*-tp[0-9]*\.round", O_RDWR|O_CREAT.*#\1#p' | head -1)
[ -n "$host" ] || fail "no round file name in on's strace logs"
sh -c 'exit 0' &
dead=$!
wait "$dead"
mkdir stale
head -c 4096 /dev/zero >"stale/${host}${dead}-tp24583.round"
"$SLUICE_BIN_DIR/sluice-ckpt" recover --stage stale 2>recover.err || fail "recover failed: $(cat recover.err)"
expect_eq "stale: files left" "" "$(ls stale)"
expect_eq "stale: lines" 1 "$(grep -c "removed .*${dead}-tp24583.round, left by a process killed while writing it" recover.err)"
echo "ok: a dead aggregator's round file is removed by sluice-ckpt recover, with one line"
