# SPDX-License-Identifier: MIT
# `sluice-trace perfetto` on real runs under mpiexec: a two-phase checkpoint on 3 ranks into a
# folder whose name is not UTF-8, and distributed OpenCL on 4 ranks. The file must be strict
# UTF-8 JSON with one process per rank, every slice nested on its track, flow arrows whose two
# ends are slices of their tracks (messages from a send to its receive, DAG dependencies),
# threads named by role, device work on device tracks, argument keys that are names with named
# values, and the OpenCL calls MPI's hwloc makes inside MPI_Init marked as such.
TRACE=$SLUICE_BIN_DIR/sluice-trace
CHECK=$(dirname "$BASH_SOURCE")/trace_check_perfetto.py
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE POCL_MAX_PTHREAD_COUNT=1

# 1. Checkpoint, 3 ranks, two aggregators: the commit runs on the progress and write-behind
# threads while COMMIT_DURABLE spans it. The folder's name holds the byte 0xff.
d=$PWD/$'ckpt\xff'
mkdir -p "$d"
SLUICE_CB_WRITE=enable SLUICE_CB_NODES=2 SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_TRACE_DIR=$PWD/ck SLUICE_BACKTRACE=4 \
  run_dist 3 "$SLUICE_APPS_DIR/ckpt_sized" write "$d" 200001 333333 150000 \
  || fail "checkpoint job failed"
"$TRACE" perfetto ck.json ck || fail "perfetto export failed"
r=$(/usr/bin/python3 "$CHECK" ck.json 3) || fail "ck.json: $r"
echo "$r"
/usr/bin/python3 - ck.json <<'PYEOF' || fail "checkpoint timeline content"
import json, sys
ev = json.load(open(sys.argv[1], encoding="utf-8"))["traceEvents"]
threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
for r in range(3):
    roles = {n for (p, _), n in threads.items() if p == r + 1}
    assert {"main", "progress"} <= roles, (r, roles)
assert "write-behind" in threads.values(), threads
# COMMIT_DURABLE overlaps the progress thread's spells: it has its own track, never theirs.
dur = [e for e in ev if e.get("name") == "COMMIT_DURABLE"]
assert dur and all(threads[(e["pid"], e["tid"])].startswith("checkpoint commits") for e in dur), dur
# The folder's 0xff byte is shown, escaped, in the paths.
assert any("ckpt\\xff/ckpt.1" in str(e.get("args", {}).get("path", "")) for e in ev), "no escaped path"
# hwloc's OpenCL probing inside MPI_Init (MPI initialized by sluice for the commit).
calls = [e for e in ev if e.get("cat") == "opencl" and "function" in e.get("args", {})]
assert calls, "no OpenCL calls recorded (MPICH's hwloc did not probe OpenCL?)"
assert all(e["args"].get("origin", "").startswith("MPI_Init") for e in calls), calls
assert not any(":" in k for e in ev for k in e.get("args", {})), "an argument key is not a name"
counters = {e["name"] for e in ev if e.get("ph") == "C"}
assert {"staged checkpoint bytes", "shuffle buffer peak bytes"} <= counters, counters
print("ok: roles, commit track, non-UTF-8 path, hwloc calls marked, counters")
PYEOF
expect_contains "the byte is in the raw path" $'ckpt\xff' "$("$TRACE" dump ck | grep -a COMMIT_MEMBER | head -1)"
cmp <("$TRACE" chrome -o - ck) ck.json || fail "chrome (the old name) differs from perfetto"
echo "ok: chrome is an alias"

# Without call sites, the hwloc calls are still told apart (the run of queries ending at MPI_INIT).
SLUICE_CB_WRITE=enable SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_TRACE_DIR=$PWD/ck2 \
  run_dist 3 "$SLUICE_APPS_DIR/ckpt_sized" write "$d" 1000 2000 3000 \
  || fail "second checkpoint job failed"
"$TRACE" perfetto ck2.json ck2
/usr/bin/python3 "$CHECK" ck2.json 3 >/dev/null || fail "ck2.json invalid"
n=$(grep -c '"origin":"MPI_Init: a query in the run that ends at MPI_INIT' ck2.json || true)
[ "$n" -ge 3 ] || fail "hwloc calls without call sites not marked ($n)"
echo "ok: $n hwloc calls marked without call sites"

# 2. Distributed OpenCL on 4 ranks: a buffer moves rank 1 -> 2 -> 3 (cl_dist_coherence).
POCL_DEVICES=pthread timeout 120 "$MPIEXEC" -n 4 env SLUICE_OPENCL=distributed SLUICE_TRACE_DIR="$PWD/cl" \
  LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/cl_dist_coherence" >cl.out 2>&1 || fail "OpenCL job failed: $(cat cl.out)"
"$TRACE" perfetto cl.json cl || fail "perfetto export failed"
r=$(/usr/bin/python3 "$CHECK" cl.json 4) || fail "cl.json: $r"
echo "$r"
/usr/bin/python3 - cl.json <<'PYEOF' || fail "OpenCL timeline content"
import collections, json, sys
doc = json.load(open(sys.argv[1], encoding="utf-8"))
ev, meta = doc["traceEvents"], doc["otherData"]
threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
flows = collections.defaultdict(dict)
for e in ev:
    if e.get("ph") in ("s", "f"):
        flows[e["id"]][e["ph"]] = e
msgs = [f for f in flows.values() if f["s"]["name"] == "OpenCL data"]
pairs = sorted((f["s"]["pid"] - 1, f["f"]["pid"] - 1) for f in msgs)
assert (1, 2) in pairs and len(pairs) >= 2, pairs  # the buffer's moves, from rank to rank
dag = [f for f in flows.values() if f["s"]["name"] == "DAG dependency"]
assert dag, "no DAG arrows"
# Each DAG arrow goes from the end of the dependency's node (its last ns) to the start of the
# node, and the node did not start before its dependency ended (device times on rank 0's clock:
# PoCL stamps commands with CLOCK_MONOTONIC_RAW, once drawn ~300 ms early).
nodes = [e for e in ev if e.get("ph") == "X" and e["name"] == "CL_DAG_NODE"]
unc = meta["clock_uncertainty_ns"] / 1000.0 + 0.0005  # us: other ranks' device times, on rank 0's clock
def node_at(p, start):
    hit = [n for n in nodes if n["pid"] == p["pid"] and n["tid"] == p["tid"] and
           abs((n["ts"] + n["dur"] - 0.001 if start else n["ts"]) - p["ts"]) < 0.0005]
    assert hit, ("no node slice at the arrow's end", p)
    return hit[0]
for f in dag:
    a, b = node_at(f["s"], True), node_at(f["f"], False)
    assert b["ts"] >= a["ts"] + a["dur"] - unc, ("node starts before its dependency ended", a, b)
execs = [e for e in ev if e.get("name") == "CL_DEVICE_EXEC"]
assert execs and all(threads[(e["pid"], e["tid"])].startswith("device ") for e in execs), execs
tr = [e for e in ev if e.get("name") == "CL_TRANSFER"]
assert tr and all(e["args"]["direction"] in ("h2d", "d2h", "d2d") for e in tr), tr
assert all(threads[(e["pid"], e["tid"])].endswith(": transfers") for e in tr)
assert "dist scheduler" in threads.values() and "main, OpenCL server" in threads.values(), threads
print("ok: %d message arrows %s, %d DAG arrows from the end of a node to the start of a later one, device and"
      " transfer tracks" % (len(pairs), pairs, len(dag)))
PYEOF

# 3. Clock alignment: every rank measured its clock against rank 0's at start and exit
# (CLOCK_SYNC). On one host all ranks share one CLOCK_MONOTONIC, so the true offset is 0 and each
# measured offset must lie within its stated uncertainty (half the best round trip); and the
# timeline placed by those samples (--clock sync, drift-corrected) must agree with the exact one
# (--clock wall) within twice the uncertainty the file states (the origin, the earliest start,
# moves by as much as any event).
for t in ck:3 cl:4; do
  dir=${t%:*} n=${t#*:}
  "$TRACE" perfetto --clock sync "$dir-sync.json" "$dir" || fail "perfetto --clock sync failed"
  "$TRACE" perfetto --clock wall "$dir-wall.json" "$dir" || fail "perfetto --clock wall failed"
  /usr/bin/python3 - "$dir-sync.json" "$dir-wall.json" "$n" <<'PYEOF' || fail "$dir: clock alignment"
import json, sys
sync, wall, n = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
meta = sync["otherData"]
samples = {s["rank"]: s for s in meta["clock_sync"]}
assert sorted(samples) == list(range(1, n)), meta["clock_sync"]
for s in samples.values():
    assert s["used"] and 0 < s["uncertainty_ns"] < 1e9, s
    assert abs(s["offset_start_ns"]) <= s["uncertainty_ns"] and abs(s["offset_exit_ns"]) <= s["uncertainty_ns"], s
unc = meta["clock_uncertainty_ns"] / 1000.0 + 0.001  # microseconds
assert unc * 1000 >= max(s["uncertainty_ns"] for s in samples.values())
key = lambda e: (e["pid"], e["name"], json.dumps(e["args"], sort_keys=True))
a = sorted((key(e), e["ts"]) for e in sync["traceEvents"] if e.get("ph") == "X")
b = sorted((key(e), e["ts"]) for e in wall["traceEvents"] if e.get("ph") == "X")
assert len(a) == len(b) and a
# Same events in both; their times differ by the origin shift plus at most the uncertainty.
worst = 0.0
by = {}
for k, ts in b:
    by.setdefault(k, []).append(ts)
for k, ts in a:
    other = min(by[k], key=lambda x: abs(x - ts))
    d = ts - other
    worst = max(worst, abs(d))
assert worst <= 2 * unc, (worst, unc)
print("ok: %d ranks' offsets within their uncertainty (<= %.1f us); sync and wall timelines agree within %.1f us"
      % (n - 1, unc, worst))
PYEOF
done

# 4. A trace larger than --max-events is split by time into files that each pass the checks,
# hold every event once between them, and keep every arrow whose two ends fall in one file
# (the others are counted in the metadata).
"$TRACE" perfetto --max-events 40 split.json cl 2>split.err || fail "split export failed"
parts=$(ls split-*.json | wc -l)
[ "$parts" -ge 3 ] || fail "expected 3 or more parts, got $parts"
total=0 flows=0
for f in split-*.json; do
  r=$(/usr/bin/python3 "$CHECK" "$f" 4) || fail "$f: $r"
  total=$((total + $(echo "$r" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')))
  flows=$((flows + $(echo "$r" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["flows"])')))
done
whole=$(/usr/bin/python3 "$CHECK" cl.json 4)
expect_eq "split: every event once" "$(echo "$whole" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')" "$total"
across=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["otherData"]["flows_across_parts"])' split-1.json)
expect_eq "split: arrows kept or counted" "$(echo "$whole" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["flows"])')" "$((flows + across))"
expect_contains "split: the parts are named" "split-1.json (part 1 of $parts)" "$(cat split.err)"
