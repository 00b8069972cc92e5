# SPDX-License-Identifier: MIT
# MPI roles seen through the trace, under real mpiexec -n 3:
#  - an unmodified MPI program: 3 rank trace files; each rank's MPI_INIT says the application
#    initialized MPI (and sluice got MPI_THREAD_MULTIPLE), each MPI_FINALIZE that the
#    application finalized; stdout and exit status as without sluice.
#  - an unmodified non-MPI program (coreutils dd in a shell per rank) whose checkpoint capture
#    needs a communicator at exit: sluice initializes MPI lazily in dd (not in the shell), once
#    per rank, finalizes it at exit, and the progress thread's events are recorded.
apps=$SLUICE_APPS_DIR
trace=$SLUICE_BIN_DIR/sluice-trace
export SLUICE_PROGRESS_SLEEP_MAX=2000

count() { grep -c -- "$1" <<<"$2" || true; }

# --- MPI program ---
plain=$(mpirun 3 "$apps/mpi_ring" 4) && rc_plain=0 || rc_plain=$?
with=$(SLUICE_TRACE_DIR=$PWD/ring run_dist 3 "$apps/mpi_ring" 4) \
  && rc_with=0 || rc_with=$?
expect_eq "ring stdout" "$plain" "$with"
expect_eq "ring exit status" "$rc_plain" "$rc_with"
for r in 0 1 2; do
  expect_eq "ring: one trace file for rank $r" 1 "$(ls ring/rank-$r.pid-*.sluicetrace | wc -l)"
done
expect_eq "ring: three trace files in all" 3 "$(ls ring | wc -l)"
dump=$("$trace" dump ring)
expect_eq "ring: MPI_INIT by the application, MULTIPLE for sluice, on every rank" 3 \
  "$(count 'MPI_INIT provided thread level=3, world size=3, initialized by sluice=0' "$dump")"
expect_eq "ring: MPI_FINALIZE by the application on every rank" 3 \
  "$(count 'MPI_FINALIZE by sluice=0' "$dump")"
summary=$("$trace" summary ring)
expect_contains "summary lists MPI_INIT" "MPI_INIT" "$summary"
expect_contains "summary lists MPI_FINALIZE" "MPI_FINALIZE" "$summary"

# --- non-MPI program: a shell per rank running dd, with checkpoint capture ---
script='r=${PMI_RANK:-$OMPI_COMM_WORLD_RANK}
dd if=/dev/zero of=ckpt.$r bs=1k count=3 status=none; echo "rank $r: $?"'
mkdir plain lazy
plain=$(cd plain && mpirun 3 sh -c "$script" | sort) && rc_plain=0 || rc_plain=$?
with=$(cd lazy && SLUICE_CAPTURE='ckpt.%r' SLUICE_TRACE_DIR=$PWD/tr \
  run_dist 3 sh -c "$script" | sort) && rc_with=0 || rc_with=$?
expect_eq "dd stdout" "$plain" "$with"
expect_eq "dd exit status" "$rc_plain" "$rc_with"
dump=$("$trace" dump lazy/tr)
expect_eq "dd: MPI initialized lazily by sluice, once per rank" 3 \
  "$(count 'MPI_INIT provided thread level=3, world size=3, initialized by sluice=1' "$dump")"
expect_eq "dd: no other MPI initialization" 3 "$(count 'MPI_INIT' "$dump")"
expect_eq "dd: MPI finalized by sluice at exit, once per rank" 3 \
  "$(count 'MPI_FINALIZE by sluice=1' "$dump")"
for r in 0 1 2; do
  grep -q "^rank $r .* PROGRESS_SLEEP" <<<"$dump" || fail "dd: no PROGRESS_SLEEP on rank $r"
  grep -q "^rank $r .* PROGRESS_WAKE" <<<"$dump" || fail "dd: no PROGRESS_WAKE on rank $r"
done
echo "ok: progress events on every rank"
# the MPI events come from dd, not from the shell that ran it
for pid in $(grep "MPI_INIT" <<<"$dump" | awk '{print $4}'); do
  prog=$("$trace" summary lazy/tr | awk -v p="$pid" '$2 == p {print $NF}')
  expect_eq "dd: MPI initialized in pid $pid, which is dd" "/usr/bin/dd" "$prog"
done
