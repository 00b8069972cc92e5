# SPDX-License-Identifier: MIT
# An unmodified MPI program under real mpiexec (3 and 4 ranks) with SLUICE_TRACE_DIR and
# SLUICE_BACKTRACE: same stdout and exit code as without sluice, one file per rank, marks from
# every rank, and call sites that symbolize to the program's own functions.
TRACE=$SLUICE_BIN_DIR/sluice-trace
APP=$SLUICE_APPS_DIR/mpi_trace_hello

for n in 3 4; do
  set +e
  plain=$(mpirun "$n" "$APP"); plain_rc=$?
  traced=$(run_dist "$n" SLUICE_TRACE_DIR="$PWD/t$n" SLUICE_BACKTRACE=3 "$APP"); traced_rc=$?
  set -e
  expect_eq "mpi -n $n: stdout unchanged" "$plain" "$traced"
  expect_eq "mpi -n $n: exit code unchanged" "$plain_rc" "$traced_rc"
  expect_eq "mpi -n $n: one file per rank" "$n" "$(ls t$n/*.sluicetrace | wc -l)"
  summary=$("$TRACE" summary "t$n")
  echo "$summary"
  expect_contains "mpi -n $n: all ranks" "$n files, $n ranks (launcher size $n)" "$summary"
  expect_eq "mpi -n $n: 10 marks per rank" "$((10 * n))" "$(echo "$summary" | awk '$1 == "total" && $2 == "MARK" {print $3}')"
  expect_contains "mpi -n $n: call sites" "Top call sites" "$summary"
  expect_contains "mpi -n $n: symbolized to the program" "compute_phase" "$summary"
  expect_contains "mpi -n $n: symbolized to the program" "exchange_phase" "$summary"
  expect_contains "mpi -n $n: seen on every rank" "$n ranks" "$(echo "$summary" | grep -A1 '^#1 ')"
done
# Without addr2line: module+offset.
expect_contains "module+offset form" "mpi_trace_hello+0x" "$("$TRACE" summary --no-symbols t3)"

# Chrome trace-event JSON (Perfetto; `chrome` is the old name of `perfetto`): valid JSON, one
# named process per rank, every event of the dump present, ranks aligned on one time axis.
"$TRACE" chrome -o t3.json t3
/usr/bin/python3 - "$("$TRACE" dump t3 | wc -l)" <<'PYEOF'
import json, sys
d = json.load(open("t3.json"))
ev = d["traceEvents"]
names = sorted(e["args"]["name"] for e in ev if e.get("name") == "process_name")
assert names == ["rank 0", "rank 1", "rank 2"], names
real = [e for e in ev if e["ph"] in ("X", "i")]
assert len(real) == int(sys.argv[1]), (len(real), sys.argv[1])
marks = [e for e in real if e["name"] == "MARK"]
assert len(marks) == 30 and {m["args"]["label"] for m in marks} == {"compute", "allreduce"}
assert min(e["ts"] for e in real) >= 0
print("ok: chrome export")
PYEOF

# Large jobs: --compact prints totals and the spread across ranks instead of a row per rank.
compact=$("$TRACE" summary --compact --no-symbols t4)
expect_contains "compact: spread" "spread across 4 ranks" "$compact"
expect_eq "compact: MARK on 4 ranks, 10 each" "4 10 10" "$(echo "$compact" | awk '$1 == "MARK" && NF == 6 {print $2, $3, $5}')"
expect_eq "compact: no per-rank rows" "" "$(echo "$compact" | awk '$1 ~ /^[0-9]+$/ && $2 == "MARK"')"
expect_contains "compact: MPI share spread" "mpi    share across ranks: min" "$compact"
