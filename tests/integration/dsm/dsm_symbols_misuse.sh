# SPDX-License-Identifier: MIT
# DSM symbol table, lookups, MAP / PUT / GET, a chunk in two chains, and misuse errors
# (tests/apps/mpi_dsm_props.c, modes symbols, misuse, misuse-write).
app="$SLUICE_APPS_DIR/mpi_dsm_props"
export SLUICE_DSM_CHUNK_SIZE=256 SLUICE_DSM_TIMEOUT=20
for n in 3 2; do
  out=$(timeout 90 "$MPIEXEC" -n "$n" "$app" symbols 2>err) || fail "symbols with $n ranks exited $?"
  expect_contains "n=$n symbols defined concurrently, all found; lookup; map" \
    "symbols ok: $((40 * n + 1)) symbols" "$out"
  expect_contains "undefined symbol named" "symbol no.such.symbol is not defined" "$(cat err)"
done
out=$(timeout 90 "$MPIEXEC" -n 3 "$app" misuse 2>err) || fail "misuse exited $?"
expect_contains "misuse returns errors" "misuse ok" "$out"
err=$(cat err)
expect_contains "release without scope" "RELEASE of chain @800 without a scope" "$err"
expect_contains "scope inside a scope" "already in a READ scope" "$err"
expect_contains "reserved address" "reserved for symbols" "$err"
expect_contains "size mismatch" "chunk @850 is 64 bytes at its home" "$err"
# A write inside a READ scope stops the program with a message naming the chain.
rc_of timeout 60 "$MPIEXEC" -n 1 "$app" misuse-write >out 2>err
[ "$rc" -ne 0 ] || fail "a write inside a READ scope exited 0"
expect_contains "write in READ scope named" "write to DSM chain @42 inside a READ scope" "$(cat err)"
if grep -q "FAIL" err; then fail "the write went through"; fi
echo "ok: stopped with status $rc"
