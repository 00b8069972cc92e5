# SPDX-License-Identifier: MIT
# A process killed by a fatal signal still leaves its trace file (written from the handler with
# async-signal-safe calls), and still dies of the same signal, with the same exit status.
TRACE=$SLUICE_BIN_DIR/sluice-trace
PY=/usr/bin/python3

set +e
bash -c 'kill -SEGV $$'; plain_rc=$?
run_sluice SLUICE_TRACE_DIR="$PWD/segv" bash -c 'kill -SEGV $$'; traced_rc=$?
set -e
expect_eq "SIGSEGV: same exit status" "$plain_rc" "$traced_rc"
expect_eq "SIGSEGV: one file" 1 "$(ls segv/*.sluicetrace | wc -l)"
dump=$("$TRACE" dump segv)
expect_contains "SIGSEGV: recorded" "SIGNAL_FATAL signal number=11" "$dump"
expect_contains "SIGSEGV: summary warns" "died on signal 11" "$("$TRACE" summary segv)"

# A real fault (not a kill): python dereferences NULL through ctypes.
set +e
$PY -c 'import ctypes; ctypes.string_at(0)' 2>/dev/null; plain_rc=$?
run_sluice SLUICE_TRACE_DIR="$PWD/fault" $PY -c 'import ctypes; ctypes.string_at(0)' 2>/dev/null; traced_rc=$?
set -e
expect_eq "NULL dereference: same exit status" "$plain_rc" "$traced_rc"
dump=$("$TRACE" dump fault)
expect_contains "NULL dereference: recorded with the fault address" "SIGNAL_FATAL signal number=11, fault address=0" "$dump"

# abort(): SIGABRT, same status, file written.
set +e
$PY -c 'import os; os.abort()' >/dev/null 2>&1; plain_rc=$?
run_sluice SLUICE_TRACE_DIR="$PWD/abrt" $PY -c 'import os; os.abort()' >/dev/null 2>&1; traced_rc=$?
set -e
expect_eq "abort: same exit status" "$plain_rc" "$traced_rc"
expect_eq "abort: SIGNAL_FATAL 6" 1 "$("$TRACE" dump abrt | grep -c 'SIGNAL_FATAL signal number=6')"

# A program that ignores a signal keeps ignoring it with sluice loaded.
out=$(run_sluice SLUICE_TRACE_DIR="$PWD/ign" bash -c 'trap "" ABRT; kill -ABRT $$; echo survived')
expect_eq "ignored SIGABRT stays ignored" "survived" "$out"
