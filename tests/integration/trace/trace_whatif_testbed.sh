# SPDX-License-Identifier: MIT
# `sluice-trace whatif` on a recorded trace of the multi-node testbed (data/whatif_testbed_2x2rr:
# bench/whatif_cluster.sh's point 2x2rr, 4 ranks on 2 nodes placed round robin, 2 MiB members,
# links and GlusterFS at 100 Mbit/s): it reads the members, the home's metadata operations, the
# shuffle, the share of it that crossed nodes and the round size from the trace, and its estimate
# for the traced run with the testbed's calibrated parameters is the documented formula
# (whatif_formula.py), gather term included. No job runs: the trace is fixed.
TRACE=$SLUICE_BIN_DIR/sluice-trace
data=$SOURCE_DIR/tests/integration/trace/data/whatif_testbed_2x2rr
# T B C L X R I M F P as bench/whatif_cluster.sh passes them (its calibration at 100 Mbit/s).
params=(1 11000000 1 0.02 1e9 2 11200000 40000000 9000000 30000000)
"$TRACE" whatif --targets "${params[0]}" --target-bw "${params[1]}" --stripe-count "${params[2]}" \
  --md-latency "${params[3]}" --md-rate "${params[4]}" --ranks-per-node "${params[5]}" --node-bw "${params[6]}" \
  --agg-bw "${params[7]}" --client-bw "${params[8]}" --commit-bw "${params[9]}" --ranks 4 "$data" > out.txt \
  || fail "whatif on the recorded trace failed"
cat out.txt
expect_contains "ranks and hosts" "From the trace (4 ranks on 2 hosts)" "$(cat out.txt)"
expect_contains "members" "last version 4 members of 2097152 bytes on average" "$(cat out.txt)"
expect_contains "shuffle, the share across nodes, rounds" \
  "shuffle 8388608 bytes, share 0.5000 to another host's aggregator, share 0.2500 kept by the writer, rounds of 16777216 bytes" \
  "$(cat out.txt)"
/usr/bin/python3 "$SOURCE_DIR/tests/integration/trace/whatif_formula.py" out.txt "${params[0]}" "${params[1]}" \
  "${params[2]}" "${params[3]}" "${params[4]}" "${params[5]}" "${params[6]}" "${params[7]}" "${params[8]}" "${params[9]}" \
  || fail "the estimates are not the documented formulas"
