# SPDX-License-Identifier: MIT
# Containers written by the real capture+commit path (unmodified coreutils under mpiexec with
# libsluice preloaded, odd and even rank counts, two block sizes) are valid for sluice-ckpt
# without sluice: verify passes, info shows block-aligned members, ls shows every rank, and
# extract reproduces files that cmp equal to what the program wrote.
CKPT="$SLUICE_BIN_DIR/sluice-ckpt"
export SLUICE_STAGE_DIR="$SLUICE_TEST_STAGE"

mkdir ref
: > ref/ckpt.0
printf 'y' > ref/ckpt.1
head -c $((3 * 1024 * 1024 + 5)) /dev/urandom > ref/ckpt.2
head -c 1234567 /dev/urandom > ref/ckpt.3

for n in 3 4; do
  for bs in 4K 64K; do
    d=run_${n}_$bs
    mkdir "$d"
    ( cd "$d" && SLUICE_CAPTURE='ckpt.%r' SLUICE_BLOCK_SIZE=$bs timeout 120 \
        "$MPIEXEC" -n $n env LD_PRELOAD="$SLUICE_LIB" \
        sh -c 'dd if=../ref/ckpt.$PMI_RANK of=ckpt.$PMI_RANK bs=1M status=none' ) \
      || fail "$d: the captured job failed"
    expect_eq "$d: one container and nothing else" "ckpt.@r.sluice" "$(ls -A "$d")"
    "$CKPT" verify "$d" >out.txt 2>err.txt || fail "$d: verify: $(cat out.txt err.txt)"
    expect_contains "$d: verify" "ok ($n members" "$(cat out.txt)"
    "$CKPT" info "$d/ckpt.@r.sluice" >info.txt
    want_bs=$([ $bs = 4K ] && echo 4096 || echo 65536)
    expect_contains "$d: block size" "block size  $want_bs" "$(cat info.txt)"
    expect_contains "$d: members block-aligned" "member starts aligned to $want_bs" "$(cat info.txt)"
    "$CKPT" ls "$d" >ls.txt
    for ((r = 0; r < n; r++)); do
      size=$(stat -c %s ref/ckpt.$r)
      grep -Eq "^ +$r +$size  $PWD/$d/ckpt\.$r\$" ls.txt || fail "$d: ls lacks rank $r ($size bytes): $(cat ls.txt)"
    done
    echo "ok: $d: ls lists every rank with its size"
    "$CKPT" extract -o "out_$d" "$d" || fail "$d: extract failed"
    for ((r = 0; r < n; r++)); do cmp ref/ckpt.$r "out_$d/ckpt.$r" || fail "$d: rank $r differs"; done
    expect_eq "$d: extract wrote exactly the members" "$n" "$(ls "out_$d" | wc -l)"
    echo "ok: $d: extracted files cmp equal to what dd wrote"
  done
done

# The other direction: a container built by `sluice-ckpt pack` from files written without
# sluice serves a restart under sluice (2 ranks read all 4 members through the per-rank names).
mkdir packed
cp ref/ckpt.* packed/
( cd packed && "$CKPT" pack 'ckpt.%r' ckpt.0 ckpt.1 ckpt.2 ckpt.3 && rm ckpt.0 ckpt.1 ckpt.2 ckpt.3 ) \
  || fail "pack failed"
( cd packed && SLUICE_CAPTURE='ckpt.%r' run_dist 2 \
    sh -c 'for r in 0 1 2 3; do cmp ../ref/ckpt.$r ckpt.$r || exit 1; done' ) \
  || fail "a restart under sluice did not read the packed members back"
echo "ok: a packed container serves restart reads under sluice"
expect_eq "packed: still one container and nothing else" "ckpt.@r.sluice" \
  "$(ls -A packed)"
