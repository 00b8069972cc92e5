# SPDX-License-Identifier: MIT
# `sluice-trace whatif` on recorded traces, each with the inputs its calibration measured
# (docs/TRACE.md, What if; bench/whatif_cluster.sh on the testbed, bench/whatif_validate.sh on one
# host): it reads the members, the home's metadata operations, the shuffle, the shares that
# crossed nodes and that stayed with their writer, the round size and the path from the trace;
# its estimate for the traced run is the documented formula (whatif_formula.py); where the
# calibration was made with the trace, the measured time until durable is within 0.75-1.33 of
# that estimate; and where a case shows a term of the model, the model without it (the direct
# path at P, other nodes at I, no commit messages, the calibration's CPU share: the model before
# them) is outside; a CPU share above 1 is refused. No job runs:
# the traces are fixed.
#   whatif_testbed_2x2rr    point 2x2rr (4 ranks on 2 nodes, round robin), 2 MiB members,
#                           100 Mbit/s: one round, half the shuffle across nodes
#   whatif_testbed_400_2x4  point 2x4 (8 ranks on 2 nodes in blocks), 8 MiB members, 400 Mbit/s,
#                           the run of the median ratio of 3: two rounds, a quarter of the
#                           shuffle kept by its writer (1.60 with the model before the first two
#                           rounds were gathered together)
#   whatif_400_2x2rr_msgs   point 2x2rr, 2 MiB, 400 Mbit/s, calibrated with E, H and c: half the
#                           shuffle crosses the link through MPI and 4 ranks wait for the commit's
#                           messages (1.39 without them)
#   whatif_host_1rank       one host, 1 rank, 4 MiB: the direct path, copied through a buffer at
#                           its own pass P_d (1.95 at the aggregators' pass P)
#   whatif_400_2x2_8M_share point 2x2, 8 MiB, 400 Mbit/s, with the CPU share its run got (0.0755,
#                           bench/whatif_cpu.py) against inputs calibrated at a whole CPU (1.54
#                           at the calibration runs' share 0.1506: the load assumed to be theirs)
#   whatif_host_2_window    one host, 2 ranks, 4 MiB, its disk in --write-back, the CPU share of
#                           the threads doing the commit in its window (0.0515, from the run's
#                           recorded samples: whatif --window and bench/whatif_cpu.py --window
#                           give it again) against inputs calibrated the same way (2.08 at the
#                           share over the processes' lives, 0.1154)
TRACE=$SLUICE_BIN_DIR/sluice-trace
data=$SOURCE_DIR/tests/integration/trace/data
# ratio FILE N: measured until durable / the estimate for N ranks, two decimals.
ratio() {
  awk -v n="$2" '/measured until durable/ {sub(/.*until durable /, ""); m = $1} $1 == n && NF == 10 {e = $5}
    END {printf "%.2f", m / e}' "$1"
}
within() { awk -v r="$1" 'BEGIN {exit !(r >= 0.75 && r <= 1.33)}'; }
# check NAME RANKS HOSTS SHARES BOUND T B C L X R I M F P PD E H c [S [S_CAL]]: SHARES as printed;
# S the run's CPU share (1); BOUND 0 no bound, 1 the ratio within 0.75-1.33, 2 that and outside
# without PD, E, H and c, 3 that and outside at S_CAL, the share the case sets against S (the
# calibration runs', or the processes' over their lives). WRITE_BACK=--write-back: the model so.
check() {
  local name=$1 n=$2 hosts=$3 shares=$4 bound=$5
  shift 5
  local args=(${WRITE_BACK:-} --targets "$1" --target-bw "$2" --stripe-count "$3" --md-latency "$4" --md-rate "$5"
    --ranks-per-node "$6" --node-bw "$7" --agg-bw "$8" --client-bw "$9" --commit-bw "${10}" --ranks "$n")
  local terms=(--direct-bw "${11}" --remote-bw "${12}" --commit-latency "${13}" --rank-cost "${14}")
  "$TRACE" whatif "${args[@]}" "${terms[@]}" --cpu-share "${15:-1}" "$data/$name" > "$name.txt" \
    || fail "$name: whatif on the recorded trace failed"
  cat "$name.txt"
  expect_contains "$name: ranks" "From the trace ($n ranks on $hosts hosts)" "$(cat "$name.txt")"
  expect_contains "$name: shuffle, shares, rounds, path" "$shares" "$(cat "$name.txt")"
  /usr/bin/python3 "$SOURCE_DIR/tests/integration/trace/whatif_formula.py" "$name.txt" "${@:1:14}" "${15:-1}" \
    || fail "$name: the estimates are not the documented formulas"
  [ "$bound" != 0 ] || return 0
  local r
  r=$(ratio "$name.txt" "$n")
  within "$r" || fail "$name: measured / model $r, outside 0.75-1.33"
  echo "$name: measured / model $r"
  if [ "$bound" = 3 ]; then
    "$TRACE" whatif "${args[@]}" "${terms[@]}" --cpu-share "${16}" "$data/$name" > "$name.before.txt" \
      || fail "$name: whatif at CPU share ${16} failed"
    r=$(ratio "$name.before.txt" "$n")
    ! within "$r" || fail "$name: measured / model $r at CPU share ${16}: the case does not show it"
    echo "$name: measured / model $r at CPU share ${16}"
  fi
  [ "$bound" = 2 ] || return 0
  "$TRACE" whatif "${args[@]}" --commit-latency 0 --rank-cost 0 "$data/$name" > "$name.before.txt" \
    || fail "$name: whatif without the new terms failed"
  r=$(ratio "$name.before.txt" "$n")
  ! within "$r" || fail "$name: measured / model $r without P_d, E, H and c: the case does not show them"
  echo "$name: measured / model $r without P_d, E, H and c"
}
# T B C L X R I M F P PD E H c: the model's inputs as the bench passes them; the first two were
# calibrated before P_d, E, H and c were measured: P, I and no message cost stand for them.
check whatif_testbed_2x2rr 4 2 \
  "shuffle 8388608 bytes, share 0.5000 to another host's aggregator, share 0.2500 kept by the writer, rounds of 16777216 bytes; path two-phase" \
  0 1 11000000 1 0.02 1e9 2 11200000 40000000 9000000 30000000 30000000 11200000 0 0
# Its calibration at 400 Mbit/s: I 38.4 MB/s, B 48.7 MB/s from 4 clients, F 43.9 MB/s, L 7.8 ms,
# P 42.3 MB/s, M 17.8 MB/s.
check whatif_testbed_400_2x4 8 2 \
  "shuffle 67108864 bytes, share 0.0000 to another host's aggregator, share 0.2500 kept by the writer, rounds of 16777216 bytes; path two-phase" \
  1 1 48742460 1 0.007771 1e9 4 38426408 17785423 43856671 42304741 42304741 38426408 0 0
# Its calibration at 400 Mbit/s: I 47.7 MB/s, B 47.8 MB/s, F 43.0 MB/s, L 8.2 ms, P 110 MB/s,
# M 53.1 MB/s, P_d 50.9 MB/s, E 42.7 MB/s, H 3.4 ms, c 3.1 ms.
check whatif_400_2x2rr_msgs 4 2 \
  "share 0.5000 to another host's aggregator, share 0.2500 kept by the writer, rounds of 16777216 bytes; path two-phase" \
  2 1 47819623 1 0.008197 1e9 2 47659576 53070402 42951542 109955274 50873140 42733682 0.003382 0.003117667
# Calibrated at a whole CPU (bench/whatif_cpu.py, the calibration runs' shares 0.08-0.30, median
# 0.15) at 400 Mbit/s: I 40.4 MB/s, B 50.9 MB/s, F 40.8 MB/s, L 6.3 ms, P 604 MB/s, M 189 MB/s,
# P_d 280 MB/s, E 209 MB/s, H 0, c 2.3 ms; the run got S 0.0755 (load 24.6).
check whatif_400_2x2_8M_share 4 2 \
  "shuffle 33554432 bytes, share 0.0000 to another host's aggregator, share 0.5000 kept by the writer, rounds of 16777216 bytes; path two-phase" \
  3 1 50909084 1 0.006259 1e9 2 40445131 189299221 40778656 603640470 279758951 208962901 0 0.002276833 0.0755 0.1506
# One host (no link: I 1e12): B = F 67.7 MB/s, L 5.9 ms, P 68.2 MB/s, M 31.3 MB/s, P_d 26.1 MB/s,
# H 31.3 ms, c 0.15 ms.
check whatif_host_1rank 1 1 \
  "shuffle 0 bytes, share 0.0000 to another host's aggregator, share 1.0000 kept by the writer, rounds of 16777216 bytes; path direct" \
  2 1 67654974 1 0.005933 1e9 16 1e12 31335716 67654974 68210421 26136610 1e12 0.031258 0.000152333
# Calibrated on one host (bench/whatif_validate.sh, its disk): B = F = 1 / b_io 1047.5 MB/s, L =
# l_on / S + l_io (29 us / S + 1.85 ms), P 1165 MB/s, M 542 MB/s, P_d 415 MB/s, H 4.4 ms, c 0.12
# ms, at a whole CPU; the run's S in its commit window 0.0515, over the processes' lives 0.1154.
window=$("$TRACE" whatif --window "$data/whatif_host_2_window") || fail "whatif --window on the recorded trace failed"
expect_eq "whatif --window: the window and its threads" "69418726331500 69419126665638 1:8175 0:8088 0:8178 1:8090 1:8185" "$window"
zcat "$data/whatif_host_2_window.samples.gz" > host_2.samples
expect_eq "whatif_cpu.py --window: the commit's S" "0.0515" \
  "$(/usr/bin/python3 "$SOURCE_DIR/bench/whatif_cpu.py" --window host_2.samples $window | cut -d' ' -f1)"
WRITE_BACK=--write-back check whatif_host_2_window 2 1 \
  "shuffle 8388608 bytes, share 0.0000 to another host's aggregator, share 0.5000 kept by the writer, rounds of 16777216 bytes; path two-phase" \
  3 1 1047528461 1 "$(awk 'BEGIN {print 2.9e-05 / 0.0515 + 1.849167e-03}')" 1e9 16 1e12 542144973 1047528461 1165068023 \
  415135745 1e12 0.004406 0.0001155 0.0515 0.1154

out=$("$TRACE" whatif --cpu-share 1.5 "$data/whatif_host_1rank" 2>&1) && fail "--cpu-share 1.5 was taken"
expect_eq "--cpu-share 1.5: one line" "$out" "sluice-trace whatif: --cpu-share is a share of the time, at most 1, not '1.5'"

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
