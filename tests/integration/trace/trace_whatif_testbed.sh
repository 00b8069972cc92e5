# SPDX-License-Identifier: MIT
# `sluice-trace whatif` on traces recorded on the multi-node testbed by bench/whatif_cluster.sh,
# each with the inputs its calibration measured (docs/TRACE.md, What if): it reads the members,
# the home's metadata operations, the shuffle, the shares that crossed nodes and that stayed with
# their writer, and the round size from the trace; its estimate for the traced run is the
# documented formula (whatif_formula.py); and where the calibration was made with the trace, the
# measured time until durable is within 0.75-1.33 of that estimate. No job runs: the traces are
# fixed.
#   whatif_testbed_2x2rr    point 2x2rr (4 ranks on 2 nodes, round robin), 2 MiB members,
#                           100 Mbit/s: one round, half the shuffle across nodes
#   whatif_testbed_400_2x4  point 2x4 (8 ranks on 2 nodes in blocks), 8 MiB members, 400 Mbit/s,
#                           the run of the median ratio of 3: two rounds, a quarter of the
#                           shuffle kept by its writer (1.60 with the model before the first two
#                           rounds were gathered together)
TRACE=$SLUICE_BIN_DIR/sluice-trace
data=$SOURCE_DIR/tests/integration/trace/data
# check NAME RANKS SHARES BOUND T B C L X R I M F P: SHARES as printed; BOUND 1 to bound the ratio.
check() {
  local name=$1 n=$2 shares=$3 bound=$4
  shift 4
  "$TRACE" whatif --targets "$1" --target-bw "$2" --stripe-count "$3" --md-latency "$4" --md-rate "$5" \
    --ranks-per-node "$6" --node-bw "$7" --agg-bw "$8" --client-bw "$9" --commit-bw "${10}" --ranks "$n" \
    "$data/$name" > "$name.txt" || fail "$name: whatif on the recorded trace failed"
  cat "$name.txt"
  expect_contains "$name: ranks" "From the trace ($n ranks on 2 hosts)" "$(cat "$name.txt")"
  expect_contains "$name: shuffle, shares, rounds" "$shares" "$(cat "$name.txt")"
  /usr/bin/python3 "$SOURCE_DIR/tests/integration/trace/whatif_formula.py" "$name.txt" "$@" \
    || fail "$name: the estimates are not the documented formulas"
  [ "$bound" = 1 ] || return 0
  local ratio
  ratio=$(awk -v n="$n" '/measured until durable/ {sub(/.*until durable /, ""); m = $1} $1 == n && NF == 10 {e = $5}
    END {printf "%.2f", m / e}' "$name.txt")
  awk -v r="$ratio" 'BEGIN {exit !(r >= 0.75 && r <= 1.33)}' \
    || fail "$name: measured / model $ratio, outside 0.75-1.33"
  echo "$name: measured / model $ratio"
}
# T B C L X R I M F P: the model's inputs as bench/whatif_cluster.sh passes them.
check whatif_testbed_2x2rr 4 \
  "shuffle 8388608 bytes, share 0.5000 to another host's aggregator, share 0.2500 kept by the writer, rounds of 16777216 bytes" \
  0 1 11000000 1 0.02 1e9 2 11200000 40000000 9000000 30000000
# Its calibration at 400 Mbit/s: I 38.4 MB/s, B 48.7 MB/s from 4 clients, F 43.9 MB/s, L 7.8 ms,
# P 42.3 MB/s, M 17.8 MB/s.
check whatif_testbed_400_2x4 8 \
  "shuffle 67108864 bytes, share 0.0000 to another host's aggregator, share 0.2500 kept by the writer, rounds of 16777216 bytes" \
  1 1 48742460 1 0.007771 1e9 4 38426408 17785423 43856671 42304741

# `sluice-trace dump --timeline` (docs/TRACE.md): every process on the set's one axis, here ranks
# on two hosts. The version starts at its home once every member's CLOSED notice is in, so the
# last CKPT_CLOSE of any rank lies before the home's COMMIT_DURABLE start (its version's t0), and
# the durable mark after every shuffled piece's receive; per-process times (+S) do not compare so.
"$TRACE" dump --timeline "$data/whatif_testbed_2x2rr" > timeline.txt || fail "dump --timeline failed"
expect_eq "dump --timeline: one line per event" "$("$TRACE" dump "$data/whatif_testbed_2x2rr" | wc -l)" "$(grep -c ' @[0-9]' timeline.txt)"
awk '{ t = substr($7, 2) + 0 }
  $8 == "CKPT_CLOSE" && t > shut_last { shut_last = t }
  $8 == "COMMIT_SHUFFLE_RECV" && t > recv_last { recv_last = t }
  $8 == "COMMIT_DURABLE" { begin = t; match($0, /dur=[0-9]+ns/); end = t + substr($0, RSTART + 4, RLENGTH - 6) / 1e9 }
  END { printf "last close %.6f, version from %.6f to %.6f, last piece in %.6f\n", shut_last, begin, end, recv_last
        exit !(begin && shut_last <= begin + 0.001 && recv_last <= end) }' timeline.txt \
  || fail "dump --timeline: the version's steps are out of order across ranks"
# The four processes started 0.24 s apart on the axis (rank 3 first); from their own starts
# (+S) every PROCESS_START reads under 3 ms.
spread=$(awk '$8 == "PROCESS_START" { t = substr($7, 2) + 0; if (n++ == 0 || t < lo) lo = t; if (t > hi) hi = t }
  END { printf "%.3f", hi - lo }' timeline.txt)
awk -v s="$spread" 'BEGIN { exit !(s >= 0.2 && s <= 0.3) }' || fail "dump --timeline: process starts $spread s apart (0.24 s on one axis)"
echo "ok: dump --timeline orders the steps of a version across hosts, process starts $spread s apart"
