# SPDX-License-Identifier: MIT
# The DSM write miss of a chunk other ranks share, with no owner (docs/DSM.md): the
# home grants at once and the sharers acknowledge to the writer, three messages in sequence
# (WR_REQ, INV, INV_ACK) where the four-message protocol waited for the ACKs at the home first.
# tests/apps/mpi_dsm_sharers.c:
#   writemiss on 3 and 4 ranks: rank 0 writes a chunk every other rank (the home among them)
#     has just read, 20 times; every scope sees the last write, and the trace's messages inside
#     each write miss, linked by cause (bench/dsm_hops.py), are 3 hops long (4 before: the ACKs
#     went to the home, the grant after them; 2n-2 messages, the home's own ACK in its FIFO).
#     After each write rank 0 reads the chunk again: a hit every time (producer-consumer: the
#     writer kept a read copy, DSM_F_DOWNGRADE, and was not marked migratory).
#   alternate on 2 and 3 ranks: ranks 0 and 1 take turns writing a chunk homed on rank n-1 (the
#     second writer, or a third rank): the home marks it migratory, each writer drops its copy
#     with its write-back, and every write miss of rank 0 is 2 messages, WR_REQ and WR_GRANT
#     (before: 3 in sequence with a third rank, WR_REQ, INV, INV_ACK; 3 messages with 2 ranks,
#     the grant and the INV_ACK beside each other).
#   exclusion on 2, 3 and 4 ranks: the ranks take turns writing a two-chunk chain while every
#     other rank sits in a READ scope of it for a random time; a file shared by the ranks
#     counts them: the writer's scope never overlaps a reader's, and the readers were still
#     inside at most write requests (their answers came at RELEASE).
app="$SLUICE_APPS_DIR/mpi_dsm_sharers"
export SLUICE_DSM_TIMEOUT=20
# traced_hops NAME RANKS MODE ROUNDS: runs MODE traced into NAME/, prints its output, and sets
# $out and $hops (the write misses' messages, linked by cause: bench/dsm_hops.py)
traced_hops() {
  out=$(SLUICE_TRACE_DIR="$PWD/$1" timeout 60 "$MPIEXEC" -n "$2" "$app" "$3" "$4") || fail "$3 on $2 ranks exited $?"
  "$SLUICE_BIN_DIR/sluice-trace" perfetto "$1.json" "$1" || fail "perfetto failed"
  hops=$(/usr/bin/python3 "$SOURCE_DIR/bench/dsm_hops.py" "$1.json" 64 "write miss") || fail "dsm_hops.py: $hops"
  echo "$hops"
}
for n in 3 4; do
  traced_hops "tr$n" $n writemiss 20
  expect_contains "n=$n: every scope saw the last write" "writemiss ok: 20 rounds, $((n - 1)) sharers" "$out"
  # WR_REQ, n-2 INV (the home's own goes through its FIFO, untraced), WR_GRANT, n-1 INV_ACK
  expect_contains "n=$n: 20 write misses traced, $((2 * n - 1)) messages each" \
    "20 accesses of 64 B, write miss: $((2 * n - 1)) messages (median)" "$hops"
  expect_contains "n=$n: a write miss with $((n - 1)) sharers is 3 messages in sequence" \
    "critical path: 3 messages in sequence (median of 20; longest 3)" "$hops"
  "$SLUICE_BIN_DIR/sluice-trace" dsm "tr$n" >dsm$n.txt # (kept: awk stops early, a SIGPIPE under pipefail)
  hits=$(awk '/accesses per rank/ {t = 1} t && $1 == "0" {print $3; exit}' dsm$n.txt)
  [ "$hits" = 20 ] || fail "n=$n: the writer's 20 reads after its writes: $hits hits (its read copy was not kept)"
  echo "ok: n=$n: the writer's reads after its writes all hit (downgrade to S)"
done
for n in 2 3; do
  traced_hops "alt$n" $n alternate 20
  expect_contains "n=$n: every scope saw the last write" "alternate ok: 20 rounds, $n ranks" "$out"
  expect_contains "n=$n: 10 write misses of rank 0, WR_REQ and WR_GRANT only" \
    "10 accesses of 64 B, write miss: 2 messages (median)" "$hops"
  expect_contains "n=$n: one round trip" "critical path: 2 messages in sequence (median of 10;" "$hops"
done
for n in 2 3 4; do
  out=$(timeout 60 "$MPIEXEC" -n $n "$app" exclusion 40 "$PWD/counts$n") || fail "exclusion on $n ranks exited $?"
  expect_contains "n=$n: no WRITE scope overlapped a READ scope" "exclusion ok: 40 rounds, $n ranks" "$out"
  inside=$(sed -n 's/^rank [0-9]*: readers inside at \([0-9]*\) of .*/\1/p' <<<"$out" | awk '{s += $1} END {print s + 0}')
  [ "$inside" -ge 20 ] || fail "n=$n: readers were inside at only $inside of 40 write requests"
  echo "ok: n=$n: readers still inside at $inside of 40 write requests"
done
