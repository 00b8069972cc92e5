# SPDX-License-Identifier: MIT
# `sluice-trace dsm` and the DSM's messages in `heatmap` on the DSM sample programs:
#   - mpi_dsm_props evict on 3 and 4 ranks (N = 16 chains of 4 chunks per rank, 1000 bytes each,
#     every rank allocates all n*N chains, writes its own, then reads all of them twice): per
#     rank n*N allocations and frees, n*N*1000 bytes live at the peak, 4N write misses, and
#     without a cache limit 4N + 4nN read hits (its own chains, then the whole second pass) and
#     4(n-1)N read misses; with SLUICE_DSM_CACHE_CHUNKS=8 every read misses (a scan of 4n*N
#     chunks through 8). Hold times equal the DSM_ACCESS durations; the DSM's bytes from rank to
#     rank equal what the senders recorded and what the receivers did, with an arrow each in
#     `perfetto`.
#   - mpi_dsm_video on 3 ranks: each frame written into the process role's input chunk by rank
#     0 and read there by rank 1.
TRACE=$SLUICE_BIN_DIR/sluice-trace
export SLUICE_DSM_CHUNK_SIZE=256 SLUICE_DSM_TIMEOUT=20
png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" == 89504e470d0a1a0a ] || fail "$1 is not a PNG"; }
N=16
for run in 3:0 4:0 3:8; do
  n=${run%:*} cache=${run#*:}
  t=$PWD/t$n-$cache
  limit=()
  [ "$cache" == 0 ] || limit=(SLUICE_DSM_CACHE_CHUNKS=$cache)
  out=$(env "${limit[@]}" SLUICE_TRACE_DIR="$t" timeout 90 "$MPIEXEC" -n $n "$SLUICE_APPS_DIR/mpi_dsm_props" evict) \
    || fail "evict on $n ranks exited $?"
  expect_contains "$n ranks: data intact" "evict ok: $((n * N)) chains read back twice" "$out"
  "$TRACE" dsm --csv c.csv "$t" >report.txt || fail "dsm failed"
  cat report.txt
  if [ "$cache" == 0 ]; then rh=$((4 * N + 4 * n * N)) rm=$((4 * (n - 1) * N)); else rh=0 rm=$((8 * n * N)); fi
  want=$(for r in $(seq 0 $((n - 1))); do echo "$r $((n * N * 1000)) $rh $rm 0 $((4 * N))"; done)
  expect_eq "$n ranks, cache $cache: per rank peak live bytes, read hits/misses, write hits/misses" "$want" \
    "$(awk -F, '$1 == "rank" {print $2, $8, $9, $10, $11, $12}' c.csv)"
  expect_eq "$n ranks: allocations and frees per rank" "$(for r in $(seq 0 $((n - 1))); do echo "$r alloc $((n * N))"; echo "$r free $((n * N))"; done | sort)" \
    "$(awk -F, '$1 == "alloc" {c[$2 " " $4]++} END {for (k in c) print k, c[k]}' c.csv | sort)"
  expect_eq "$n ranks: live at the end" 0 "$(awk -F, '$1 == "alloc" {last[$2] = $8} END {s = 0; for (r in last) s += last[r]; print s}' c.csv)"
  expect_eq "$n ranks: chunks accessed" $((4 * n * N)) "$(grep -c '^chunk,' c.csv)"
  # Hold times: the sum of each rank's DSM_ACCESS durations; time holding chunks within it.
  "$TRACE" dump "$t" >dump.txt
  expect_eq "$n ranks: held time per rank = its DSM_ACCESS durations" \
    "$(grep ' DSM_ACCESS ' dump.txt | sed 's/^rank \([0-9]*\) .* dur=\([0-9]*\)ns.*/\1 \2/' | awk '{s[$1] += $2} END {for (r in s) printf "%d %.9f\n", r, s[r] / 1e9}' | sort -n)" \
    "$(awk -F, '$1 == "rank" {print $2, $13}' c.csv)"
  awk -F, '$1 == "rank" && !($20 > 0 && $20 <= $13 + 1e-9 && $20 <= $16 + $17 + $18 + $19) {exit 1}' c.csv \
    || fail "$n ranks: time holding chunks not within the hold times and the thread time"
  # The DSM's messages in the heatmap, as both ends recorded them (tag 7).
  "$TRACE" heatmap --csv h.csv "$t" || fail "heatmap failed"
  got=$(awk -F, '$1 == "message" && $2 == "\"DSM\"" {print $3, $4, $7, $8}' h.csv | sort)
  [ -n "$got" ] || fail "$n ranks: no DSM messages in the heatmap"
  for end in SEND RECV; do
    expect_eq "$n ranks: DSM bytes and messages per pair = the MPI_$end records" "$got" \
      "$(sed -n "s/^rank \([0-9]*\) .* MPI_$end peer rank=\([0-9]*\), bytes=\([0-9]*\), tag=7\$/\1 \2 \3/p" dump.txt |
        awk -v e=$end '{k = e == "SEND" ? $1 " " $2 : $2 " " $1; b[k] += $3; c[k]++} END {for (k in b) print k, b[k], c[k]}' | sort)"
  done
  # On the timeline: an arrow per DSM message, every one with both ends.
  "$TRACE" perfetto p.json "$t" || fail "perfetto failed"
  r=$(/usr/bin/python3 "$(dirname "$BASH_SOURCE")/trace_check_perfetto.py" p.json $n) || fail "p.json: $r"
  expect_eq "$n ranks: a DSM arrow per DSM message, none unpaired" "$(echo "$got" | awk '{s += $4} END {print s}') 0" \
    "$(/usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(sum(1 for e in d["traceEvents"] if e.get("ph") == "s" and e["name"] == "DSM"), d["otherData"]["messages_without_recorded_peer"])' p.json)"
  "$TRACE" dsm --png d.png "$t" >/dev/null || fail "dsm --png failed"
  png d.png
done
echo "ok: allocations, hit rates, hold times and messages of mpi_dsm_props on 3 and 4 ranks"

frames=6
SLUICE_DSM_TIMEOUT=30 SLUICE_TRACE_DIR=$PWD/vid timeout 120 "$MPIEXEC" -n 3 "$SLUICE_APPS_DIR/mpi_dsm_video" $frames 160 120 out.raw \
  2>err || fail "video pipeline exited $?: $(cat err)"
"$TRACE" dsm --csv v.csv vid >/dev/null || fail "dsm failed"
"$TRACE" dump vid >vdump.txt
# in[1], the input chunk (a frame fits one): the one chain both the input role
# (rank 0) and the process role (rank 1) allocate, as the trace's DSM_ALLOC records say; where
# the program places it is its own business. Rank 0 writes each frame into it, rank 1 reads each.
allocs() { sed -n "s/^rank $1 .* DSM_ALLOC chain base address=\([0-9]*\), .*/\1/p" vdump.txt | sort -u; }
in1=$(comm -12 <(allocs 0) <(allocs 1))
expect_eq "video: one chain allocated by both the input and the process role" 1 "$(echo "$in1" | grep -c .)"
w=$(grep -cE "^rank 0 .* DSM_ACCESS chunk address=$in1, bytes=[0-9]+, kind=(3|4) " vdump.txt || true)
r=$(grep -cE "^rank 1 .* DSM_ACCESS chunk address=$in1, bytes=[0-9]+, kind=(1|2) " vdump.txt || true)
[ "$w" -ge $frames ] && [ "$r" -ge $frames ] || fail "video: $w writes and $r reads of the input chunk for $frames frames"
expect_eq "video: the input chunk's accesses in the CSV" $((w + r)) \
  "$(awk -F, -v a="$in1" '$1 == "chunk" && $5 == a {print $9 + $10 + $11 + $12}' v.csv)"
expect_eq "video: a rank row per rank" 3 "$(grep -c '^rank,' v.csv)"
mkdir -p none
SLUICE_TRACE_DIR=$PWD/none RUN_TIMEOUT=60 run_dist 2 true || fail "a run without the DSM failed"
expect_contains "no DSM: said so" "no DSM records in the trace" "$("$TRACE" dsm none 2>&1 || true)"
echo "ok: the video pipeline's frames through the input chunk"
