# SPDX-License-Identifier: MIT
# Sets that cannot complete, under an MPI program: only even ranks write members of a set
# (rank 0 writes two, in another order than the others), odd ranks never take part; a set
# whose home may be a rank that never writes still commits, with the members it has, while
# the program is running (it waits for the container to appear before calling MPI_Finalize),
# and nothing deadlocks. Odd and even rank counts.
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
for n in 3 4 5; do
  d=$PWD/run$n
  mkdir -p "$d"
  export SLUICE_CAPTURE="$d/part.%r"
  run_dist "$n" ./partial "$d" \
    || fail "$n ranks: the job failed or hung"
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
