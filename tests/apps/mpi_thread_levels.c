/* SPDX-License-Identifier: MIT */
/* A plain MPI program that reports what the MPI library tells it about initialization and
 * thread support. Usage: mpi_thread_levels init|single|funneled|serialized|multiple
 * ("init" calls MPI_Init, the others MPI_Init_thread with that level). Rank 0 prints. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static const char *const names[] = {"single", "funneled", "serialized", "multiple"};
static const int levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                             MPI_THREAD_MULTIPLE};

static const char *name_of(int level)
{
    for (int i = 0; i < 4; i++)
        if (levels[i] == level)
            return names[i];
    return "invalid";
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s init|single|funneled|serialized|multiple\n", argv[0]);
        return 2;
    }
    int before = -1, fin_before = -1;
    MPI_Initialized(&before);
    MPI_Finalized(&fin_before);

    int provided = -1;
    const char *req = argv[1];
    if (strcmp(req, "init") == 0) {
        MPI_Init(&argc, &argv);
    } else {
        int required = -1;
        for (int i = 0; i < 4; i++)
            if (strcmp(req, names[i]) == 0)
                required = levels[i];
        if (required < 0) {
            fprintf(stderr, "unknown level %s\n", req);
            return 2;
        }
        MPI_Init_thread(&argc, &argv, required, &provided);
    }
    int after = -1, query = -1, is_main = -1, rank = 0;
    MPI_Initialized(&after);
    MPI_Query_thread(&query);
    MPI_Is_thread_main(&is_main);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int fin_mid = -1;
    MPI_Finalized(&fin_mid);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    int fin_after = -1;
    MPI_Finalized(&fin_after);
    if (rank == 0) {
        printf("requested %s\n", req);
        printf("initialized before %d after %d\n", before, after);
        if (provided >= 0)
            printf("provided %s\n", name_of(provided));
        printf("query_thread %s\n", name_of(query));
        printf("is_thread_main %d\n", is_main);
        printf("finalized before %d during %d after %d\n", fin_before, fin_mid, fin_after);
    }
    return 0;
}
