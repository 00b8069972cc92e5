# SPDX-License-Identifier: MIT
# The SLUICE_DEBUG file in a shared folder (sticky, world-writable, like /tmp), against
# another local user (docs/SECURITY.md), with two users made for the test: a file the other
# user created first is never appended to (they would read the victim's debug stream), a link
# they planted is never followed (it would append to the victim's own private file); one
# warning line says why and the program runs as without the stream. The victim's own file is
# created 0600 and written.
source "$SOURCE_DIR/tests/integration/security/security_lib.bash"
sec_users
sec_dir v "$VICTIM"
sec_dir shared root 1777
printf "the victim's own data\n" > v/secret
chown "$VICTIM" v/secret
chmod 600 v/secret
export SLUICE_STAGE_DIR=$PWD/v/stage
as "$ATTACKER" sh -c "umask 000; echo planted > shared/dbg.log"
as "$ATTACKER" ln -s "$PWD/v/secret" shared/link.log

run_victim() { # run_victim DEBUG-PATH: copies a checkpoint with the debug stream on
  as "$VICTIM" env SLUICE_DEBUG="$1" SLUICE_CAPTURE="$PWD/v/ckpt.%r" LD_PRELOAD="$SLUICE_LIB" \
    sh -c 'echo data > v/ckpt.0 && cat v/ckpt.0'
}
out=$(run_victim "$PWD/shared/dbg.log" 2> err1) || fail "the program failed: $(cat err1)"
expect_eq "the program's output is unchanged" "data" "$out"
expect_eq "the other user's file was not appended to" "planted" "$(cat shared/dbg.log)"
expect_contains "one warning says the file is refused" "SLUICE_DEBUG=$PWD/shared/dbg.log: cannot open" "$(cat err1)"

out=$(run_victim "$PWD/shared/link.log" 2> err2) || fail "the program failed: $(cat err2)"
expect_eq "the victim's private file is intact" "the victim's own data" "$(cat v/secret)"
expect_contains "one warning says the link is refused" "SLUICE_DEBUG=$PWD/shared/link.log: cannot open" "$(cat err2)"

run_victim "$PWD/shared/mine.%p.log" > /dev/null 2> err3 || fail "the program failed: $(cat err3)"
f=$(ls shared/mine.*.log | sed -n 1p)
[ -s "$f" ] || fail "the victim's own debug file is empty"
expect_eq "the victim's debug file is private" "600 $VICTIM" "$(stat -c '%a %U' "$f")"

# The trace file (SLUICE_TRACE_DIR) in the shared folder: links planted at the temporary names
# the next process ids would use (rank-0.pid-<P>.sluicetrace.tmp) are never written through.
last=$(cat /proc/sys/kernel/ns_last_pid)
as "$ATTACKER" python3 -c '
import os, sys
for p in range(int(sys.argv[1]) + 1, int(sys.argv[1]) + 2001):
    os.symlink(sys.argv[2], "%s/rank-0.pid-%d.sluicetrace.tmp" % (sys.argv[3], p))
' "$last" "$PWD/v/secret" "$PWD/shared"
as "$VICTIM" env SLUICE_TRACE_DIR="$PWD/shared" LD_PRELOAD="$SLUICE_LIB" cat v/secret > /dev/null 2> err4 \
  || fail "the traced program failed: $(cat err4)"
expect_eq "trace: the victim's private file is intact" "the victim's own data" "$(cat v/secret)"
f=$(ls shared/rank-0.pid-*.sluicetrace 2> /dev/null | sed -n 1p)
[ -n "$f" ] && [ "${f##*pid-}" != "" ] || fail "the victim's trace file was not written: $(cat err4)"
p=${f##*pid-}
p=${p%.sluicetrace}
[ "$p" -le $((last + 2000)) ] || echo "note: the traced process got pid $p, past the planted links"
echo "ok: the trace file $f was written beside the planted links"
