# SPDX-License-Identifier: MIT
# Distributed OpenCL, device sets and SLUICE_DEVICES: an MPMD launch gives ranks different
# devices (rank 0: one pthread device, rank 1: two "basic" devices, rank 2: one pthread device);
# all are visible from rank 0 under one platform, DQL queries select and order them as they
# say, a program runs its kernel on the selected remote device with the output of a local run,
# and a query that does not parse stops every rank with exit 2 and the column.
export POCL_MAX_PTHREAD_COUNT=1

# launch "QUERY" cmd...: three ranks with different device sets
launch() {
  local query=$1; shift
  local env=(env SLUICE_OPENCL=distributed "SLUICE_DEVICES=$query" LD_PRELOAD="$SLUICE_LIB")
  # per-rank variables through env(1), which every launcher's MPMD syntax accepts
  "$MPIEXEC" -n 1 "${env[@]}" POCL_DEVICES=pthread "$@" \
           : -n 1 "${env[@]}" "POCL_DEVICES=basic basic" "$@" \
           : -n 1 "${env[@]}" POCL_DEVICES=pthread "$@"
}
names() { grep 'Device #' "$1" | sed 's/.*Device #[0-9]*: \([a-z]*\)-.*/\1/' | tr '\n' ' '; }

launch "" clinfo -l >all.out
expect_eq "every device of every rank, rank order" "pthread basic basic pthread " "$(names all.out)"
expect_eq "one platform" 1 "$(grep -c '^Platform #' all.out)"

check() { # check "QUERY" "expected device kinds"
  launch "$1" clinfo -l >q.out
  expect_eq "SLUICE_DEVICES=\"$1\"" "$2" "$(names q.out)"
}
check "SELECT ALL FROM NODE 1, 2" "basic basic pthread "
check "SELECT ALL ORDER BY node DESC" "pthread basic basic pthread "
check "SELECT POS 3" "pthread "
check "SELECT ALL WHERE name LIKE 'basic*'" "basic basic "
check "SELECT TOP 1 WHERE node = 2 OR index = 1" "basic "

# The first device the program sees is rank 1's second basic device: cl_vector_add runs there.
POCL_DEVICES=basic "$SLUICE_APPS_DIR/cl_vector_add" >local.out
launch "SELECT ALL WHERE node = 1 AND index = 1" "$SLUICE_APPS_DIR/cl_vector_add" >remote.out
diff local.out remote.out >diff.out || fail "vector add on rank 1's device differs: $(cat diff.out)"
expect_contains "vector add on a remote device is right" "wrong=0" "$(cat remote.out)"

rc_of launch "SELECT TOP x" clinfo -l >bad.out 2>bad.err
expect_eq "bad query: exit code" 2 "$rc"
expect_contains "bad query: column and what was expected" "SLUICE_DEVICES: column 12: expected a number after TOP" "$(cat bad.err)"
# (every rank stops on the query: one rank's abort may end another mid-stop, and hydra then
# prints its banner on stdout, docs/FAULTS.md; only clinfo's own output would be a failure)
[ -z "$(without_hydra_banner < bad.out)" ] || fail "bad query: clinfo ran: $(head -3 bad.out)"
echo "ok: bad query stopped the job before clinfo ran"
