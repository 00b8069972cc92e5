/* SPDX-License-Identifier: MIT */
/* Global-array checkpoint benchmark (bench/layout_io.sh, docs/LAYOUT.md): an E x E x E array
 * of doubles, block-decomposed over MPI_Dims_create's grid, written and read four ways.
 *
 *   romio-write DIR E      the first seed's code: one shared file, MPI_File_set_view with the
 *                          nested-hvector block type, MPI_File_write_all, MPI_File_sync (hints
 *                          from LAYOUT_BENCH_CB: automatic or enable, and LAYOUT_BENCH_UNIT)
 *   romio-read DIR E       the same view, MPI_File_read_all of this job's blocks
 *   fpp-write DIR E H      the unmodified per-rank program: DIR/ckpt.<rank> = H bytes of header
 *                          and the block (run it under sluice with SLUICE_LAYOUT)
 *   fpp-read DIR E H       reads DIR/ckpt.<rank> back (a restart, any rank count)
 *
 * Every rank prints "T rank start end fin" (CLOCK_REALTIME seconds; start is rank 0's, taken
 * after a barrier; end after the data is durable: MPI_File_close after MPI_File_sync for ROMIO,
 * the return of MPI_Finalize, sluice's exit flush, for the per-rank writer; after the read for
 * reads; fin after MPI_Finalize in every mode, the one end point that both writers share).
 * Values are checked on reads (a wrong value exits 1). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static MPI_Datatype block_type(long N, long nx, long ny, long nz)
{
    MPI_Datatype row, slab, blk;
    MPI_Type_contiguous((int)nx, MPI_DOUBLE, &row);
    MPI_Type_create_hvector((int)ny, 1, (MPI_Aint)N * (MPI_Aint)sizeof(double), row, &slab);
    MPI_Type_create_hvector((int)nz, 1, (MPI_Aint)N * N * (MPI_Aint)sizeof(double), slab, &blk);
    MPI_Type_commit(&blk);
    MPI_Type_free(&row);
    MPI_Type_free(&slab);
    return blk;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr,
                "usage: sluice-bench-layout_io romio-write|romio-read|fpp-write|fpp-read DIR E [H]\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int rank, size, dims[3] = {0, 0, 0}, periods[3] = {0, 0, 0}, c[3];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Dims_create(size, 3, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    MPI_Cart_coords(cart, rank, 3, c);
    const char *mode = argv[1], *dir = argv[2];
    long E = atol(argv[3]), H = argc > 4 ? atol(argv[4]) : 0, lo[3], n[3];
    for (int d = 0; d < 3; d++) {
        lo[d] = E * c[d] / dims[d];
        n[d] = E * (c[d] + 1) / dims[d] - lo[d];
    }
    size_t count = (size_t)(n[0] * n[1] * n[2]);
    double *blk = malloc((count + 1) * sizeof(double));
    char *hdr = calloc(1, (size_t)H + 1);
    size_t i = 0;
    for (long z = 0; z < n[0]; z++)
        for (long y = 0; y < n[1]; y++)
            for (long x = 0; x < n[2]; x++)
                blk[i++] = (double)(((lo[0] + z) * E + lo[1] + y) * E + lo[2] + x);
    double start = now();
    MPI_Barrier(MPI_COMM_WORLD);
    start = now();
    MPI_Bcast(&start, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int reading = strstr(mode, "read") != NULL, bad = 0;
    if (reading)
        memset(blk, 0, count * sizeof(double));
    char path[4096];
    double end = 0;
    if (strncmp(mode, "romio", 5) == 0) {
        snprintf(path, sizeof path, "%s/array.f8", dir);
        MPI_Info info;
        MPI_Info_create(&info);
        const char *cb = getenv("LAYOUT_BENCH_CB"), *unit = getenv("LAYOUT_BENCH_UNIT");
        if (cb && *cb)
            MPI_Info_set(info, "romio_cb_write", cb);
        if (unit && *unit)
            MPI_Info_set(info, "striping_unit", unit);
        MPI_File fh;
        MPI_File_open(MPI_COMM_WORLD, path, reading ? MPI_MODE_RDONLY : MPI_MODE_CREATE | MPI_MODE_WRONLY,
                      info, &fh);
        MPI_Datatype ft = block_type(E, n[2], n[1], n[0]);
        MPI_Offset disp = (MPI_Offset)((lo[0] * E * E + lo[1] * E + lo[2]) * (long)sizeof(double));
        MPI_File_set_view(fh, disp, MPI_DOUBLE, ft, "native", info);
        if (reading) {
            MPI_File_read_all(fh, blk, (int)count, MPI_DOUBLE, MPI_STATUS_IGNORE);
        } else {
            MPI_File_write_all(fh, blk, (int)count, MPI_DOUBLE, MPI_STATUS_IGNORE);
            MPI_File_sync(fh);
        }
        MPI_File_close(&fh);
        end = now();
        MPI_Type_free(&ft);
        MPI_Info_free(&info);
    } else {
        snprintf(path, sizeof path, "%s/ckpt.%d", dir, rank);
        FILE *f = fopen(path, reading ? "rb" : "wb");
        if (!f) {
            fprintf(stderr, "rank %d: cannot open %s\n", rank, path);
            bad = 1;
        } else if (reading) {
            bad = fread(hdr, 1, (size_t)H, f) != (size_t)H || fread(blk, sizeof(double), count, f) != count;
            fclose(f);
        } else {
            bad = fwrite(hdr, 1, (size_t)H, f) != (size_t)H || fwrite(blk, sizeof(double), count, f) != count;
            bad |= fclose(f) != 0;
        }
        end = now();
    }
    i = 0;
    for (long z = 0; reading && z < n[0]; z++)
        for (long y = 0; y < n[1]; y++)
            for (long x = 0; x < n[2]; x++)
                bad |= blk[i++] != (double)(((lo[0] + z) * E + lo[1] + y) * E + lo[2] + x);
    if (bad)
        fprintf(stderr, "rank %d: %s failed or read wrong values\n", rank, mode);
    MPI_Barrier(MPI_COMM_WORLD); /* as a code that goes on computing after its checkpoint */
    MPI_Comm_free(&cart);
    MPI_Finalize();
    double fin = now();
    if (strcmp(mode, "fpp-write") == 0)
        end = fin; /* durable under sluice: its exit flush returns from MPI_Finalize */
    printf("T %d %.6f %.6f %.6f\n", rank, start, end, fin);
    free(blk);
    free(hdr);
    return bad;
}
