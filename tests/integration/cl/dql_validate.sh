# SPDX-License-Identifier: MIT
# SLUICE_DEVICES is checked when libsluice loads: a query that does not parse stops the program
# before main with exit 2, one line naming the column, and nothing on stdout; a good query
# leaves the program's output and exit status alone, also under mpiexec with odd and even rank
# counts.

# bad_query QUERY EXPECTED_MESSAGE: the program must not run, stdout stays empty.
bad_query() {
  local rc=0
  SLUICE_DEVICES="$1" run_sluice /bin/echo should-not-run >out.txt 2>err.txt || rc=$?
  expect_eq "exit status for [$1]" 2 "$rc"
  expect_eq "stdout for [$1]" "" "$(cat out.txt)"
  expect_eq "one line on stderr for [$1]" 1 "$(wc -l <err.txt)"
  expect_contains "message for [$1]" "SLUICE_DEVICES: $2" "$(cat err.txt)"
}

bad_query 'SELECT TOP x' "column 12: expected a number after TOP, found 'x'"
bad_query 'SELECT ALL WHERE type gpu' "column 23: expected a comparison operator"
bad_query 'SELECT ALL WHERE colour = red' "column 18: unknown attribute 'colour' (did you mean 'clock'?); known attributes: type, vendor, name"
bad_query 'SELECT ALL WHERE name < 3' "column 23: type mismatch: 'name' is text"
bad_query "SELECT ALL WHERE name = 'unterminated" "column 25: unterminated string"
bad_query 'select all where (((type = gpu)' "column 32: expected AND, OR or ')' to close the '(' of column 19"

# The exact case of the issue: /bin/true with a bad query.
rc=0
out=$(run_sluice SLUICE_DEVICES='SELECT TOP x' /bin/true 2>err.txt) || rc=$?
expect_eq "/bin/true with a bad query exits" 2 "$rc"
expect_eq "/bin/true with a bad query prints nothing on stdout" "" "$out"
expect_contains "/bin/true message has the column" "column 12" "$(cat err.txt)"

# stderr closed: still exit 2, no crash, nothing on stdout.
rc=0
out=$(run_sluice SLUICE_DEVICES='SELECT TOP x' /bin/true 2>&-) || rc=$?
expect_eq "bad query with stderr closed exits" 2 "$rc"
expect_eq "bad query with stderr closed prints nothing" "" "$out"

# Good queries: the program runs and its output and status are unchanged.
for q in 'SELECT ALL' 'select top 2 from node 0, 1 where type = gpu or name like "basic*" order by clock desc' \
         'SELECT POS 0 WHERE NOT (global_mem < 4G) AND available ORDER BY pos'; do
  expect_eq "output with [$q]" "hello world" "$(SLUICE_DEVICES="$q" run_sluice /bin/echo hello world 2>err.txt)"
  expect_eq "no message with [$q]" "" "$(cat err.txt)"
done
rc=0; SLUICE_DEVICES='SELECT ALL' run_sluice /bin/sh -c 'exit 7' || rc=$?
expect_eq "exit status passes through with a good query" 7 "$rc"
SLUICE_DEVICES='' run_sluice /bin/true || fail "an empty SLUICE_DEVICES (meaning SELECT ALL) must not stop the program"
SLUICE_DEVICES='  ' run_sluice /bin/true || fail "a blank SLUICE_DEVICES (meaning SELECT ALL) must not stop the program"
echo "ok: empty and blank SLUICE_DEVICES run the program"

# Under mpiexec: every rank checks the query; a bad one ends the job with a non-zero status
# and the message, a good one runs every rank.
for n in 2 3; do
  rc=0
  run_dist "$n" SLUICE_DEVICES='SELECT TOP x' /bin/echo rank-ran >out.txt 2>err.txt || rc=$?
  [ "$rc" -ne 0 ] || fail "mpiexec -n $n with a bad query exited 0"
  echo "ok: mpiexec -n $n with a bad query exits $rc"
  # Nothing of the program's; hydra may add its own banner when it ends the job for an aborting
  # rank (both ranks stop on the same value: one's abort can end the other mid-way, docs/FAULTS.md).
  expect_eq "mpiexec -n $n bad query stdout (hydra's banner aside)" "" \
    "$(grep -vE '^(=+|=   .*)$' out.txt | grep -v '^$' || true)"
  expect_contains "mpiexec -n $n bad query message" "SLUICE_DEVICES: column 12: expected a number after TOP" "$(cat err.txt)"
  expect_eq "mpiexec -n $n good query" "$n" \
    "$(run_dist "$n" SLUICE_DEVICES='SELECT ALL WHERE type = cpu' /bin/echo rank-ran | grep -c rank-ran)"
done
