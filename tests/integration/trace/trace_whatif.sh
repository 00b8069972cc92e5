# SPDX-License-Identifier: MIT
# `sluice-trace whatif` on two-phase checkpoints of 2 and 3 ranks: it reads the last version's
# members and metadata operations from the trace, prints the model and its assumptions, and its
# estimates for 1k, 10k, 100k ranks (and --ranks N) are the documented formulas, recomputed here
# from the printed inputs (whatif_formula.py), for the default (Perlmutter scratch) and for
# overridden parameters.
TRACE=$SLUICE_BIN_DIR/sluice-trace
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE
check() { # FILE TARGETS TARGET_BW STRIPE_COUNT MD_LAT MD_RATE RPN NODE_BW AGG_BW [CLIENT_BW ...]
  /usr/bin/python3 "$SOURCE_DIR/tests/integration/trace/whatif_formula.py" "$@"
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
  check w$n.txt 274 "$(awk 'BEGIN {print 5e12 / 274}')" 72 0.0005 400000 128 25e9 10e9 || fail "$n ranks: defaults"
  "$TRACE" whatif --targets 8 --target-bw 1e9 --stripe-count 4 --md-latency 0.002 --md-rate 5000 \
    --ranks-per-node 32 --node-bw 1e10 --agg-bw 3e9 --client-bw 1e8 --direct-bw 5e7 --remote-bw 2e9 \
    --commit-latency 0.01 --rank-cost 0 --ranks $n tr$n >o$n.txt || fail "whatif with options failed"
  expect_eq "$n ranks: --ranks row" 1 "$(grep -c "^ *$n " o$n.txt)"
  check o$n.txt 8 1e9 4 0.002 5000 32 1e10 3e9 1e8 10e9 5e7 2e9 0.01 0 || fail "$n ranks: overridden parameters"
  "$TRACE" whatif --write-back --targets 8 --target-bw 1e9 --stripe-count 4 --md-latency 0.002 --md-rate 5000 \
    --ranks-per-node 32 --node-bw 1e10 --agg-bw 3e9 --client-bw 1e8 --commit-bw 4e8 --direct-bw 5e7 \
    --cpu-share 0.5 --ranks $n tr$n >b$n.txt || fail "whatif --write-back failed"
  expect_contains "$n ranks: write-back named" "write-back client" "$(cat b$n.txt)"
  check b$n.txt 8 1e9 4 0.002 5000 32 1e10 3e9 1e8 4e8 5e7 1e10 0.001 1e-6 0.5 || fail "$n ranks: write-back"
  # --window: the commit window at the home (as long as the measured time until durable), its
  # COMMIT_DURABLE thread first, then the threads of every rank that worked in it, as the trace has them.
  read -r t0 t1 threads <<< "$("$TRACE" whatif --window tr$n)" || fail "$n ranks: whatif --window failed"
  expect_eq "$n ranks: window = until durable" "$(sed -n 's/.*measured until durable \([0-9.]*\) s.*/\1/p' w$n.txt)" \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.6f", (b - a) / 1e9}')"
  "$TRACE" dump tr$n >d$n.txt || fail "dump failed"
  home=${threads%% *}
  expect_eq "$n ranks: the home's COMMIT_DURABLE thread first" 1 \
    "$(grep -c "^rank ${home%:*} pid [0-9]* tid ${home#*:} .* COMMIT_DURABLE " d$n.txt)"
  for rt in $threads; do
    grep -q "^rank ${rt%:*} pid [0-9]* tid ${rt#*:} .* COMMIT_" d$n.txt || fail "$n ranks: $rt has no commit event"
  done
  expect_eq "$n ranks: every rank worked in the window" "$(seq -s' ' 0 $((n - 1)))" \
    "$(tr ' ' '\n' <<< "$threads" | cut -d: -f1 | sort -nu | tr '\n' ' ' | sed 's/ $//')"
done
expect_contains "a bad parameter is refused" "a positive number" "$("$TRACE" whatif --targets -3 tr2 2>&1 || true)"
