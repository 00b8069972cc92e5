# SPDX-License-Identifier: MIT
# sluice-ckpt on real files: pack per-rank files of uneven sizes (0 bytes, 1 byte, a few MiB, a
# non-round size, a sparse one) into a container, then ls/info/verify/extract, and check the
# extracted files with cmp; a per-rank-directory set; a corrupted byte named by verify and
# refused by extract; a truncated container reported by info; usage errors exit 2.
CKPT="$SLUICE_BIN_DIR/sluice-ckpt"
[ -x "$CKPT" ] || fail "sluice-ckpt not built at $CKPT"

# run_rc VAR cmd...: runs cmd with stdout to out.txt and stderr to err.txt, exit status in VAR.
run_rc() {
  local __var=$1; shift
  local __rc=0
  "$@" >out.txt 2>err.txt || __rc=$?
  printf -v "$__var" '%s' "$__rc"
}

# --- a checkpoint set written the plain way -----------------------------------------------
mkdir ref
: > ref/ckpt.0
printf 'x' > ref/ckpt.1
head -c $((3 * 1024 * 1024)) /dev/urandom > ref/ckpt.2
head -c 1234567 /dev/urandom > ref/ckpt.3
head -c 777 /dev/urandom | dd of=ref/ckpt.4 bs=1 seek=2000000 conv=notrunc status=none
truncate -s 5000000 ref/ckpt.4                       # hole, data, hole
cp -a ref run
run_rc rc "$CKPT" pack 'run/ckpt.%r' run/ckpt.0 run/ckpt.1 run/ckpt.2 run/ckpt.3 run/ckpt.4
expect_eq "pack exit" 0 "$rc"
[ -f run/ckpt.@r.sluice ] || fail "no container run/ckpt.@r.sluice: $(ls run)"
expect_eq "pack left no temporary file" "" "$(ls -A run | grep '\.tmp\.' || true)"

run_rc rc "$CKPT" ls run
expect_eq "ls exit" 0 "$rc"
expect_contains "ls names the set" "set $PWD/run/ckpt.%r  version 1  level durable  members 5" "$(cat out.txt)"
expect_contains "ls lists rank 2 with its size" "2        3145728  $PWD/run/ckpt.2" "$(cat out.txt)"
expect_contains "ls lists the empty member" "0              0  $PWD/run/ckpt.0" "$(cat out.txt)"

run_rc rc "$CKPT" info --members run/ckpt.@r.sluice
expect_eq "info exit" 0 "$rc"
expect_contains "info shows the format" "format      1.1" "$(cat out.txt)"
expect_contains "info shows alignment" "member starts aligned to 4096" "$(cat out.txt)"
expect_contains "info: whole-member checksums only" "checksum    crc32c per member"$'\n' "$(cat out.txt)"
expect_eq "the sparse member keeps its hole (one extent)" 1 \
  "$(awk '/member .*ckpt\.4$/{m=1;next} /^member/{m=0} m&&/extent/{n++} END{print n+0}' out.txt)"

run_rc rc "$CKPT" verify run
expect_eq "verify exit on an intact container" 0 "$rc"
expect_contains "verify says ok" "ok (5 members, " "$(cat out.txt)"

# --- extract: under OUTDIR, beside the container, --member, --force -----------------------
run_rc rc "$CKPT" extract -o out run/ckpt.@r.sluice
expect_eq "extract -o exit" 0 "$rc"
for r in 0 1 2 3 4; do cmp ref/ckpt.$r out/ckpt.$r || fail "out/ckpt.$r differs"; done
echo "ok: extract -o reproduces all 5 files byte for byte"
expect_eq "extract restores mtime" "$(stat -c %Y run/ckpt.3)" "$(stat -c %Y out/ckpt.3)"
[ "$(du -k out/ckpt.4 | cut -f1)" -lt 100 ] || fail "the hole of ckpt.4 was filled: $(du -k out/ckpt.4)"
echo "ok: holes stay holes"

run_rc rc "$CKPT" extract run
expect_eq "extract refuses to overwrite" 1 "$rc"
expect_contains "extract names the existing file" "run/ckpt.2: exists, not overwritten (use --force)" "$(cat err.txt)"
rm run/ckpt.[0-4]
run_rc rc "$CKPT" extract --member ckpt.3 run
expect_eq "extract --member exit" 0 "$rc"
expect_eq "only the named member" "ckpt.3 ckpt.@r.sluice" "$(cd run && echo *)"
cmp ref/ckpt.3 run/ckpt.3
echo "x" > run/ckpt.1
run_rc rc "$CKPT" extract --force run
expect_eq "extract --force exit" 0 "$rc"
for r in 0 1 2 3 4; do cmp ref/ckpt.$r run/ckpt.$r || fail "run/ckpt.$r differs after --force"; done
echo "ok: extract beside the container with --force"
"$CKPT" extract -c --member ckpt.2 run > cat2.out || fail "extract -c failed"
cmp ref/ckpt.2 cat2.out || fail "extract -c does not give member 2's bytes"
"$CKPT" extract -c -m ckpt.4 -m ckpt.1 run > cat41.out || fail "extract -c of two members"
cmp <(cat ref/ckpt.1 ref/ckpt.4) cat41.out || fail "extract -c concatenates in index order, holes as zeros"
echo "ok: extract -c streams members to stdout"
run_rc rc "$CKPT" extract -c -o x run
expect_eq "extract -c with -o" 2 "$rc"
run_rc rc "$CKPT" extract -o out2 --member nosuch run
expect_eq "extract of an unknown member" 1 "$rc"
expect_contains "names the unknown member" "no member named nosuch" "$(cat err.txt)"

# --- a set in per-rank directories: one container beside them -----------------------------
mkdir -p pr/rank0 pr/rank1 pr/rank2
for r in 0 1 2; do head -c $((r * 1000 + 5)) /dev/urandom > pr/rank$r/ckpt.dat; done
run_rc rc "$CKPT" pack 'pr/rank%r/ckpt.dat' pr/rank0/ckpt.dat pr/rank1/ckpt.dat pr/rank2/ckpt.dat
expect_eq "pack per-rank dirs" 0 "$rc"
[ -f 'pr/rank@r@_ckpt.dat.sluice' ] || fail "container name for rank%r/ckpt.dat: $(ls pr)"
run_rc rc "$CKPT" extract -o prout pr
expect_eq "extract per-rank dirs" 0 "$rc"
for r in 0 1 2; do cmp pr/rank$r/ckpt.dat prout/rank$r/ckpt.dat; done
echo "ok: per-rank directories recreated under OUTDIR"

# --- a set per step folder (chk_*/rank_%r.bin): -r walks the subfolders ------------------
for step in 10 20; do
  mkdir -p steps/chk_$step
  for r in 0 1; do head -c $((step * 100 + r)) /dev/urandom > steps/chk_$step/rank_$r.bin; done
  ( cd steps/chk_$step && "$CKPT" pack 'rank_%r.bin' rank_0.bin rank_1.bin && mkdir ../../steps_ref_$step && mv rank_*.bin ../../steps_ref_$step/ )
done
mkdir -p steps/.hidden && cp steps/chk_10/rank_@r.bin.sluice steps/.hidden/
run_rc rc "$CKPT" ls steps
expect_eq "ls without -r: no containers at the top, not an error" 0 "$rc"
expect_eq "ls without -r lists nothing" "" "$(cat out.txt)"
run_rc rc "$CKPT" ls -r steps
expect_eq "ls -r exit" 0 "$rc"
expect_eq "ls -r finds both steps, not the hidden folder" \
  "steps/chk_10/rank_@r.bin.sluice steps/chk_20/rank_@r.bin.sluice" "$(grep '^steps' out.txt | xargs)"
run_rc rc "$CKPT" verify steps
expect_eq "verify without -r on a folder without containers" 1 "$rc"
expect_contains "says so" "no containers (*.sluice) in this folder" "$(cat err.txt)"
run_rc rc "$CKPT" verify -r steps
expect_eq "verify -r" 0 "$rc"
run_rc rc "$CKPT" extract -r -o steps_out steps
expect_eq "extract -r -o" 0 "$rc"
for step in 10 20; do for r in 0 1; do
  cmp steps_ref_$step/rank_$r.bin steps_out/chk_$step/rank_$r.bin || fail "step $step rank $r"
done; done
echo "ok: extract -r keeps each container's subfolder under OUTDIR"
run_rc rc "$CKPT" extract -r steps
expect_eq "extract -r beside the containers" 0 "$rc"
cmp steps_ref_20/rank_1.bin steps/chk_20/rank_1.bin

# --- corruption: one byte of member 3 ------------------------------------------------------
cp run/ckpt.@r.sluice bad.sluice
off=$(awk '/member .*ckpt\.3$/{m=1;next} m&&/extent/{print $6; exit}' <("$CKPT" info --members bad.sluice))
[ -n "$off" ] || fail "could not find member 3's extent"
flip_byte bad.sluice $((off + 1000))
run_rc rc "$CKPT" verify bad.sluice
expect_eq "verify exit on a corrupt member" 1 "$rc"
expect_contains "verify names the member" "bad.sluice: member $PWD/run/ckpt.3 (rank 3): checksum mismatch" "$(cat err.txt)"
expect_eq "verify names only that member" 1 "$(grep -c 'checksum mismatch' err.txt)"
expect_contains "verify summary" "CORRUPT: 1 of 5 members" "$(cat out.txt)"
run_rc rc "$CKPT" extract -o badout bad.sluice
expect_eq "extract exit with a corrupt member" 1 "$rc"
expect_contains "extract names the member" "member $PWD/run/ckpt.3 (rank 3): checksum mismatch" "$(cat err.txt)"
[ ! -e badout/ckpt.3 ] || fail "a corrupt member was extracted"
run_rc rc "$CKPT" extract -c -m ckpt.3 bad.sluice
expect_eq "extract -c of a corrupt member" 1 "$rc"
expect_contains "extract -c names it" "(rank 3): checksum mismatch" "$(cat err.txt)"
expect_eq "no temporary file left" "" "$(ls -A badout | grep sluice-extract || true)"
for r in 0 1 2 4; do cmp ref/ckpt.$r badout/ckpt.$r || fail "intact member $r not extracted"; done
echo "ok: the other members still extract"

# --- truncation and junk ----------------------------------------------------------------
cp run/ckpt.@r.sluice short.sluice
truncate -s $(( $(stat -c %s short.sluice) - 10 )) short.sluice
run_rc rc "$CKPT" info short.sluice
expect_eq "info exit on a truncated container" 1 "$rc"
expect_contains "info says truncated" "short.sluice: truncated or incomplete" "$(cat err.txt)"
run_rc rc "$CKPT" verify short.sluice
expect_eq "verify exit on a truncated container" 1 "$rc"
echo "just text" > text.sluice
run_rc rc "$CKPT" info text.sluice
expect_eq "info exit on a non-container" 1 "$rc"
expect_contains "info says not a container" "text.sluice: not a sluice container" "$(cat err.txt)"
run_rc rc "$CKPT" ls nothing-here
expect_eq "ls of a missing path" 1 "$rc"
expect_contains "names the missing path" "nothing-here: No such file or directory" "$(cat err.txt)"

# --- usage ------------------------------------------------------------------------------
run_rc rc "$CKPT"
expect_eq "no command" 2 "$rc"
run_rc rc "$CKPT" frobnicate
expect_eq "unknown command" 2 "$rc"
expect_contains "names the command" "unknown command 'frobnicate'" "$(cat err.txt)"
run_rc rc "$CKPT" extract
expect_eq "extract without PATH" 2 "$rc"
run_rc rc "$CKPT" verify --bogus x
expect_eq "unknown option" 2 "$rc"
expect_contains "names the option" "unknown option '--bogus'" "$(cat err.txt)"
run_rc rc "$CKPT" extract -o
expect_eq "option without its value" 2 "$rc"
expect_contains "says the value is missing" "option '-o' needs a value" "$(cat err.txt)"
run_rc rc "$CKPT" pack -b 1000 'x.%r' ref/ckpt.1
expect_eq "bad block size" 2 "$rc"
run_rc rc "$CKPT" pack 'run/other.%r' ref/ckpt.1
expect_eq "file not matching the set key" 2 "$rc"
run_rc rc "$CKPT" --help
expect_eq "--help exit" 0 "$rc"
expect_contains "--help lists extract" "extract" "$(cat out.txt)"
for c in ls info verify extract pack recover bench; do
  run_rc rc "$CKPT" $c --help
  expect_eq "$c --help" 0 "$rc"
done

# --- a newline in a member path cannot forge a listing line ------------------------------
mkdir nl
printf 'a' > "nl/ckpt"$'\n'".1"
"$CKPT" pack "nl/ckpt"$'\n'".%r" "nl/ckpt"$'\n'".1"
run_rc rc "$CKPT" ls nl
expect_eq "ls of a path with a newline" 0 "$rc"
expect_eq "ls prints 4 lines, the newline escaped" 4 "$(wc -l < out.txt)"
expect_contains "shown as \\n" 'nl/ckpt\n.1' "$(cat out.txt)"
"$CKPT" extract -o nlout nl
cmp "nl/ckpt"$'\n'".1" "nlout/ckpt"$'\n'".1" || fail "the real name is used for the file"

# --- bench prints its table (figures only: nothing here depends on speed) -----------------
run_rc rc "$CKPT" bench --size 4M --members 1000 --dir "$PWD"
expect_eq "bench exit" 0 "$rc"
expect_eq "bench prints all 7 rows" 7 "$(grep -cE ' (GB/s|ns|s)$' out.txt)"
expect_eq "bench cleans up" "" "$(ls -A | grep sluice-bench || true)"
run_rc rc "$CKPT" bench --size 1K
expect_eq "bench with a too small size" 2 "$rc"

# --- a hostile container cannot make extract write outside the output folder ---------------
# Rewrite member 0's path "…/ckpt.0" as "…/../x.0" (same length) and recompute the checksums,
# so that only extract's own path check stands in the way.
mkdir -p evil
cp ref/ckpt.1 evil/ckpt.0
"$CKPT" pack 'evil/ckpt.%r' evil/ckpt.0
/usr/bin/python3 - evil/ckpt.@r.sluice <<'PY'
import struct, sys
def crc32c(data, crc=0):
    crc ^= 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xffffffff
path = sys.argv[1]
img = bytearray(open(path, 'rb').read())
footer = len(img) - 64
index_off, index_len = struct.unpack_from('<QQ', img, footer + 16)
at = img.index(b'/ckpt.0', index_off)
img[at:at + 7] = b'/../x.0'
struct.pack_into('<I', img, footer + 48, crc32c(img[index_off:index_off + index_len]))
struct.pack_into('<I', img, footer + 60, crc32c(img[footer:footer + 60]))
open(path, 'wb').write(img)
PY
"$CKPT" verify evil >/dev/null || fail "the edited container should still be well-formed"
mkdir -p evil_out/inner
run_rc rc "$CKPT" extract -o evil_out/inner evil
expect_eq "extract refuses a member outside the set's folder" 1 "$rc"
expect_contains "names the member" "evil/../x.0 does not lie under the set's folder" "$(cat err.txt)"
[ ! -e evil_out/x.0 ] && [ ! -e evil/x.0 ] || fail "extract wrote outside the output folder"
echo "ok: nothing written outside the output folder"
