# SPDX-License-Identifier: MIT
# `sluice-trace whatif` on two-phase checkpoints of 2 and 3 ranks: it reads the last version's
# members and metadata operations from the trace, prints the model and its assumptions, and its
# estimates for 1k, 10k, 100k ranks (and --ranks N) are the documented formulas, recomputed here
# from the printed inputs, for the default (Perlmutter scratch) and for overridden parameters.
TRACE=$SLUICE_BIN_DIR/sluice-trace
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE
check() { # FILE TARGETS TARGET_BW STRIPE_COUNT MD_LAT MD_RATE RPN NODE_BW
  /usr/bin/python3 - "$@" <<'PYEOF'
import math, re, sys
text = open(sys.argv[1]).read()
T, B, C, L, X, R, I = map(float, sys.argv[2:])
b = float(re.search(r"members of (\d+) bytes on average", text).group(1))
mc = float(re.search(r"container commit (\d+) metadata operations", text).group(1))
mf = float(re.search(r"file per process ([0-9.]+) per file", text).group(1))
rows = re.findall(r"^\s*(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)x$", text, re.M)
assert [r[0] for r in rows][:3] == ["1000", "10000", "100000"], rows
for r in rows:
    n = float(r[0])
    fm = L + n * mf / X
    fd = max(math.ceil(n / T) * b / B, min(n, R) * b / I)
    cm = mc * L
    cd = max(n * b / (min(C, T) * B), min(n, R) * b / I)
    want = [fm + fd, fm, fd, cm + cd, cm, cd]
    got = list(map(float, r[1:7]))
    assert all(abs(g - w) <= 1e-6 + 1e-4 * w for g, w in zip(got, want)), (r, want)
print("ok: %d rows match the formulas (b=%.0f, m_c=%.0f, m_f=%.2f)" % (len(rows), b, mc, mf))
PYEOF
}
for n in 2 3; do
  d=$PWD/ck$n; mkdir -p "$d"
  SLUICE_CB_WRITE=enable SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_TRACE_DIR=$PWD/tr$n \
    run_dist $n "$SLUICE_APPS_DIR/ckpt_sized" write "$d" 300000 500000 100000 \
    || fail "checkpoint job on $n ranks failed"
  "$TRACE" whatif tr$n >w$n.txt || fail "whatif failed"
  cat w$n.txt
  expect_contains "$n ranks: the members" "last version $n members of" "$(cat w$n.txt)"
  expect_contains "$n ranks: assumptions printed" "Assumes: " "$(cat w$n.txt)"
  check w$n.txt 274 "$(awk 'BEGIN {print 5e12 / 274}')" 72 0.0005 400000 128 25e9 || fail "$n ranks: defaults"
  "$TRACE" whatif --targets 8 --target-bw 1e9 --stripe-count 4 --md-latency 0.002 --md-rate 5000 \
    --ranks-per-node 32 --node-bw 1e10 --ranks $n tr$n >o$n.txt || fail "whatif with options failed"
  expect_eq "$n ranks: --ranks row" 1 "$(grep -c "^ *$n " o$n.txt)"
  check o$n.txt 8 1e9 4 0.002 5000 32 1e10 || fail "$n ranks: overridden parameters"
done
expect_contains "a bad parameter is refused" "a positive number" "$("$TRACE" whatif --targets -3 tr2 2>&1 || true)"
