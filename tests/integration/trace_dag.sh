# SPDX-License-Identifier: MIT
# `sluice-trace dag` on distributed OpenCL under mpiexec -n 4 (cl_dist_coherence: a buffer
# written on rank 1 is read by kernels on ranks 2 and 3): every command is a node in the cluster
# of the rank it ran on, the kernels depend on the transfers that brought the buffer (RAW) and
# on the write (wait list), every arrow's ends are nodes, a window keeps only its commands, and
# the SVG from Graphviz parses as XML; and the writes collective replacement (SLUICE_DCR on, not
# off) and copy removal rewrote are marked with what replaced them.
TRACE=$SLUICE_BIN_DIR/sluice-trace
export POCL_MAX_PTHREAD_COUNT=1
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
# off, and the stencil's halo exchange with copy removal (docs/DAG.md, section 2).
for mode in on off; do
  POCL_DEVICES=pthread timeout 120 "$MPIEXEC" -n 4 env SLUICE_OPENCL=distributed SLUICE_DCR=$mode \
    SLUICE_TRACE_DIR="$PWD/b$mode" LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/cl_broadcast" 40009 7 >b$mode.out 2>&1 \
    || fail "broadcast job ($mode) failed: $(cat b$mode.out)"
  "$TRACE" dag b$mode.dot b$mode || fail "dag ($mode) failed"
done
POCL_DEVICES=pthread timeout 120 "$MPIEXEC" -n 4 env SLUICE_OPENCL=distributed SLUICE_TRACE_DIR="$PWD/st" \
  LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/cl_stencil2d" 67 45 9 >st.out 2>&1 || fail "stencil job failed: $(cat st.out)"
"$TRACE" dag st.dot st || fail "dag (stencil) failed"
grep 'replace' bon.dot
/usr/bin/python3 - bon.dot boff.dot st.dot "$("$TRACE" dump bon | grep -c 'CL_DCR operation="bcast"')" \
  "$("$TRACE" dump st | grep -c 'CL_DCR operation="p2p"')" <<'PYEOF' || fail "DAG rewrites"
import re, sys
def nodes(path):
    text = open(path).read()
    out = {}
    for r, body in re.findall(r'subgraph cluster_rank_(\d+) \{(.*?)\n  \}', text, re.S):
        for n, label in re.findall(r'\bn(\d+) \[label="(#[^"]*)"', body):
            out[int(n)] = (int(r), label)
    return text, out
on, non = nodes(sys.argv[1])
off, noff = nodes(sys.argv[2])
st, nst = nodes(sys.argv[3])
want_bcast, want_p2p = int(sys.argv[4]), int(sys.argv[5])
assert want_bcast == 3, want_bcast  # a write to each of the 3 serving ranks replaced
rewritten = {n: (r, l) for n, (r, l) in non.items() if "replaced by" in l}
assert len(rewritten) == want_bcast, rewritten
assert sorted(r for r, l in rewritten.values()) == [1, 2, 3], rewritten
assert all(" write\\n" in l and "broadcast 1 from rank 0" in l for r, l in rewritten.values()), rewritten
assert sorted(int(n) for n in re.findall(r'bcast1 -> n(\d+) \[label="replaces"', on)) == sorted(rewritten)
assert "3 writes into 1 broadcast (collective replacement)" in on
assert "replace" not in off.split("\n", 2)[2] and "bcast1" not in off, "a rewrite with DCR off"
assert "0 writes into 0 broadcasts (collective replacement), 0 by copy removal" in off
p2p = {n: (r, l) for n, (r, l) in nst.items() if "(copy removal)" in l}
assert len(p2p) == want_p2p and want_p2p > 0, (len(p2p), want_p2p)
for n, (r, l) in p2p.items():
    src = int(re.search(r"transfer from rank (\d+)", l).group(1))
    assert " write\\n" in l and src not in (0, r) and r != 0, (n, r, l)
assert "%d by copy removal" % want_p2p in st
print("ok: DCR on: the 3 writes replaced by one broadcast, on ranks 1-3; off: none; "
      "copy removal: %d writes from a serving rank" % want_p2p)
PYEOF
