# SPDX-License-Identifier: MIT
# An unmodified MPI program gives the same stdout and exit status with and without sluice under
# real mpiexec with 1, 2, 3 and 4 ranks (odd and even), and the thread levels, MPI_Initialized,
# MPI_Finalized and MPI_Query_thread it sees are unchanged although sluice asks the library for
# MPI_THREAD_MULTIPLE for itself.
apps=$SLUICE_APPS_DIR
# Any SLUICE_* variable makes sluice active (not inert): its MPI wrappers then do their work.
export SLUICE_PROGRESS_SLEEP_MAX=2000

run_pair() { # label n cmd...: compares a plain and a preloaded run
  local label=$1 n=$2; shift 2
  local plain with rc_plain=0 rc_with=0
  plain=$(mpirun "$n" "$@" 2>plain.err) || rc_plain=$?
  with=$(run_dist "$n" "$@" 2>with.err) || rc_with=$?
  expect_eq "$label n=$n stdout" "$plain" "$with"
  expect_eq "$label n=$n exit status" "$rc_plain" "$rc_with"
  # the launcher may report a non-zero exit on stderr; sluice itself must add nothing
  ! grep -q sluice with.err || fail "$label n=$n: sluice wrote to stderr: $(cat with.err)"
  last_output=$with
}

for n in 1 2 3 4; do
  run_pair ring "$n" "$apps/mpi_ring"
  expect_contains "ring n=$n ran" "ring of $n: token $((n * (n + 1) / 2))" "$last_output"
  expect_contains "ring n=$n allreduce" "rank $((n - 1)) of $n: sum of ranks $((n * (n - 1) / 2))" "$last_output"
  run_pair "ring exit 7" "$n" "$apps/mpi_ring" 7
done

for level in init single funneled serialized multiple; do
  for n in 2 3; do
    run_pair "thread level $level" "$n" "$apps/mpi_thread_levels" "$level"
  done
  expect_contains "$level: initialized before 0 after 1" "initialized before 0 after 1" "$last_output"
  expect_contains "$level: finalized only after MPI_Finalize" "finalized before 0 during 0 after 1" "$last_output"
done
# what the application asked for, capped by what the library gave: not sluice's MULTIPLE
run_pair "funneled provided" 3 "$apps/mpi_thread_levels" funneled
expect_contains "provided is what was asked" "provided funneled" "$last_output"
expect_contains "query_thread is what was given" "query_thread funneled" "$last_output"

# sluice really ran in those processes: one claim per rank of the last job, owned by its pid
job='hydra@*'
[ "$MPI_FLAVOUR" != openmpi ] || job='ompi-*'
claims=$(ls -d "${TMPDIR:-/tmp}/sluice-$(id -u)/claims"/$job 2>/dev/null | wc -l)
[ "$claims" -ge 1 ] || fail "no per-rank claim folder was created by the preloaded runs"
echo "ok: claim folders present"
