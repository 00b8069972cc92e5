# SPDX-License-Identifier: MIT
# `sluice-trace io`'s multi-level interval advice (docs/REDUNDANCY.md, "Interval advice") on a
# real run: 3 ranks of mpi_ckpt_levels write 7 steps under mpiexec with SLUICE_DRAIN_EVERY=3,
# traced (versions 3 and 6 drained, the others staged node-local, the last drained at exit). The
# printed costs (staged: open to close of the members; durable: until durable), lambdas,
# overhead, interval and SLUICE_DRAIN_EVERY must equal the Benoit et al. first-order optimum
# that io_level_advice.py computes from the trace's own events (`sluice-trace dump`), for
# failure rates where the staged level pays (process=20m) and where it does not (node only:
# the levels pool, every checkpoint drained); without --mtbf the costs and how to ask are
# printed; bad class lists are refused with one line.
TRACE=$SLUICE_BIN_DIR/sluice-trace
check=$SOURCE_DIR/tests/integration/trace/io_level_advice.py
d=$PWD/run
mkdir -p "$d"
touch "$d/.release"
SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_STAGE_DIR=$PWD/stage SLUICE_DRAIN_EVERY=3 SLUICE_TRACE_DIR=$PWD/tr \
  RUN_TIMEOUT=60 run_dist 3 "$SLUICE_APPS_DIR/mpi_ckpt_levels" write "$d" 7 30 || fail "the traced job failed"
"$TRACE" dump tr > dump.txt || fail "sluice-trace dump failed"
drained=$(sed -n 's/.*COMMIT_DURABLE .*version=\([0-9]*\) .*/\1/p' dump.txt | sort -n | tr '\n' ' ')
expect_contains "versions 3 and 6 drained, the last at exit" "3 6 " "$drained"
expect_eq "versions 1, 2, 4, 5 (and 7, unless the exit drained it) staged node-local" "1 2 4 5" \
  "$(sed -n 's/.*CKPT_LEVEL set=.*version=\([0-9]*\), level=1.*/\1/p' dump.txt | sort -nu | head -4 | tr '\n' ' ' | sed 's/ $//')"

"$TRACE" io tr > costs.io || fail "io without --mtbf failed"
expect_contains "how to ask" "(--mtbf process=T,node=T,system=T" "$(cat costs.io)"
/usr/bin/python3 "$check" dump.txt costs.io 0 0 0 || fail "the measured costs differ from the trace's"

"$TRACE" io --mtbf process=20m,node=24h,system=720h tr > adv.io || fail "io --mtbf classes failed"
sed -n '/Multi-level interval advice/,$p' adv.io
/usr/bin/python3 "$check" dump.txt adv.io 1200 86400 2592000 || fail "advice differs from the formula"

"$TRACE" io --mtbf node=6h tr > pooled.io || fail "io --mtbf node=6h failed"
/usr/bin/python3 "$check" dump.txt pooled.io 0 21600 0 || fail "pooled advice differs from the formula"

for bad in "node=soon" "disk=1h" "node=1h,node=2h" "node=-3h"; do
  out=$("$TRACE" io --mtbf "$bad" tr 2>&1 >/dev/null) && fail "--mtbf $bad was taken"
  expect_eq "--mtbf $bad: one line" 1 "$(printf '%s\n' "$out" | wc -l)"
  echo "refused: $out"
done
out=$("$TRACE" io --cost protectd=1 tr 2>&1 >/dev/null) && fail "--cost protectd=1 was taken"
expect_contains "--cost level names" "names no level (staged, protected, durable)" "$out"
"$TRACE" io --mtbf node=24h,system=720h --cost protected=0.05 tr > prot.io || fail "--cost protected failed"
expect_contains "a given protected level recovers node failures" "failures node     MTBF 86400 s -> recovered from level protected" "$(cat prot.io)"
