# SPDX-License-Identifier: MIT
# The statistics stream under real mpiexec with unmodified coreutils: `mpiexec -n 3 cat` and
# `ls` with SLUICE_TRACE_DIR set print and exit exactly as without sluice, and leave exactly one
# trace file per rank that `sluice-trace summary` reads. Odd and even rank counts.
TRACE=$SLUICE_BIN_DIR/sluice-trace
printf 'alpha\nbeta\ngamma\n' > input.txt
mkdir -p listing && touch listing/a listing/b

for n in 3 2; do
  # cat: output and exit code identical; the folder (nested, missing) is created by the ranks.
  set +e
  plain=$(mpirun "$n" cat input.txt 2>/dev/null); plain_rc=$?
  traced=$(run_dist "$n" SLUICE_TRACE_DIR="$PWD/cat$n/deep/dir" cat input.txt); traced_rc=$?
  set -e
  expect_eq "cat -n $n: stdout unchanged" "$plain" "$traced"
  expect_eq "cat -n $n: exit code unchanged" "$plain_rc" "$traced_rc"
  files=$(ls "cat$n/deep/dir" | grep -c '\.sluicetrace$' || true)
  expect_eq "cat -n $n: one trace file per rank" "$n" "$files"
  for r in $(seq 0 $((n - 1))); do
    [ "$(ls cat$n/deep/dir/rank-$r.pid-*.sluicetrace | wc -l)" = 1 ] || fail "rank $r has no single file"
  done
  [ -z "$(ls cat$n/deep/dir | grep '\.tmp$' || true)" ] || fail "temporary files left behind"

  summary=$("$TRACE" summary "cat$n/deep/dir")
  echo "$summary"
  expect_contains "summary: all ranks" "$n files, $n ranks (launcher size $n)" "$summary"
  expect_contains "summary: program" "/usr/bin/cat" "$summary"
  expect_eq "summary: a PROCESS_START per rank" "$n" \
    "$(echo "$summary" | awk '$2 == "PROCESS_START" && $1 ~ /^[0-9]+$/ && $3 == 1' | wc -l)"
  expect_eq "summary: total PROCESS_EXIT" "$n" "$(echo "$summary" | awk '$1 == "total" && $2 == "PROCESS_EXIT" {print $3}')"
  expect_eq "summary: exit status 0 for every rank" "$n" \
    "$(echo "$summary" | awk '$1 ~ /^[0-9]+$/ && $6 == "0" && $8 == "/usr/bin/cat"' | wc -l)"
  expect_contains "summary: time decomposition" "Time decomposition" "$summary"
  expect_contains "summary: nothing dropped" "none: every event was kept" "$summary"
done

# ls, and a failing command: exit code and output still identical, files still written.
set +e
plain=$(mpirun 3 ls listing); plain_rc=$?
traced=$(run_dist 3 SLUICE_TRACE_DIR="$PWD/ls" ls listing); traced_rc=$?
set -e
expect_eq "ls: stdout unchanged" "$plain" "$traced"
expect_eq "ls: exit code unchanged" "$plain_rc" "$traced_rc"
expect_eq "ls: three files" 3 "$(ls ls/*.sluicetrace | wc -l)"

set +e
mpirun 3 cat no-such-file >/dev/null 2>&1; plain_rc=$?
run_dist 3 SLUICE_TRACE_DIR="$PWD/fail" cat no-such-file >/dev/null 2>&1; traced_rc=$?
set -e
expect_eq "failing cat: exit code unchanged" "$plain_rc" "$traced_rc"
expect_eq "failing cat: three files" 3 "$(ls fail/*.sluicetrace | wc -l)"
summary=$("$TRACE" summary fail)
expect_eq "failing cat: exit status 1 recorded per rank" 3 "$(echo "$summary" | awk '$1 ~ /^[0-9]+$/ && $6 == "1" && $8 == "/usr/bin/cat"' | wc -l)"

# The tool: clear usage errors and a non-zero exit on unreadable input.
set +e
"$TRACE" summary 2>err.txt; rc=$?
expect_eq "summary without a folder: usage error" 2 "$rc"
"$TRACE" summary "$PWD/nowhere" 2>err.txt; rc=$?
expect_eq "missing folder: exit 1" 1 "$rc"
expect_contains "missing folder named" "nowhere" "$(cat err.txt)"
mkdir -p bad && head -c 300 "$(ls cat3/deep/dir/*.sluicetrace | head -1)" > bad/rank-0.pid-1.sluicetrace
"$TRACE" summary bad 2>err.txt; rc=$?
expect_eq "truncated file: exit 1" 1 "$rc"
expect_contains "truncated file: says so" "truncated" "$(cat err.txt)"
"$TRACE" frobnicate x 2>err.txt; rc=$?
expect_eq "unknown command: exit 2" 2 "$rc"
set -e
grep -q "summary" <<<"$("$TRACE" --help)" || fail "--help lists summary"

# A relative SLUICE_TRACE_DIR means the folder the process started in, even if it chdirs.
out=$(run_sluice SLUICE_TRACE_DIR=rel bash -c 'cd / && echo moved')
expect_eq "chdir: output" "moved" "$out"
expect_eq "chdir: file under the starting folder" 1 "$(ls rel/*.sluicetrace | wc -l)"

# A folder that cannot be created: the program runs unchanged; sluice says why, naming it.
touch plainfile
set +e
out=$(run_sluice SLUICE_TRACE_DIR="$PWD/plainfile/sub" /usr/bin/python3 -c 'print("still runs")' 2>err.txt); rc=$?
set -e
expect_eq "unwritable folder: output" "still runs" "$out"
expect_eq "unwritable folder: exit code" 0 "$rc"
expect_contains "unwritable folder: named at start" "SLUICE_TRACE_DIR=$PWD/plainfile/sub: cannot create it: Not a directory" "$(cat err.txt)"
expect_contains "unwritable folder: named at exit" "cannot write trace file $PWD/plainfile/sub/rank-0.pid-" "$(cat err.txt)"
