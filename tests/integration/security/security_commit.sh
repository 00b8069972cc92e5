# SPDX-License-Identifier: MIT
# Another local user against the victim's commits in a shared folder (a sticky, world-writable
# one like /tmp; docs/SECURITY.md), with two users made for the test:
#  - links planted at the container's temporary names must never make the victim's commit or
#    recover write through them (the victim's private file stays intact);
#  - the container is never more open than the program's files: members created 0600 under
#    umask 022 give a 0600 container that the other user cannot read.
source "$SOURCE_DIR/tests/integration/security/security_lib.bash"
sec_users
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
sec_dir v "$VICTIM"
sec_dir shared root 1777
printf "the victim's own data\n" > v/secret
chown "$VICTIM" v/secret
chmod 600 v/secret
head -c 70000 /dev/urandom > ref
chmod 644 ref
export SLUICE_STAGE_DIR=$PWD/v/stage

# 1. Links at every temporary name the first versions would have used (.<c>.tmp.<version>).
for i in 1 2 3 4 5; do
  as "$ATTACKER" ln -s "$PWD/v/secret" "shared/.ckpt.@r.sluice.tmp.$i"
done
for step in 1 2 3; do
  as "$VICTIM" env SLUICE_CAPTURE="$PWD/shared/ckpt.%r" LD_PRELOAD="$SLUICE_LIB" dd if=ref of=shared/ckpt.0 \
    status=none || fail "step $step: the victim's commit failed"
done
expect_eq "the victim's private file is intact" "the victim's own data" "$(cat v/secret)"
as "$VICTIM" "$ckpt" verify "$PWD/shared/ckpt.@r.sluice" > verify.out || fail "container: $(cat verify.out)"
expect_contains "three versions committed" "version 3" "$(as "$VICTIM" "$ckpt" ls "$PWD/shared")"
expect_eq "the planted links are untouched" "5" "$(find shared -maxdepth 1 -type l | wc -l)"

# ... and recover, for a crash's leftovers, in the same folder
sec_dir v/stage2 "$VICTIM"
printf 'sluice-stage 1\nstate closed\npid 2147483646\nwriter_rank 0\nmember_rank 1\nsize 6\nset_key %s\npath %s\n' \
  "$PWD/shared/ckpt.%r" "$PWD/shared/ckpt.1" > v/stage2/m-1-1.meta
printf 'crash\n' > v/stage2/m-1-1.data
chown "$VICTIM:$(id -g "$VICTIM")" v/stage2/m-1-1.meta v/stage2/m-1-1.data
for i in 4 5 6 7; do
  as "$ATTACKER" ln -sf "$PWD/v/secret" "shared/.ckpt.@r.sluice.tmp.$i"
done
as "$VICTIM" "$ckpt" recover --stage "$PWD/v/stage2" > rec.out 2>&1 || fail "recover: $(cat rec.out)"
expect_eq "recover: the victim's private file is intact" "the victim's own data" "$(cat v/secret)"
expect_eq "recover: member 1 committed" "crash" \
  "$(as "$VICTIM" env SLUICE_CAPTURE="$PWD/shared/ckpt.%r" LD_PRELOAD="$SLUICE_LIB" cat shared/ckpt.1)"

# 2. Modes: members created 0600 (umask 022), as the program asked.
sec_dir shared/m "$VICTIM" 755
as "$VICTIM" env SLUICE_CAPTURE="$PWD/shared/m/ckpt.%r" LD_PRELOAD="$SLUICE_LIB" python3 -c '
import os, sys
os.umask(0o022)
for r in (0, 1):
    fd = os.open(sys.argv[1] + "/ckpt.%d" % r, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, b"secret member\n")
    os.close(fd)
' "$PWD/shared/m" || fail "the victim's program failed"
expect_eq "stat of the member says what the program asked" "600" \
  "$(as "$VICTIM" env SLUICE_CAPTURE="$PWD/shared/m/ckpt.%r" LD_PRELOAD="$SLUICE_LIB" stat -c %a shared/m/ckpt.0)"
expect_eq "the container is 0600, as the members" "600" "$(stat -c %a shared/m/ckpt.@r.sluice)"
if as "$ATTACKER" cat shared/m/ckpt.@r.sluice > /dev/null 2>&1; then
  fail "the other user read the 0600 checkpoint"
fi
echo "ok: the other user cannot read it"
# A 0644 member joins later: the container stays as restrictive as the most private member.
as "$VICTIM" env SLUICE_CAPTURE="$PWD/shared/m/ckpt.%r" LD_PRELOAD="$SLUICE_LIB" python3 -c '
import os, sys
os.umask(0o022)
fd = os.open(sys.argv[1] + "/ckpt.2", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"public member\n")
os.close(fd)
' "$PWD/shared/m" || fail "the victim's second program failed"
expect_eq "the container did not open up" "600" "$(stat -c %a shared/m/ckpt.@r.sluice)"
# umask 077 and 0666: what the program's file would have been, 0600
sec_dir shared/u "$VICTIM" 755
as "$VICTIM" env SLUICE_CAPTURE="$PWD/shared/u/ckpt.%r" LD_PRELOAD="$SLUICE_LIB" bash -c \
  'umask 077; echo x > shared/u/ckpt.0' || fail "umask 077 run failed"
expect_eq "umask 077: container 0600" "600" "$(stat -c %a shared/u/ckpt.@r.sluice)"
