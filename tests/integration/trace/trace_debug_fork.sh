# SPDX-License-Identifier: MIT
# The debug stream (SLUICE_DEBUG) and processes that fork and run threads, with unmodified
# programs: a forked child writes its own file with its own events; threads show up per thread;
# sluice_trace_mark() (public API, reached here through ctypes) lands in the trace.
TRACE=$SLUICE_BIN_DIR/sluice-trace
PY=/usr/bin/python3

# stderr: one line per event as it happens; stdout untouched.
out=$(run_sluice SLUICE_DEBUG=stderr /usr/bin/python3 -c 'print("out")' 2>err.txt)
expect_eq "debug: stdout unchanged" "out" "$out"
expect_contains "debug: PROCESS_START line" "PROCESS_START pid=" "$(cat err.txt)"
expect_contains "debug: PROCESS_EXIT line" "PROCESS_EXIT exit status=0" "$(cat err.txt)"
# `true` keeps stderr open to the end (most coreutils close it at exit: then sluice stays quiet).
run_sluice SLUICE_DEBUG=1 true 2>err.txt
expect_eq "debug: true prints start and exit" 2 "$(grep -c -E 'PROCESS_(START|EXIT)' err.txt)"
expect_contains "debug: prefixed with rank" "sluice[0] +" "$(cat err.txt)"

# A fatal signal with only the debug stream on: the line is printed, the death unchanged.
set +e
run_sluice SLUICE_DEBUG=stderr bash -c 'kill -BUS $$' 2>err.txt; rc=$?
set -e
expect_eq "debug: SIGBUS still kills" 135 "$rc"
expect_contains "debug: SIGNAL_FATAL line" "SIGNAL_FATAL signal number=7" "$(cat err.txt)"

# Off spellings print nothing.
run_sluice SLUICE_DEBUG=off sh -c 'true' 2>err.txt
expect_eq "debug off: no stderr" "" "$(cat err.txt)"

# A file per rank under mpiexec (%r), with the launcher's size.
run_dist 3 SLUICE_DEBUG="$PWD/debug.%r.log" cat /dev/null
for r in 0 1 2; do
  expect_contains "debug file rank $r" "sluice[$r] " "$(cat debug.$r.log)"
  expect_contains "debug file rank $r: size" "launcher size=3" "$(cat debug.$r.log)"
done

# Fork + threads + marks in python.
cat > forker.py <<'PYEOF'
import ctypes, os, sys, threading
mark = ctypes.CDLL(None).sluice_trace_mark
mark.argtypes = [ctypes.c_char_p]
mark(b"parent-before-fork")
pid = os.fork()
if pid == 0:
    mark(b"child-only")
    sys.exit(0)
os.waitpid(pid, 0)
threads = [threading.Thread(target=lambda i=i: [mark(b"thread-%d" % i) for _ in range(100)]) for i in range(3)]
for t in threads: t.start()
for t in threads: t.join()
print("done")
PYEOF
out=$(run_sluice SLUICE_TRACE_DIR="$PWD/fork" SLUICE_DEBUG="$PWD/fork.%p.log" $PY forker.py)
expect_eq "fork: stdout unchanged" "done" "$out"
expect_eq "fork: parent and child files" 2 "$(ls fork/*.sluicetrace | wc -l)"
expect_eq "fork: parent and child debug files (%p)" 2 "$(ls fork.*.log | wc -l)"
dump=$("$TRACE" dump fork)
head -5 <<<"$dump" # (not a pipe from echo: under pipefail, head leaving early fails the test by SIGPIPE)
child_pid=$(echo "$dump" | awk '/FORK_CHILD/ {print $4}')
[ -n "$child_pid" ] || fail "no FORK_CHILD event"
child=$(echo "$dump" | awk -v p="$child_pid" '$4 == p')
parent=$(echo "$dump" | awk -v p="$child_pid" '$4 != p')
expect_contains "fork: child's own mark" 'label="child-only"' "$child"
[[ "$child" != *parent-before-fork* ]] || fail "the child's file repeats the parent's events"
[[ "$parent" != *child-only* ]] || fail "the parent's file holds the child's events"
expect_eq "fork: 300 thread marks in the parent" 300 "$(echo "$parent" | grep -c 'label="thread-')"
expect_eq "fork: marks from 3 extra threads" 3 "$(echo "$parent" | grep 'label="thread-' | awk '{print $6}' | sort -u | wc -l)"
summary=$("$TRACE" summary fork)
expect_contains "summary flags the fork child" "(fork child)" "$summary"
expect_eq "summary counts 302 marks" 302 "$(echo "$summary" | awk '$1 == "total" && $2 == "MARK" {print $3}')"
