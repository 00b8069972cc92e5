# SPDX-License-Identifier: MIT
# `sluice-trace dag` on distributed OpenCL under mpiexec -n 4 (cl_dist_coherence: a buffer
# written on rank 1 is read by kernels on ranks 2 and 3): every command is a node in the cluster
# of the rank it ran on, the kernels depend on the transfers that brought the buffer (RAW) and
# on the write (wait list), every arrow's ends are nodes, a window keeps only its commands, and
# the SVG from Graphviz parses as XML; and the writes and reads collective replacement (SLUICE_DCR
# on, not off: broadcast, gather) and copy removal rewrote are marked with what replaced them.
TRACE=$SLUICE_BIN_DIR/sluice-trace
export POCL_MAX_PTHREAD_COUNT=1
# Rewrites are counted per step: a window that closed by time (1 ms without an enqueue, while
# the program's thread was off its core on a loaded machine) would split a step (docs/ENV.md).
export SLUICE_DCR_WINDOW=50000
# Collective replacement serves ranks rank 0 reaches by MPI: on its node they copy by CMA instead
# (SLUICE_DIST_CMA, docs/ENV.md), so these jobs stand for ranks of other nodes.
export SLUICE_DIST_CMA=off
POCL_DEVICES=pthread timeout 120 "$MPIEXEC" -n 4 env SLUICE_OPENCL=distributed SLUICE_TRACE_DIR="$PWD/cl" \
  LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/cl_dist_coherence" >cl.out 2>&1 || fail "OpenCL job failed: $(cat cl.out)"
"$TRACE" dag dag.dot cl || fail "dag failed"
cat dag.dot
/usr/bin/python3 - dag.dot "$("$TRACE" dump cl | grep -c ' CL_DAG_NODE ')" <<'PYEOF' || fail "DAG content"
import re, sys
text = open(sys.argv[1]).read()
clusters = dict(re.findall(r'subgraph cluster_rank_(\d+) \{(.*?)\n  \}', text, re.S))
where = {int(n): int(r) for r, body in clusters.items() for n in re.findall(r'\bn(\d+) \[label="#', body)}
assert len(where) == int(sys.argv[2]), (where, sys.argv[2])
kinds = {int(n): k for n, k in re.findall(r'n(\d+) \[label="#\d+ (\w+)', text)}
kernels = sorted(where[n] for n, k in kinds.items() if k == "kernel")
assert kernels == [2, 3], kernels  # one kernel on each reader's rank
edges = re.findall(r'n(\d+) -> n(\d+) \[label="([^"]*)"', text)
assert edges
for a, b, why in edges:
    assert int(b) in where and (int(a) in where or ('n%s [label="#%s\\nnot recorded"' % (a, a)) in text), (a, b)
raw = {(kinds.get(int(a)), kinds[int(b)], where[int(b)]) for a, b, why in edges if "RAW" in why}
assert ("transfer", "kernel", 2) in raw and ("transfer", "kernel", 3) in raw, raw
assert any(kinds[int(a)] == "write" and "wait list" in why for a, b, why in edges), edges
print("ok: %d commands in their ranks' clusters, %d arrows, kernels after their transfers" % (len(where), len(edges)))
PYEOF
"$TRACE" dag --from 3 --to 4 win.dot cl || fail "dag --from --to failed"
expect_eq "the window's commands" "n3 n4" "$(grep -o 'n[0-9]* \[label="#[0-9]* [a-z]' win.dot | cut -d' ' -f1 | sort | tr '\n' ' ' | sed 's/ $//')"
expect_contains "no DAG: said so" "no DAG nodes in the trace" "$("$TRACE" dag x.dot "$SLUICE_TEST_SCRATCH/cl/$(ls cl | grep rank-1 | head -1)" 2>&1 || true)"
if command -v dot >/dev/null; then
  "$TRACE" dag dag.svg cl || fail "dag svg failed"
  /usr/bin/python3 -c 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); assert d.documentElement.tagName == "svg"' dag.svg \
    || fail "dag.svg is not SVG"
  echo "ok: SVG"
else
  echo "note: Graphviz's dot is not installed (scripts/install-deps.sh installs it): SVG not checked"
fi

# Rewrites: cl_broadcast (one input written to every device) with collective replacement on and
# off, the stencil's halo exchange with copy removal and cl_scatter_gather's scatters and gathers
# (docs/DAG.md, section 2).
for mode in on off; do
  POCL_DEVICES=pthread timeout 120 "$MPIEXEC" -n 4 env SLUICE_OPENCL=distributed SLUICE_DCR=$mode \
    SLUICE_TRACE_DIR="$PWD/b$mode" LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/cl_broadcast" 40009 7 >b$mode.out 2>&1 \
    || fail "broadcast job ($mode) failed: $(cat b$mode.out)"
  "$TRACE" dag b$mode.dot b$mode || fail "dag ($mode) failed"
done
POCL_DEVICES=pthread timeout 120 "$MPIEXEC" -n 4 env SLUICE_OPENCL=distributed SLUICE_TRACE_DIR="$PWD/st" \
  LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/cl_stencil2d" 67 45 9 >st.out 2>&1 || fail "stencil job failed: $(cat st.out)"
"$TRACE" dag st.dot st || fail "dag (stencil) failed"
POCL_DEVICES=pthread timeout 120 "$MPIEXEC" -n 3 env SLUICE_OPENCL=distributed SLUICE_TRACE_DIR="$PWD/sg" \
  LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/cl_scatter_gather" 30011 3 >sg.out 2>&1 || fail "scatter job failed: $(cat sg.out)"
"$TRACE" dag sg.dot sg || fail "dag (scatter) failed"
# n-body on the serving ranks' devices only: the positions' writes after the first step are
# allgathers among ranks 1 to 3.
POCL_DEVICES=pthread timeout 120 "$MPIEXEC" -n 4 env SLUICE_OPENCL=distributed SLUICE_TRACE_DIR="$PWD/ag" \
  SLUICE_DEVICES="SELECT ALL FROM NODE 1, 2, 3" LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/cl_nbody" 1001 3 >ag.out 2>&1 \
  || fail "n-body job failed: $(cat ag.out)"
"$TRACE" dag ag.dot ag || fail "dag (allgather) failed"
grep 'replace' bon.dot
for t in bon boff st sg ag; do "$TRACE" dump $t | grep ' CL_DCR ' >$t.dcr || true; done
# Every CL_DCR record (operation, command, source rank) marks its node with its own rewrite and
# nothing else is marked: a broadcast's writes, a gather's reads, copy removal's writes apart.
/usr/bin/python3 - <<'PYEOF' || fail "DAG rewrites"
import re
def nodes(path):
    text = open(path).read()
    out = {}
    for r, body in re.findall(r'subgraph cluster_rank_(\d+) \{(.*?)\n  \}', text, re.S):
        for n, label in re.findall(r'\bn(\d+) \[label="(#[^"]*)"', body):
            out[int(n)] = (int(r), label)
    return text, out
def dcr(path):
    return [(op, int(c), int(src)) for op, c, src in
            re.findall(r'CL_DCR operation="(\w+)", command id=(\d+), source rank=(\d+)', open(path).read())]
def check(name):
    text, n = nodes(name + ".dot")
    recs = dcr(name + ".dcr")
    by_op = {op: {c: src for o, c, src in recs if o == op} for op in ("bcast", "gather", "p2p", "scatter", "allgather")}
    assert sum(map(len, by_op.values())) == len(recs), recs  # no other operation
    marked = {c: (r, l) for c, (r, l) in n.items() if "replaced by" in l}
    assert sorted(marked) == sorted(c for o, c, s in recs), (name, marked, recs)
    for c, src in by_op["bcast"].items():
        r, l = marked[c]
        assert " write\\n" in l and re.search(r"replaced by\\nbroadcast \d+ from rank 0$", l), (name, l)
        assert re.search(r'bcast\d+ -> n%d \[label="replaces"' % c, text), (name, c)
    for c, src in by_op["scatter"].items():
        r, l = marked[c]
        assert " write\\n" in l and re.search(r"replaced by\\nscatter \d+ from rank 0$", l), (name, l)
        assert re.search(r'scatter\d+ -> n%d \[label="replaces"' % c, text), (name, c)
    for c, src in by_op["gather"].items():
        r, l = marked[c]
        assert " read\\n" in l and re.search(r"host read replaced by\\ngather \d+ to rank 0$", l), (name, l)
        assert r == src and r != 0, (name, c, r, src)  # read on the rank whose slice it gave
        assert re.search(r'gather\d+ -> n%d \[label="replaces"' % c, text), (name, c)
    for c, src in by_op["allgather"].items():
        r, l = marked[c]
        assert " write\\n" in l and re.search(r"replaced by\\nallgather \d+ among serving ranks$", l), (name, l)
        assert src == 14 and r in (1, 2, 3), (name, c, r, src)  # the sources' rank mask: ranks 1 to 3
        assert re.search(r'allgather\d+ -> n%d \[label="replaces"' % c, text), (name, c)
    for c, src in by_op["p2p"].items():
        r, l = marked[c]
        assert " write\\n" in l and l.endswith("transfer from rank %d (copy removal)" % src), (name, l)
        assert src not in (0, r) and r != 0, (name, c, r, l)
    assert len([l for r, l in n.values() if "(copy removal)" in l]) == len(by_op["p2p"]), name
    assert len([l for r, l in n.values() if re.search(r"(?<!all)gather", l)]) == len(by_op["gather"]), name
    nb, ns, ng, na = (len(set(re.findall(r'\n  (%s\d+) \[' % o, text))) for o in ("bcast", "scatter", "gather", "allgather"))
    title = ("%d writes into %d broadcast%s, %d writes into %d scatter%s, %d reads into %d gather%s, "
             "%d writes into %d allgather%s (collective replacement), %d by copy removal"
             % (len(by_op["bcast"]), nb, "" if nb == 1 else "s", len(by_op["scatter"]), ns, "" if ns == 1 else "s",
                len(by_op["gather"]), ng, "" if ng == 1 else "s", len(by_op["allgather"]), na, "" if na == 1 else "s",
                len(by_op["p2p"])))
    assert title in text, (name, title, text.split("\n", 2)[1])
    return by_op, marked, nb + ns, ng
b, marked, nb, ng = check("bon")
assert len(b["bcast"]) == 3 and nb == 1, b  # a write to each of the 3 serving ranks replaced
assert sorted(marked[c][0] for c in b["bcast"]) == [1, 2, 3], marked
assert len(b["gather"]) == 3 and ng == 1, b  # the 3 result reads, one gather
assert sorted(marked[c][0] for c in b["gather"]) == [1, 2, 3], marked
assert not b["p2p"], b
off, marked, nb, ng = check("boff")
assert not marked and nb == ng == 0, marked
offtext = open("boff.dot").read()
assert "replace" not in offtext.split("\n", 2)[2] and "bcast1" not in offtext and "gather1" not in offtext
st, marked, nb, ng = check("st")
assert len(st["p2p"]) > 0, st
sg, marked, nc, ng = check("sg")
assert len(sg["scatter"]) > 0 and len(sg["gather"]) > 0 and nc > 0 and ng > 0, sg
ag, marked, nb, ng = check("ag")
assert len(ag["allgather"]) == 6 and len(set(re.findall(r'\n  (allgather\d+) \[', open("ag.dot").read()))) == 2, ag
assert sorted(marked[c][0] for c in ag["allgather"]) == [1, 1, 2, 2, 3, 3], marked  # 2 steps x 3 ranks
print("ok: DCR on: the 3 writes replaced by one broadcast and the 3 reads by one gather, on ranks 1-3; "
      "off: none; stencil: %d copy-removal writes, %d gathered reads; scatter_gather (3 ranks): "
      "%d scattered writes, %d gathered reads" % (len(st["p2p"]), len(st["gather"]), len(sg["scatter"]), len(sg["gather"])))
PYEOF
