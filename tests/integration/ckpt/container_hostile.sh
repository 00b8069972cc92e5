# SPDX-License-Identifier: MIT
# Hostile files where a container should be: a FIFO does not block `ls`, `verify` or a restart
# read (each fails at once with a clear line), and one flipped byte in the index or in the
# footer loses no member: ls, extract and a restart read under sluice still get every member
# (through the index copy), verify names the damage, salvage writes a healthy version.
CKPT="$SLUICE_BIN_DIR/sluice-ckpt"
export SLUICE_STAGE_DIR="$SLUICE_TEST_STAGE"
export SLUICE_CAPTURE="$PWD/run/ckpt.%r"

mkdir run fifo src
mkfifo fifo/ckpt.@r.sluice
for cmd in ls verify; do
  rc=0; timeout 10 "$CKPT" $cmd fifo >out.txt 2>err.txt || rc=$?
  expect_eq "$cmd on a FIFO container ends with status 1" 1 "$rc"
  expect_contains "$cmd names it" "not a regular file" "$(cat err.txt)"
done
rc=0
SLUICE_CAPTURE="$PWD/fifo/ckpt.%r" timeout 10 env LD_PRELOAD="$SLUICE_LIB" cat fifo/ckpt.0 >out.txt 2>err.txt || rc=$?
[ "$rc" -ne 124 ] || fail "a restart read of a FIFO container blocked"
expect_eq "restart read of a FIFO container fails" 1 "$rc"
echo "ok: the restart read ended at once: $(head -c 200 err.txt)"

printf 'member zero\n' >run/ckpt.0
head -c 70000 /dev/urandom >run/ckpt.1
truncate -s 300000 run/ckpt.2 && printf tail >>run/ckpt.2
"$CKPT" pack -o run/ckpt.@r.sluice "$PWD/run/ckpt.%r" run/ckpt.0 run/ckpt.1 run/ckpt.2
mv run/ckpt.[0-2] src/
cp run/ckpt.@r.sluice pristine.sluice

# flip OFFSET_EXPR: xor one byte of run's container (python: offsets from the footer).
flip() {
  cp pristine.sluice run/ckpt.@r.sluice
  python3 - run/ckpt.@r.sluice "$1" <<'PY'
import struct, sys
p, where = sys.argv[1], sys.argv[2]
b = bytearray(open(p, 'rb').read())
io, il = struct.unpack_from('<QQ', b, len(b) - 64 + 16)
at = {'index': io + il // 2, 'footer': len(b) - 64 + 20, 'magic': len(b) - 60}[where]
b[at] ^= 0x10
open(p, 'wb').write(b)
PY
}
for where in index footer magic; do
  flip "$where"
  "$CKPT" ls run >ls.txt 2>err.txt || fail "ls of a container with a flipped $where byte: $(cat err.txt)"
  expect_eq "ls lists every member ($where)" 3 "$(grep -c '/run/ckpt\.[0-2]$' ls.txt)"
  expect_contains "ls says it read the index copy ($where)" "index copy" "$(cat err.txt)"
  rc=0; "$CKPT" verify run >out.txt 2>err.txt || rc=$?
  expect_eq "verify reports the damage ($where)" 1 "$rc"
  expect_contains "verify names it ($where)" "DAMAGED index or footer, 3 members intact" "$(cat out.txt)"
  rm -rf x && "$CKPT" extract -o x run >/dev/null 2>&1 || fail "extract ($where)"
  for r in 0 1 2; do cmp src/ckpt.$r x/ckpt.$r || fail "extract: member $r ($where)"; done
  echo "ok: extract got every member back ($where)"
  timeout 30 env LD_PRELOAD="$SLUICE_LIB" cat run/ckpt.1 >restart.bin || fail "restart read ($where)"
  cmp src/ckpt.1 restart.bin || fail "restart read of member 1 ($where)"
  echo "ok: restart read under sluice ($where)"
done

"$CKPT" salvage run/ckpt.@r.sluice 2>err.txt || fail "salvage: $(cat err.txt)"
expect_contains "salvage reports" "salvaged as version 2 with 3 member(s)" "$(cat err.txt)"
"$CKPT" verify run >out.txt 2>err.txt || fail "the salvaged container does not verify: $(cat out.txt err.txt)"
expect_eq "nothing to warn about after salvage" "" "$(cat err.txt)"
[ -e "run/.ckpt.@r.sluice.damaged-v1" ] || fail "the damaged version was not kept"
echo "ok: damaged version kept beside the salvaged one"
rm -rf x && "$CKPT" extract -o x run >/dev/null
for r in 0 1 2; do cmp src/ckpt.$r x/ckpt.$r || fail "salvaged member $r"; done
echo "ok: salvaged members intact"
"$CKPT" salvage run/ckpt.@r.sluice 2>err.txt || fail "salvage of an intact container"
expect_contains "an intact container is left alone" "nothing to salvage" "$(cat err.txt)"

echo "ok: hostile files handled"
