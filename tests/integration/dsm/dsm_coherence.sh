# SPDX-License-Identifier: MIT
# The DSM's home-based MESI under random concurrent access (tests/apps/mpi_dsm_props.c, mode
# coherence): 2, 3 and 4 ranks run random READ / READWRITE scopes on chains of 1-3 of 4 shared
# counters. The program itself checks that no increment is lost (final values equal the sum of
# every rank's increments), that no chunk is torn and reads never go back, then that after a
# barrier every rank reads exactly the value the round's writer released.
app="$SLUICE_APPS_DIR/mpi_dsm_props"
export SLUICE_DSM_CHUNK_SIZE=256 SLUICE_DSM_TIMEOUT=20
for n in 2 3 4; do
  out=$(timeout 90 "$MPIEXEC" -n "$n" "$app" coherence 300) || fail "coherence with $n ranks exited $?"
  expect_contains "n=$n: no lost write, no torn or stale read" "coherence random ok: ranks $n" "$out"
  expect_contains "n=$n: readers see the last released write" "coherence last-write ok: $((3 * n)) rounds" "$out"
done
# One server for everything (SLUICE_DSM_SERVERS=1): same properties, every home on rank 0.
out=$(SLUICE_DSM_SERVERS=1 timeout 90 "$MPIEXEC" -n 3 "$app" coherence 200) || fail "one server: exit $?"
expect_contains "one metadata server" "coherence last-write ok: 9 rounds" "$out"
# Threads: 3 threads per rank open scopes at once (each on a chunk it shares with the same
# thread of the other ranks); no increment may be lost.
for n in 2 3; do
  out=$(timeout 90 "$MPIEXEC" -n "$n" "$app" threads 60) || fail "threads with $n ranks exited $?"
  expect_contains "n=$n concurrent threads" "threads ok: $n ranks x 3 threads x 60 increments" "$out"
done
