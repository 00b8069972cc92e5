# SPDX-License-Identifier: MIT
# The two-phase write of a global array (SLUICE_LAYOUT), counted from outside with strace: 4 and
# 3 ranks write the blocks of a 64x64x128 array of doubles (4 MiB, header of 64 bytes per rank;
# every rank's block is 2-D strided in the array, so its rows interleave with the other ranks'
# in every stripe). With 256 KiB stripes: one process (this node's one aggregator) writes the
# container, no stripe is written by two processes, and at least 95 % of the bytes go in whole
# aligned stripes. Without the layout's array the members would be contiguous per rank; here
# the container's array region must be the canonical array (checked by a restart on 2 ranks,
# which reads blocks of another decomposition from it). Then a byte flipped in the array region
# of the 4-rank container (docs/LAYOUT.md, "Restart on another decomposition"): a 3-rank restart
# verifies only the chunks of the old members that each rank reads, so the rank whose block holds
# the byte fails with one line naming the member and the chunk, and the others read their blocks.
app=$SLUICE_APPS_DIR/mpi_ckpt_array
check=$SOURCE_DIR/tests/integration/ckpt/stripe_writers.py
# flip_element CONTAINER: inverts a byte of element (30,5,7) of the array region (its offset from
# `sluice-ckpt info`'s array record).
flip_element() {
  local array
  array=$("$SLUICE_BIN_DIR/sluice-ckpt" info "$1" | sed -n 's/.*,array=\([0-9]*\).*/\1/p')
  flip_byte "$1" $((array + ((30 * 64 + 5) * 128 + 7) * 8))
}
# restart_flipped DIR RANKS TAG: a restart on RANKS ranks that must fail; its stderr in TAG.err.
restart_flipped() {
  SLUICE_CAPTURE="$1/ckpt.%r" RUN_TIMEOUT=60 run_dist "$2" "$app" read "$1" 64 64 128 64 >"$3.out" 2>"$3.err" &&
    fail "$3: a restart read a block that holds a flipped byte"
  cat "$3.err"
}
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE SLUICE_STRIPING_UNIT=256K SLUICE_CB_BUFFER_SIZE=1M
command -v strace >/dev/null || fail "strace not found (apt-get install strace)"
for n in 4 3; do
  d=$PWD/n$n
  mkdir -p "$d"
  SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_LAYOUT="$d/ckpt.%r:header=64,dtype=f8,shape=64x64x128" \
    timeout 120 strace -f -qq -e signal=none -e trace=write,pwrite64,pwritev,pwritev2,copy_file_range,clone,clone3 -y \
    -o n$n.strace "$MPIEXEC" -n $n env LD_PRELOAD="$SLUICE_LIB" "$app" write "$d" 64 64 128 64 \
    >n$n.out 2>n$n.err || fail "n$n: writer job failed: $(tail -3 n$n.err)"
  python3 "$check" n$n.strace 262144 >n$n.stripes || fail "stripe_writers.py failed"
  cat n$n.stripes
  read -r _ bytes whole shared < <(grep '^total' n$n.stripes)
  [ "$bytes" -ge 4194304 ] || fail "n$n: only $bytes bytes reached the container (4 MiB of array expected)"
  expect_eq "n$n: stripes written in pieces by two processes" 0 "$shared"
  [ $((whole * 100)) -ge $((bytes * 95)) ] ||
    fail "n$n: $(awk -v a="$whole" -v b="$bytes" 'BEGIN{printf "%.1f", 100*a/b}') % of container bytes in whole stripes, under 95 %"
  writers=$(python3 "$SOURCE_DIR/tests/integration/ckpt/container_writers.py" n$n.strace | sed -n 1p)
  expect_eq "n$n: processes that wrote the container (one aggregator on this node)" 1 "$writers"
  echo "ok: n$n: $(awk -v a="$whole" -v b="$bytes" 'BEGIN{printf "%.1f", 100*a/b}') % of $bytes bytes in whole stripes"
  SLUICE_CAPTURE="$d/ckpt.%r" RUN_TIMEOUT=60 run_dist 2 \
    "$app" read "$d" 64 64 128 64 || fail "n$n: a restart on 2 ranks read wrong blocks"
done

# The 4-rank container has chunk checksums (footer minor 3). Element (30,5,7) lies in old rank
# 0's block (grid 2x2x1, rows of 1 KiB: chunk 60 of 16 KiB of its member) and in new rank 1's
# (grid 3x1x1: planes 21 to 41); new rank 0 reads planes 0 to 20 of old rank 0 (chunks 0 to 42).
c4=$PWD/n4/ckpt.@r.sluice
expect_eq "n4: footer minor (chunk checksums)" 3 "$(od -An -tu2 -j $(($(stat -c %s "$c4") - 54)) -N2 "$c4" | tr -d ' ')"
expect_contains "info: chunk checksums" "checksum    crc32c per member; per chunk of 16384 bytes in 4 of 4 members" \
  "$("$SLUICE_BIN_DIR/sluice-ckpt" info "$c4")"
expect_eq "info -m: members with chunk checksums" 4 "$("$SLUICE_BIN_DIR/sluice-ckpt" info -m "$c4" | grep -c '^member .*  chunks [0-9]* x 16384  writer')"
flip_element "$c4"
restart_flipped "$PWD/n4" 3 flip
expect_eq "lines naming the corrupt chunk" 1 "$(grep -c "member $PWD/n4/ckpt.0 (rank 0): chunk 60 (bytes 983040..999424) checksum mismatch" flip.err)"
expect_eq "ranks that could not read their block" "rank 1: cannot open" "$(sed -n 's/^\(rank [0-9]*: cannot open\) .*/\1/p' flip.err)"
expect_eq "ranks that said anything else" "" "$(grep '^rank ' flip.err | grep -v 'cannot open' || true)"
echo "ok: n4: the flipped byte failed the one rank that reads its chunk, with one line; the others read their blocks"

# A one-rank set takes the direct path (no two-phase writer): its one member, the whole array
# after its header, carries chunk checksums too. Element (30,5,7) is in chunk 120 of it; a
# restart on 2 ranks (planes 0-31 and 32-63) fails rank 0 alone, which reads that chunk.
d=$PWD/n1
mkdir -p "$d"
SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_LAYOUT="$d/ckpt.%r:header=64,dtype=f8,shape=64x64x128" \
  timeout 120 "$MPIEXEC" -n 1 env LD_PRELOAD="$SLUICE_LIB" "$app" write "$d" 64 64 128 64 \
  >n1.out 2>n1.err || fail "n1: writer job failed: $(tail -3 n1.err)"
c1=$d/ckpt.@r.sluice
expect_contains "n1: info: chunk checksums on the direct path" "per chunk of 16384 bytes in 1 of 1 members" \
  "$("$SLUICE_BIN_DIR/sluice-ckpt" info "$c1")"
SLUICE_CAPTURE="$d/ckpt.%r" RUN_TIMEOUT=60 run_dist 2 "$app" read "$d" 64 64 128 64 ||
  fail "n1: a restart on 2 ranks read wrong blocks"
flip_element "$c1"
restart_flipped "$d" 2 flip1
expect_eq "n1: lines naming the corrupt chunk" 1 "$(grep -c "member $d/ckpt.0 (rank 0): chunk 120 (bytes 1966080..1982464) checksum mismatch" flip1.err)"
expect_eq "n1: ranks that could not read their block" "rank 0: cannot open" "$(sed -n 's/^\(rank [0-9]*: cannot open\) .*/\1/p' flip1.err)"
echo "ok: n1: the one-rank container's chunk checksums failed only the rank that reads the flipped chunk"
