# SPDX-License-Identifier: MIT
# fsync on a captured file returns only once the member is durable in a committed container:
# a process that fsyncs ckpt.0 and is then killed (SIGKILL, no exit handlers) leaves ckpt.0 in
# the container, readable without sluice by `sluice-ckpt extract`; ckpt.1, written but never
# closed nor synced, is not there but stays staged: `sluice-ckpt recover` keeps it aside (it
# may be torn) and names it, `sluice-ckpt recover --take-open` commits it.

export SLUICE_STAGE_DIR="$SLUICE_TEST_STAGE"
export SLUICE_CAPTURE="$PWD/run/ckpt.%r"
mkdir run plain
"$SLUICE_APPS_DIR/ckpt_fsync_crash" "$PWD/plain" >/dev/null 2>&1 || true   # reference bytes

set +e
out=$(run_sluice "$SLUICE_APPS_DIR/ckpt_fsync_crash" "$PWD/run")
rc=$?
set -e
expect_eq "the writer died by SIGKILL" 137 "$rc"
expect_eq "it got past fsync" "fsync done, dying" "$out"
expect_eq "the folder holds the container only" "ckpt.@r.sluice" "$(cd run && echo *)"

ckpt="$SLUICE_BIN_DIR/sluice-ckpt"
"$ckpt" extract -o x1 run/ckpt.@r.sluice >/dev/null
cmp plain/ckpt.0 x1/ckpt.0 || fail "the fsync'ed member is not intact in the container"
echo "ok: fsync'ed member committed before the crash"
[ ! -e x1/ckpt.1 ] || fail "the unsynced member should not be committed yet"
echo "ok: unsynced member not committed"
[ -n "$(find "$SLUICE_STAGE_DIR" -name 'm-*.data' | head -1)" ] || fail "the unsynced member was not kept staged"
echo "ok: unsynced member kept staged"

"$ckpt" recover --stage "$SLUICE_STAGE_DIR" 2>recover.out
expect_contains "recover names the open copy" "run/ckpt.1: kept aside" "$(cat recover.out)"
[ ! -e run/ckpt.@r.sluice ] || { "$ckpt" extract -o x3 run/ckpt.@r.sluice >/dev/null; [ ! -e x3/ckpt.1 ]; } ||
  fail "recover took the open ckpt.1 without --take-open"
echo "ok: the open member was kept aside"
"$ckpt" recover --take-open --stage "$SLUICE_STAGE_DIR" >/dev/null
"$ckpt" extract -f -o x2 run/ckpt.@r.sluice >/dev/null
cmp plain/ckpt.0 x2/ckpt.0 || fail "recover lost ckpt.0"
cmp plain/ckpt.1 x2/ckpt.1 || fail "recover --take-open did not commit the staged ckpt.1"
echo "ok: recover committed the member the crash left staged"
