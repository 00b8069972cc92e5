# SPDX-License-Identifier: MIT
# `sluice-trace heatmap`, `time` and the summary's rank-to-rank section on real runs: a
# two-phase checkpoint on 3 and 4 ranks (each rank's member goes to the aggregators, so the
# bytes each rank sends are its member's size) and distributed OpenCL on 4 ranks (a 1.2 MB buffer
# moves rank 1 -> 2 -> 3). The CSV must match the bytes the programs wrote and moved, the I/O
# rows the files on disk, and the pictures must be PNG files.
TRACE=$SLUICE_BIN_DIR/sluice-trace
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE POCL_MAX_PTHREAD_COUNT=1
png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" == 89504e470d0a1a0a ] || fail "$1 is not a PNG"; }

for n in 3 4; do
  sizes="200001 333333 150000 77777"
  d=$PWD/ck$n; mkdir -p "$d"
  SLUICE_CB_WRITE=enable SLUICE_CB_NODES=2 SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_TRACE_DIR=$PWD/tr$n \
    run_dist $n "$SLUICE_APPS_DIR/ckpt_sized" write "$d" $sizes \
    || fail "checkpoint job on $n ranks failed"
  "$TRACE" heatmap --csv h$n.csv tr$n || fail "heatmap --csv failed"
  cat h$n.csv
  sent=$(awk -F, '$1 == "message" && $2 == "\"checkpoint shuffle\"" {s[$3] += $7} END {for (r in s) print r, s[r]}' h$n.csv | sort -n | tr '\n' ' ')
  want=$(i=0; for s in $sizes; do [ $i -lt $n ] && echo "$i $s"; i=$((i + 1)); done | tr '\n' ' ')
  expect_eq "$n ranks: shuffle bytes from each rank = its member's size" "$want" "$sent"
  expect_eq "$n ranks: a rank row per rank" "$n" "$(grep -c '^rank,' h$n.csv)"
  # The container holds the members plus header and index, with alignment holes never written.
  members=$(echo "$want" | awk '{for (i = 2; i <= NF; i += 2) s += $i} END {print s}')
  written=$(awk -F, '$2 == "\"container write\"" {s += $7} END {print s}' h$n.csv)
  [ "$written" -gt "$members" ] && [ "$written" -le "$(stat -c %s "$d/ckpt.@r.sluice")" ] \
    || fail "$n ranks: container writes of $written bytes for $members bytes of members"
  echo "ok: $n ranks: $written bytes of container writes for $members bytes of members"
  expect_eq "$n ranks: staged bytes = the members' sizes" "$members" \
    "$(awk -F, '$2 == "\"checkpoint staged (size at close)\"" {s += $7} END {print s}' h$n.csv)"
  # The commit protocol's control messages: each pair's bytes as the sender recorded them and as
  # the receiver did (MSG_SEND / MSG_RECV, both ends of every message).
  "$TRACE" dump tr$n >d$n.txt
  ctl=$(awk -F, '$1 == "message" && $2 == "\"control\"" {print $3, $4, $7}' h$n.csv | sort)
  [ -n "$ctl" ] || fail "$n ranks: no control messages"
  snd=$(sed -n 's/^rank \([0-9]*\) .* MSG_SEND peer rank=\([0-9]*\), bytes=\([0-9]*\),.*/\1 \2 \3/p' d$n.txt |
    awk '{s[$1 " " $2] += $3} END {for (k in s) print k, s[k]}' | sort)
  rcv=$(sed -n 's/^rank \([0-9]*\) .* MSG_RECV peer rank=\([0-9]*\), bytes=\([0-9]*\),.*/\2 \1 \3/p' d$n.txt |
    awk '{s[$1 " " $2] += $3} END {for (k in s) print k, s[k]}' | sort)
  expect_eq "$n ranks: control bytes per pair = what the senders sent" "$snd" "$ctl"
  expect_eq "$n ranks: control bytes per pair = what the receivers got" "$rcv" "$ctl"
  "$TRACE" heatmap h$n.png tr$n || fail "heatmap png failed"
  png h$n.png
  "$TRACE" time --csv t$n.csv tr$n || fail "time --csv failed"
  expect_eq "$n ranks: a main thread per rank" "$n" "$(grep -c ',"main",' t$n.csv)"
  expect_eq "$n ranks: a progress thread per rank" "$n" "$(grep -c ',"progress",' t$n.csv)"
  awk -F, 'NR > 1 && $5 + $6 + $7 + $8 <= 0 {exit 1}' t$n.csv || fail "a thread without accounted time"
  "$TRACE" time t$n.png tr$n || fail "time png failed"
  png t$n.png
  s=$("$TRACE" summary --no-symbols tr$n)
  expect_contains "$n ranks: summary bytes rank to rank" "checkpoint shuffle: " "$(echo "$s" | grep -A1 '== Bytes rank to rank ==')"
  expect_contains "$n ranks: summary points at the pictures" "sluice-trace heatmap OUT.png DIR" "$s"
done
echo "ok: heatmap and time pictures and CSV on 3 and 4 ranks"

POCL_DEVICES=pthread timeout 120 "$MPIEXEC" -n 4 env SLUICE_OPENCL=distributed SLUICE_TRACE_DIR="$PWD/cl" \
  LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/cl_dist_coherence" >cl.out 2>&1 || fail "OpenCL job failed: $(cat cl.out)"
"$TRACE" heatmap --csv - cl >cl.csv
cat cl.csv
expect_eq "OpenCL data rank 1 -> 2: the buffer" 1200000 "$(awk -F, '$1 == "message" && $3 == 1 && $4 == 2 {print $7}' cl.csv)"
expect_eq "OpenCL data to rank 3: the buffer" 1200000 "$(awk -F, '$1 == "message" && $2 == "\"OpenCL data\"" && $4 == 3 && $3 != 0 {s += $7} END {print s}' cl.csv)"
expect_contains "summary: OpenCL data matrix (write, 2 moves, 3 reads back)" "OpenCL data: 6.9 MiB in 6 messages" "$("$TRACE" summary --no-symbols cl)"
