# SPDX-License-Identifier: MIT
# Sets that cannot complete, under an MPI program: only even ranks write members of a set
# (rank 0 writes two, in another order than the others), odd ranks never take part; a set
# whose home may be a rank that never writes still commits, with the members it has, while
# the program is running (it waits for the container to appear before calling MPI_Finalize),
# and nothing deadlocks. Odd and even rank counts.
# While a writing rank's member waits for its version (here the 2 s until an incomplete set is
# committed), its progress thread never sleeps longer than SLUICE_PROGRESS_SLEEP_MAX (2 ms) at a
# time, so that the home's answers are noticed within that bound: before, it went into deep
# idle after 100 ms (50 ms sleeps, each answer of a commit late by up to that). Shown by the
# sleeps requested in the trace (PROGRESS_SLEEP) between the rank's close and the version's
# COMMIT_BEGIN, at 3 and 4 ranks.
#
# The program is an ordinary MPI code, compiled here with mpicc.
cat > partial.c <<'SRC'
#include <mpi.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *dir = argv[1];
    char path[4096];
    int ids[2] = {rank == 0 ? 1000 : rank, rank == 0 ? 0 : -1};
    for (int k = 0; k < 2 && rank % 2 == 0; k++) {
        if (ids[k] < 0)
            continue;
        snprintf(path, sizeof path, "%s/part.%d", dir, ids[k]);
        FILE *f = fopen(path, "w");
        if (!f) { perror(path); MPI_Abort(MPI_COMM_WORLD, 2); }
        fprintf(f, "member %d\n", ids[k]);
        fclose(f);
    }
    /* Everyone keeps running until the set is on disk. */
    snprintf(path, sizeof path, "%s/part.@r.sluice", dir);
    struct stat st;
    int i;
    for (i = 0; i < 3000 && stat(path, &st) != 0; i++)
        usleep(10000);
    if (i == 3000) { fprintf(stderr, "%s did not appear\n", path); MPI_Abort(MPI_COMM_WORLD, 3); }
    MPI_Barrier(MPI_COMM_WORLD);
    /* Every rank reads every member that was written. */
    for (int m = 0; m <= 1000; m++) {
        if (m % 2 != 0 || (m > 8 && m != 1000))
            continue;
        snprintf(path, sizeof path, "%s/part.%d", dir, m);
        FILE *f = fopen(path, "r");
        int size;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        if (m < size || m == 1000) {
            char line[64] = "", want[64];
            snprintf(want, sizeof want, "member %d\n", m);
            if (!f || !fgets(line, sizeof line, f) || strcmp(line, want) != 0) {
                fprintf(stderr, "rank %d: %s: wrong or missing\n", rank, path);
                MPI_Abort(MPI_COMM_WORLD, 4);
            }
        }
        if (f)
            fclose(f);
    }
    MPI_Finalize();
    return 0;
}
SRC
mpicc -O1 -o partial partial.c || fail "cannot compile the MPI program"

ckpt=$SLUICE_BIN_DIR/sluice-ckpt
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE
# longest_wait_sleep DUMP: per writing process, the longest sleep its progress thread asked for
# in a spell of idleness that overlaps the time from its last close to the version's start
# ("pid spells max_ns"; a spell is one PROGRESS_SLEEP event, its longest sleep asked).
longest_wait_sleep() {
  awk '
    { t = substr($7, 2) + 0 }
    $8 == "CKPT_CLOSE" { if (t > shut[$4]) shut[$4] = t }
    $8 == "COMMIT_BEGIN" && /part\.%r/ { if (!begin || t < begin) begin = t }
    $8 == "PROGRESS_SLEEP" { n++; pid[n] = $4; at[n] = t; match($0, /requested=[0-9]+/); req[n] = substr($0, RSTART + 10, RLENGTH - 10) + 0
                             match($0, /dur=[0-9]+ns/); end[n] = t + substr($0, RSTART + 4, RLENGTH - 6) / 1e9 }
    END { for (i = 1; i <= n; i++) { p = pid[i]
            if (!(p in shut) || end[i] < shut[p] + 0.01 || at[i] > begin - 0.01) continue
            spells[p]++; if (req[i] > most[p]) most[p] = req[i] }
          for (p in shut) print p, spells[p] + 0, most[p] + 0 }' "$1"
}

for n in 3 4 5; do
  d=$PWD/run$n
  mkdir -p "$d"
  export SLUICE_CAPTURE="$d/part.%r"
  trace=()
  [ "$n" = 5 ] || trace=(SLUICE_TRACE_DIR="$PWD/trace$n")
  run_dist "$n" "${trace[@]}" ./partial "$d" \
    || fail "$n ranks: the job failed or hung"
  if [ "$n" != 5 ]; then
    "$SLUICE_BIN_DIR/sluice-trace" dump "trace$n" > "dump$n.txt" || fail "$n ranks: sluice-trace dump failed"
    longest_wait_sleep "dump$n.txt" > "sleeps$n.txt"
    expect_eq "$n ranks: writing processes traced" "$(( (n + 1) / 2 ))" "$(wc -l < "sleeps$n.txt")"
    while read -r pid spells most; do
      echo "$n ranks, pid $pid: $spells idle spells while its member waited, longest sleep asked $most ns"
      [ "$spells" -gt 0 ] || fail "$n ranks, pid $pid: no idle spell between its close and the version's start"
      [ "$most" -le 2000000 ] || fail "$n ranks, pid $pid: slept $most ns at a time while its member waited (at most SLUICE_PROGRESS_SLEEP_MAX, 2 ms)"
    done < "sleeps$n.txt"
  fi
  "$ckpt" verify "$d/part.@r.sluice" > /dev/null || fail "$n ranks: container does not verify"
  expect_eq "$n ranks: members" "$(( (n + 1) / 2 + 1 ))" "$("$ckpt" ls "$d" | grep -c "$d/part\.[0-9]")"
  expect_eq "$n ranks: stage empty" "" "$(ls -A "$SLUICE_STAGE_DIR")"
done

# A non-MPI program whose writing ranks wait in MPI_Init (their first close starts the commit
# engine) while the other ranks' processes end with _exit() without writing: dash's `exit`
# builtin does. Those processes still take part in the exit flush, as exit() would make them,
# so the job ends and the container holds exactly the members written.
for n in 2 3; do
  d=$PWD/dash$n
  mkdir -p "$d"
  export SLUICE_CAPTURE="$d/sh.%r"
  RUN_TIMEOUT=60 run_dist "$n" dash -c \
    'if [ "$PMI_RANK" = 1 ]; then echo "rank $PMI_RANK" > '"$d"'/sh.$PMI_RANK; fi; exit 0' \
    || fail "dash, $n ranks: the job failed or hung (rc $?)"
  [ ! -e "$d/sh.1" ] || fail "dash, $n ranks: a plain file was left"
  expect_eq "dash, $n ranks: members" "1" "$("$ckpt" ls "$d" | grep -c "$d/sh\.1")"
  expect_eq "dash, $n ranks: content" "rank 1" "$(run_sluice cat "$d/sh.1")"
done
