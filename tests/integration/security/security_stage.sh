# SPDX-License-Identifier: MIT
# Another local user against sluice's private folders (docs/SECURITY.md), with two users made
# for the test: the attacker creates the victim's default stage folder (/dev/shm/sluice-<uid>)
# and claims folder (/tmp/sluice-<uid>/claims) first, mode 0777, and plants a forged sidecar
# and a link there. The victim's job must refuse those folders with one line naming the
# problem, write nothing there, and never delete or recover anything because of them; a
# sidecar of another user in the victim's own folder is skipped by recover and by a restart
# read with a warning; the folders
# sluice makes itself are 0700 and staged data 0600.
source "$SOURCE_DIR/tests/integration/security/security_lib.bash"
sec_users
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
unset SLUICE_STAGE_DIR
# A shared temporary folder like /tmp (sticky, writable by all), whatever TMPDIR the suite runs
# under (an empty private TMPDIR would keep the attacker out and prove nothing).
tmp=$PWD/shared-tmp
mkdir -m 1777 "$tmp"
export TMPDIR=$tmp
sec_dir v "$VICTIM"
head -c 100000 /dev/urandom > ref
chmod 644 ref

# forged_pair DIR OWNER: a closed member of a dead writer, for a set in the victim's folder
forged_pair() {
  printf 'sluice-stage 1\nstate closed\npid 2147483646\nwriter_rank 0\nmember_rank 0\nsize 9\nset_key %s\npath %s\n' \
    "$PWD/v/evil.%r" "$PWD/v/evil.0" > "$1/m-1-1.meta"
  printf 'injected\n' > "$1/m-1-1.data"
  chown "$2:$(id -g "$2")" "$1/m-1-1.meta" "$1/m-1-1.data"
}

# 1. The default stage folder made first by the attacker, world-writable, with a forged pair.
stage=/dev/shm/sluice-$VUID
as "$ATTACKER" mkdir -m 777 "$stage"
forged_pair "$stage" "$ATTACKER"
rc_of as "$VICTIM" env SLUICE_CAPTURE="$PWD/v/ckpt.%r" LD_PRELOAD="$SLUICE_LIB" cp ref v/ckpt.0 2> cp.err
[ "$rc" != 0 ] || fail "the victim staged its checkpoint in the attacker's folder"
expect_contains "the stage folder is refused, saying whose it is" "$stage belongs to uid $AUID" "$(cat cp.err)"
expect_eq "nothing of the victim's in the attacker's folder" "m-1-1.data m-1-1.meta" "$(ls "$stage" | tr '\n' ' ' | sed 's/ $//')"
rc_of as "$VICTIM" env -u SLUICE_STAGE_DIR "$ckpt" recover > rec.out 2>&1
[ "$rc" != 0 ] || fail "recover used the attacker's stage folder: $(cat rec.out)"
expect_contains "recover refuses it in one line" "belongs to uid $AUID" "$(cat rec.out)"
[ ! -e v/evil.@r.sluice ] || fail "recover committed the attacker's forged member"
echo "ok: no container from the forged sidecar"
rm -rf "$stage"

# 2. A sidecar of another user inside the victim's own stage folder (only root can put it
# there): skipped with a warning.
sec_dir vstage "$VICTIM"
forged_pair vstage "$ATTACKER"
as "$VICTIM" "$ckpt" recover --stage "$PWD/vstage" > rec2.out 2>&1 || true
expect_contains "a foreign sidecar is skipped with a warning" "warning: skipped $PWD/vstage/m-1-1.meta: it belongs to uid $AUID" "$(cat rec2.out)"
[ ! -e v/evil.@r.sluice ] || fail "recover committed another user's sidecar"
echo "ok: no container from another user's sidecar"

# ... and a closed member of a running process: never read in place of the real member.
printf 'sluice-stage 1\nstate closed\npid %s\nwriter_rank 0\nmember_rank 3\nsize 9\nset_key %s\npath %s\n' \
  "$$" "$PWD/v/ckpt.%r" "$PWD/v/ckpt.3" > vstage/m-2-2.meta
printf 'injected\n' > vstage/m-2-2.data
# The stage folder's link for the member's path (stage_index.h: FNV-1a of the path) names it,
# so that the reader reaches the sidecar and checks whose it is.
link=p-$(python3 -c 'import sys
h = 0xcbf29ce484222325
for b in sys.argv[1].encode(): h = ((h ^ b) * 0x100000001b3) % 2**64
print("%016x" % h)' "$PWD/v/ckpt.3")
ln -s m-2-2 "vstage/$link"
chown -h "$ATTACKER:$(id -g "$ATTACKER")" vstage/m-2-2.meta vstage/m-2-2.data "vstage/$link"
got=$(as "$VICTIM" env SLUICE_STAGE_DIR="$PWD/vstage" SLUICE_CAPTURE="$PWD/v/ckpt.%r" LD_PRELOAD="$SLUICE_LIB" \
  cat v/ckpt.3 2> cat.err || true)
[ "$got" != injected ] || fail "the victim's restart read another user's staged bytes"
expect_contains "the foreign sidecar is ignored with a warning" "it belongs to uid $AUID, not to you" "$(cat cat.err)"

# 3. The folder that sluice creates: 0700, and staged data 0600 whatever the program asked.
as "$VICTIM" env SLUICE_CAPTURE="$PWD/v/ckpt.%r" LD_PRELOAD="$SLUICE_LIB" bash -c \
  "umask 000; exec 3> v/ckpt.1; echo hello >&3; stat -c '%a %U' $stage $stage/*.data > v/modes.out" \
  || fail "the victim's own run failed"
expect_eq "stage folder and staged data are private" "700 $VICTIM
600 $VICTIM" "$(cat v/modes.out)"

# 4. The claims folder made first by the attacker, with a link to the victim's files named as
# the folder of a finished job: the victim's next MPI job must delete nothing through it.
sec_dir v/data "$VICTIM"
as "$VICTIM" touch v/data/rank.0 v/data/rank.1
as "$ATTACKER" mkdir -m 777 "$tmp/sluice-$VUID" "$tmp/sluice-$VUID/claims"
as "$ATTACKER" ln -s "$PWD/v/data" "$tmp/sluice-$VUID/claims/old@999999-1"
as "$VICTIM" env SLUICE_CAPTURE="$PWD/v/none.%r" timeout 60 "$MPIEXEC" -n 2 env LD_PRELOAD="$SLUICE_LIB" \
  "$SLUICE_APPS_DIR/mpi_ring" > ring.out 2> ring.err || fail "the MPI job failed: $(tail -3 ring.err)"
expect_eq "the victim's rank.* files are still there" "rank.0 rank.1" "$(ls v/data | tr '\n' ' ' | sed 's/ $//')"
expect_contains "the claims folder is refused, saying whose it is" "belongs to uid $AUID" "$(cat ring.err)"
