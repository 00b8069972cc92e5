# SPDX-License-Identifier: MIT
# Unmodified coreutils under real mpiexec: dd writes per-rank checkpoints that sluice captures
# into one container; cmp, cat and wc read the members back under sluice (any rank count);
# `sluice-ckpt extract` reproduces files that cmp equal without sluice.

export SLUICE_STAGE_DIR="$SLUICE_TEST_STAGE"
export SLUICE_CAPTURE='ckpt.%r'

# Reference inputs (not captured names), uneven sizes: 0 KiB, 1 KiB, 700 KiB, 2049 KiB + 3 bytes.
for r in 0 1 2 3; do
  case $r in 0) n=0 ;; 1) n=1024 ;; 2) n=$((700 * 1024)) ;; 3) n=$((2049 * 1024 + 3)) ;; esac
  head -c "$n" /dev/urandom > "src.$r"
done

run_dist 4 sh -c 'dd if=src.$PMI_RANK of=ckpt.$PMI_RANK bs=64k 2>/dev/null'
expect_eq "one container, no per-rank files" "ckpt.@r.sluice src.0 src.1 src.2 src.3" "$(echo *)"

# Every rank compares its own member; then a 3-rank job compares all of them.
run_dist 4 sh -c 'cmp src.$PMI_RANK ckpt.$PMI_RANK'
echo "ok: cmp per rank (4 ranks)"
run_dist 3 sh -c 'for r in 0 1 2 3; do cmp src.$r ckpt.$r || exit 1; done'
echo "ok: cmp of all members from each of 3 ranks"
expect_eq "cat of a member" "$(md5sum < src.3)" "$(run_sluice cat ckpt.3 | md5sum)"
expect_eq "wc -c of the members" "$(wc -c src.0 src.1 src.2 src.3 | awk '{print $1}')" \
  "$(run_sluice wc -c ckpt.0 ckpt.1 ckpt.2 ckpt.3 | awk '{print $1}')"

# cp reads a committed member (it checks that fstat of the open file matches stat of the name)
# and writes one; mv imports a plain file as a member.
run_sluice cp ckpt.3 copy.3
cmp src.3 copy.3 || fail "cp of a committed member differs"
run_sluice cp src.1 ckpt.5
run_sluice cp ckpt.5 copy.5
cmp src.1 copy.5 || fail "cp into and out of a member differs"
cp src.0 moved.0
run_sluice mv moved.0 ckpt.6
[ ! -e moved.0 ] && [ ! -e ckpt.6 ] || fail "mv left a plain file behind"
run_sluice cmp src.0 ckpt.6
echo "ok: cp out of, cp into and mv into members"
rm copy.3 copy.5

# dd rewrite of one member with conv=notrunc seeds from the committed bytes.
printf 'XYZ' > patch
run_dist 1 dd if=patch of=ckpt.2 bs=1 seek=10 conv=notrunc 2>/dev/null
cp src.2 expect.2
dd if=patch of=expect.2 bs=1 seek=10 conv=notrunc 2>/dev/null
run_sluice cmp expect.2 ckpt.2
echo "ok: dd conv=notrunc patched the committed member in place"

# Shell redirection: /bin/sh (dash) opens the member, runs cat with it as stdout, and ends with
# _exit, so the member is handed over and committed on that path too.
rm -f ckpt.@r.sluice
run_dist 4 sh -c 'cat src.$PMI_RANK > ckpt.$PMI_RANK'
expect_eq "redirection: one container, no per-rank files" "ckpt.@r.sluice expect.2 patch src.0 src.1 src.2 src.3" "$(echo *)"
run_dist 2 sh -c 'for r in 0 1 2 3; do cmp src.$r ckpt.$r || exit 1; done'
echo "ok: members written by shell redirection read back"
expect_eq "nothing left staged" "" "$(find "$SLUICE_STAGE_DIR" -name 'm-*' | head -3)"
cp src.2 expect.2
dd if=patch of=expect.2 bs=1 seek=10 conv=notrunc 2>/dev/null
run_dist 1 dd if=patch of=ckpt.2 bs=1 seek=10 conv=notrunc 2>/dev/null

# bash forks, opens the member in the child and execs cat there: the exec'ed image adopts the
# staged descriptor it inherited, and its close hands the member over.
run_sluice bash -c 'cat src.3 > ckpt.7; cat src.1 >> ckpt.7'
cat src.3 src.1 > expect.7
run_sluice cmp expect.7 ckpt.7
echo "ok: members written by exec'ed commands (bash > and >>) read back"
[ ! -e ckpt.7 ] || fail "ckpt.7 was created on disk"

# The tool writes the per-rank files back out; they equal the originals without sluice.
mkdir out
"$SLUICE_BIN_DIR/sluice-ckpt" extract -o out ckpt.@r.sluice > /dev/null
for r in 0 1 3; do cmp "src.$r" "out/ckpt.$r" || fail "extracted ckpt.$r differs"; done
cmp expect.2 out/ckpt.2 || fail "extracted ckpt.2 differs"
echo "ok: sluice-ckpt extract reproduces every member"
