# SPDX-License-Identifier: MIT
# A new version never replaces or removes a previous version it cannot read: the members inside
# would go with it. The container's header is damaged by hand (one byte of its version field, so
# that it fails its checksum), then a process writes a new member: before, the next commit read
# "no previous version" and renamed a version holding the new member alone over the file, and
# the three members in it were gone for good. Now the damaged file is kept beside the container, byte for byte,
# one line says where, and the new version holds what was written since; the same holds for
# sluice-ckpt recover, which commits what a crashed job staged.
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE
d=$PWD/run
mkdir -p "$d"
export SLUICE_CAPTURE="$d/ckpt.%r"
run_dist 3 bash -c "echo hello\$PMI_RANK > $d/ckpt.\$PMI_RANK" \
  || fail "writer job failed"
c=$d/ckpt.@r.sluice
"$ckpt" verify "$c" >/dev/null || fail "the first version does not verify"
printf '\377' | dd of="$c" bs=1 seek=24 conv=notrunc status=none # the header's version field
cp "$c" damaged.copy
"$ckpt" verify "$c" >/dev/null 2>&1 && fail "the damaged header still verifies"

run_sluice bash -c "echo again > $d/ckpt.4" 2>w.err || fail "writing a new member failed: $(cat w.err)"
aside=$(find "$d" -maxdepth 1 -name '.ckpt.@r.sluice.damaged-t*')
[ -n "$aside" ] || fail "the damaged version was replaced (folder: $(ls -A "$d" | tr '\n' ' '); stderr: $(cat w.err))"
cmp "$aside" damaged.copy || fail "the kept damaged version differs from the damaged file"
expect_eq "one sluice line" 1 "$(grep -c '^sluice' w.err)"
expect_contains "the line names the damage" "corrupt header" "$(cat w.err)"
expect_contains "the line names where the file went" "kept as $aside" "$(cat w.err)"
echo "ok: a damaged previous version is kept: $(grep '^sluice' w.err)"
expect_eq "the new member reads back" again "$(run_sluice cat "$d/ckpt.4")"
"$ckpt" verify "$c" >/dev/null || fail "the new version does not verify"

# Its last member removed, the new version goes; the kept one stays as it was.
run_sluice rm "$d/ckpt.4" || fail "rm of the new member failed"
[ ! -e "$c" ] || fail "the container outlived its last member"
cmp "$aside" damaged.copy || fail "the kept damaged version changed"

# sluice-ckpt recover: a crashed job's staged member over a damaged previous version.
d2=$PWD/run2
mkdir -p "$d2"
export SLUICE_CAPTURE="$d2/ckpt.%r"
run_dist 2 bash -c "echo hello\$PMI_RANK > $d2/ckpt.\$PMI_RANK" \
  || fail "second writer job failed"
c2=$d2/ckpt.@r.sluice
printf '\377' | dd of="$c2" bs=1 seek=24 conv=notrunc status=none
cp "$c2" damaged2.copy
# A process killed with its member staged and still open: nothing commits it but recover.
(cd "$d2" && run_sluice sh -c 'exec 3>ckpt.0; printf staged >&3; kill -9 $$') || true
"$ckpt" recover --take-open --stage "$SLUICE_STAGE_DIR" "$d2" >recover.out 2>&1 || true
aside2=$(find "$d2" -maxdepth 1 -name '.ckpt.@r.sluice.damaged-t*')
[ -n "$aside2" ] || fail "recover replaced the damaged version (folder: $(ls -A "$d2" | tr '\n' ' '); recover said: $(cat recover.out))"
cmp "$aside2" damaged2.copy || fail "the damaged version kept by recover differs"
expect_contains "recover says where it went" "kept as $aside2" "$(cat recover.out)"
echo "ok: sluice-ckpt recover keeps a damaged previous version too"
