# SPDX-License-Identifier: MIT
# Traces across nodes whose clocks differ (docs/TRACE.md, "One time axis"): 3 nodes with
# `--skew 1000` (node i's CLOCK_MONOTONIC runs i x 1000 s ahead; CLOCK_REALTIME is one clock for
# all, so --clock wall is exact here and the truth to compare with). A checkpoint written with
# capture on (ckpt_sized, uneven members shuffled to one aggregator per node: messages between
# nodes) on 4 ranks placed round robin: ranks 0 and 3 on node0, rank 1 on node1, rank 2 on node2.
#   - `sluice-trace summary` names each rank's host; Perfetto labels each rank with its host and
#     groups the processes by host (sort index: node0's ranks 0 and 3, then node1's, node2's);
#   - each rank's CLOCK_SYNC offsets to rank 0 are the nodes' skew (0, -1000 s, -2000 s) within
#     the uncertainty they state (rank 3: 0); by default the ranks on other hosts than rank 0's are aligned
#     by their samples (used), the one on rank 0's host by its own clock pair (not used);
#   - the default timeline and the one aligned by every rank's samples (--clock sync) agree with
#     the exact one within twice the stated uncertainty, and every message arrow (the shuffle's,
#     between nodes) runs forward in time within it (trace_check_perfetto.py).
# Aligned by CLOCK_MONOTONIC alone, rank 2's events would sit 2000 s away from rank 0's.
source "$SOURCE_DIR/tests/cluster/lib.bash"
tb_up 3 --skew 1000
TRACE=$SLUICE_BIN_DIR/sluice-trace
mkdir "$SHARED/ck"
tb_mpiexec -hosts node0,node1,node2 -n 4 env SLUICE_TRACE_DIR="$SHARED/tr" SLUICE_CAPTURE="$SHARED/ck/ckpt.%r" \
  SLUICE_CB_WRITE=enable SLUICE_STRIPING_UNIT=64K LD_PRELOAD="$SLUICE_LIB" \
  "$SLUICE_APPS_DIR/ckpt_sized" write "$SHARED/ck" 200001 333333 150000 77777 > ck.out 2>&1 || fail "ckpt_sized failed: $(tail -3 ck.out)"
# Each node's CLOCK_MONOTONIC really is ahead by its skew (measured against CLOCK_REALTIME, one
# clock for all nodes, in one process per node).
mono_minus_real() { tb_exec "$1" python3 -c 'import time; print(round(time.monotonic() - time.time()))'; }
d0=$(mono_minus_real 0)
for i in 1 2; do
  d=$(mono_minus_real $i)
  [ $((d - d0 - i * 1000)) -ge -1 ] && [ $((d - d0 - i * 1000)) -le 1 ] || fail "node$i's clock is $((d - d0)) s ahead of node0's"
done
echo "ok: node1 and node2 run 1000 s and 2000 s ahead of node0"

hosts=$("$TRACE" summary "$SHARED/tr" | awk '/^== Processes ==/ {p = 1; next} /^==/ {p = 0} p && $1 ~ /^[0-9]+$/ {print $1 "@" $7}' | sort -u | tr '\n' ' ')
expect_eq "summary: each rank's host" "0@node0 1@node1 2@node2 3@node0 " "$hosts"
# The heatmap's numbers carry each rank's host (its picture groups ranks by node and draws the
# boundaries from them); the picture itself where matplotlib is installed.
"$TRACE" heatmap --csv heat.csv "$SHARED/tr" || fail "heatmap --csv failed"
expect_eq "heatmap: each rank's host" '0@"node0" 1@"node1" 2@"node2" 3@"node0" ' \
  "$(awk -F, '$1 == "rank" {printf "%s@%s ", $3, $9}' heat.csv)"
if "$TRACE" heatmap heat.png "$SHARED/tr" > heat.err 2>&1; then
  [ -s heat.png ] || fail "heatmap: no picture"
else
  expect_contains "heatmap without matplotlib" "matplotlib" "$(cat heat.err)"
fi

"$TRACE" perfetto auto.json "$SHARED/tr" || fail "perfetto failed"
"$TRACE" perfetto --clock sync sync.json "$SHARED/tr" || fail "perfetto --clock sync failed"
"$TRACE" perfetto --clock wall wall.json "$SHARED/tr" || fail "perfetto --clock wall failed"
for f in auto sync; do
  /usr/bin/python3 "$SOURCE_DIR/tests/integration/trace/trace_check_perfetto.py" $f.json 4 > check.out \
    || fail "the aligned trace ($f): $(cat check.out)"
  flows=$(/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["flows"])' < check.out)
  [ "$flows" -gt 0 ] || fail "$f: no message arrow to check"
  echo "ok: $f: $flows message arrows, none backwards in time beyond the uncertainty"
done
/usr/bin/python3 - auto.json sync.json wall.json << 'PYEOF' || fail "clock alignment across nodes"
import json, sys
auto, sync, wall = (json.load(open(f)) for f in sys.argv[1:4])
meta = auto["otherData"]
# Perfetto: every rank's process labelled with its host.
labels = {e["pid"] - 1: e["args"]["labels"] for e in sync["traceEvents"]
          if e.get("ph") == "M" and e["name"] == "process_labels"}
want = {0: "node0", 1: "node1", 2: "node2", 3: "node0"}
for r, h in want.items():
    assert labels.get(r, "").startswith(h + ","), ("rank %d's label" % r, labels)
# ... and its processes grouped by host: ordered by sort index, node0's ranks 0 and 3 come first.
sort = {e["pid"] - 1: e["args"]["sort_index"] for e in sync["traceEvents"]
        if e.get("ph") == "M" and e["name"] == "process_sort_index"}
assert sorted(sort, key=sort.get) == [0, 3, 1, 2], ("processes not grouped by host", sort)
print("ok: Perfetto lists the ranks host by host: %s" % sorted(sort, key=sort.get))
samples = {s["rank"]: s for s in meta["clock_sync"]}
assert sorted(samples) == [1, 2, 3], meta["clock_sync"]
for r, skew in ((1, 1000), (2, 2000), (3, 0)):
    s = samples[r]
    for k in ("offset_start_ns", "offset_exit_ns"):
        err = abs(s[k] + skew * 10**9)
        assert err <= s["uncertainty_ns"], ("rank %d: %s %d, expected %d s within %d ns" % (r, k, s[k], -skew, s["uncertainty_ns"]))
    assert s["used"] == (r != 3), ("rank %d used=%s" % (r, s["used"]))
key = lambda e: (e["pid"], e["name"], json.dumps(e["args"], sort_keys=True))
b = sorted((key(e), e["ts"]) for e in wall["traceEvents"] if e.get("ph") == "X")
by = {}
for k, ts in b:
    by.setdefault(k, []).append(ts)
for name, doc in (("default", auto), ("--clock sync", sync)):
    unc = doc["otherData"]["clock_uncertainty_ns"] / 1000.0 + 0.001  # microseconds
    a = sorted((key(e), e["ts"]) for e in doc["traceEvents"] if e.get("ph") == "X")
    assert len(a) == len(b) and a
    worst = max(abs(ts - min(by[k], key=lambda x: abs(x - ts))) for k, ts in a)
    assert worst <= 2 * unc, (name, worst, unc)
    print("ok: %s timeline agrees with the exact one within %.1f us (uncertainty %.1f us)" % (name, worst, unc))
print("ok: offsets -1000 s, -2000 s, 0 found within %s ns" % [samples[r]["uncertainty_ns"] for r in (1, 2, 3)])
PYEOF
