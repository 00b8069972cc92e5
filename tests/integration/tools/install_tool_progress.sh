# SPDX-License-Identifier: MIT
# sluice-ckpt verify, extract and pack draw a progress line (bytes, rate, time left) on a terminal for
# large containers, and nothing when stdout is not a terminal, with --quiet, or for small ones.
# The terminal is a pseudo-terminal from script(1).
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
command -v script >/dev/null || fail "script(1) (util-linux) is needed for a pseudo-terminal"
on_tty() { timeout 120 script -qec "$*" /dev/null; }

mkdir big small
for r in 0 1 2 3; do head -c 18M /dev/urandom > big/f.$r; done
head -c 1M /dev/urandom > small/f.0
cp -r big orig
out=$(on_tty "$ckpt" pack 'big/f.%r' big/f.[0-3])
expect_contains "pack on a tty: progress" "of 72.0 MiB (100%)" "$out"
out=$(timeout 60 "$ckpt" pack -o off_tty.sluice 'big/f.%r' big/f.[0-3] 2>&1)
expect_eq "pack, stdout not a tty: nothing" "" "$out"
out=$(on_tty "$ckpt" pack -q -o quiet.sluice 'big/f.%r' big/f.[0-3])
expect_eq "pack -q on a tty: nothing" "" "$out"
rm off_tty.sluice quiet.sluice
timeout 60 "$ckpt" pack 'small/f.%r' small/f.0
rm big/f.[0-3] small/f.0

out=$(on_tty "$ckpt" verify big)
expect_contains "verify on a tty: bytes of the total" "of 72.0 MiB" "$out"
expect_contains "verify on a tty: rate" "iB/s" "$out"
expect_contains "verify on a tty: time left" "s left" "$out"
expect_contains "verify on a tty: the line is erased before the result" $'\r\e[Kbig/f.@r.sluice: ok (4 members' "$out"

out=$(timeout 60 "$ckpt" verify big 2>&1)
expect_eq "verify, stdout not a tty: the result only" "big/f.@r.sluice: ok (4 members, 75497472 bytes)" "$out"
out=$(on_tty "$ckpt" verify --quiet big)
expect_eq "verify --quiet on a tty: the result only" "big/f.@r.sluice: ok (4 members, 75497472 bytes)" "$(tr -d '\r' <<<"$out")"
out=$(on_tty "$ckpt" verify small)
expect_eq "verify of a small container on a tty: no progress" "small/f.@r.sluice: ok (1 members, 1048576 bytes)" "$(tr -d '\r' <<<"$out")"

out=$(on_tty "$ckpt" extract -o out big)
expect_contains "extract on a tty: progress" "of 72.0 MiB" "$out"
diff -r orig out >/dev/null || fail "extract with progress: files differ"
out=$(timeout 60 "$ckpt" extract -o out2 big 2>&1)
expect_eq "extract, stdout not a tty: nothing" "" "$out"
out=$(on_tty "$ckpt" extract -q -o out3 big)
expect_eq "extract -q on a tty: nothing" "" "$out"
echo "install_tool_progress: all passed"
