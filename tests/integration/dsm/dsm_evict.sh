# SPDX-License-Identifier: MIT
# LRU eviction of local DSM copies (tests/apps/mpi_dsm_props.c, mode evict): 3 ranks each write
# 16 chains of 4 chunks, then every rank reads all 48 chains twice with room for 8 chunks
# (SLUICE_DSM_CACHE_CHUNKS=8): every byte must come back (home copies are never lost), the
# trace must show evictions, and no eviction may leave more than 8 chunks with local data.
app="$SLUICE_APPS_DIR/mpi_dsm_props"
out=$(SLUICE_DSM_CHUNK_SIZE=256 SLUICE_DSM_CACHE_CHUNKS=8 SLUICE_DSM_TIMEOUT=20 SLUICE_TRACE_DIR="$PWD/trace" \
      timeout 90 "$MPIEXEC" -n 3 "$app" evict) || fail "evict exited $?"
expect_contains "data intact after eviction" "evict ok: 48 chains read back twice" "$out"
dump=$("$SLUICE_BIN_DIR/sluice-trace" dump trace)
evictions=$(grep -c "DSM_EVICT" <<<"$dump" || true)
[ "$evictions" -gt 10 ] || fail "only $evictions DSM_EVICT events"
echo "ok: $evictions evictions traced"
over=$(grep "DSM_EVICT" <<<"$dump" | sed 's/.*local data left=//' | awk '$1 > 8' | wc -l)
expect_eq "no eviction leaves more than the limit" 0 "$over"
summary=$("$SLUICE_BIN_DIR/sluice-trace" summary trace)
expect_contains "accesses in the summary" "DSM_ACCESS" "$summary"
# Without a limit nothing is evicted.
rm -rf trace
SLUICE_DSM_CHUNK_SIZE=256 SLUICE_TRACE_DIR="$PWD/trace" timeout 90 "$MPIEXEC" -n 3 "$app" evict >/dev/null
expect_eq "no limit, no eviction" 0 "$("$SLUICE_BIN_DIR/sluice-trace" dump trace | grep -c DSM_EVICT || true)"
