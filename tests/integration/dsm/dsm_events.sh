# SPDX-License-Identifier: MIT
# DSM synchronization and events with odd and even rank counts (tests/apps/mpi_dsm_props.c):
# barriers by id and count (all ranks, and all but one), rendezvous sleep / wake-up (also a
# wake-up sent before the sleep), and publish-subscribe: rank 0's handler must run exactly once
# per write made by every other rank, the handler unsubscribes itself, the event loop ends when
# no subscription is left; signals not attached to chunks likewise.
app="$SLUICE_APPS_DIR/mpi_dsm_props"
export SLUICE_DSM_TIMEOUT=20
for n in 3 5 2; do
  out=$(timeout 90 "$MPIEXEC" -n "$n" "$app" sync 8) || fail "sync with $n ranks exited $?"
  expect_contains "n=$n barriers and rendezvous" "sync ok: ranks $n rounds 8" "$out"
  out=$(timeout 90 "$MPIEXEC" -n "$n" "$app" pubsub 15 2>&1) || fail "pubsub with $n ranks exited $?"
  w=$(((n - 1) * 15))
  expect_contains "n=$n one handler call per write" "pubsub ok: $w writes, $w handler calls" "$out"
  expect_contains "n=$n signals" "pubsub signals ok: 3" "$out"
done
