/* SPDX-License-Identifier: MIT */
/* Benchmark: what a remote write to a device can reach on this machine without sluice, the
 * bound for sluice's remote/MPI write figure (bench/dist_opencl.sh). A plain MPI + OpenCL
 * program: rank 0 sends SIZE bytes, rank 1 puts them on its device and answers with 0 bytes,
 * rank 0 timing each exchange as dist_mpi_pingpong does. Modes, side by side per size:
 *   mpi:       the message into malloc'd host memory only (dist_mpi_pingpong's "send");
 *   device:    rank 1's device write of SIZE bytes from staging alone, no MPI data (a 0-byte
 *              message starts it);
 *   serial:    the message into staging, then one device write;
 *   pipelined: the message in pieces into staging, each piece's device write enqueued as soon as
 *              it arrived, 2 pieces received ahead: what sluice's serving rank does (--piece
 *              sets the piece; default as sluice's, a sixteenth of SIZE within 256K..8M);
 *   posted:    the same with every piece's receive posted at once (MPI paces the pieces).
 * Staging is pinned where the device is not a CPU (a buffer created CL_MEM_ALLOC_HOST_PTR and
 * kept mapped, as sluice does), else malloc'd. Rank 0 prints, per mode and size:
 *   <mode> <bytes> <reps> <GB/s> <median us>
 * and the ratio of each mode to mpi. Never passes or fails on timing.
 *
 *   mpiexec -n 2 sluice-bench-dist_write_bound [--piece SIZE] [--type gpu|cpu|all] [--thread-multiple]
 *                                              [common options]
 * --thread-multiple starts MPI at MPI_THREAD_MULTIPLE, the level sluice asks for.
 */
#include "dist_bench.h"
#include "dist_mpi_pair.h"
#include <CL/cl.h>

#define PROG "sluice-bench-dist_write_bound"

enum mode { MODE_MPI, MODE_DEVICE, MODE_SERIAL, MODE_PIPELINED, MODE_POSTED, NMODES };
static const char *const mode_name[NMODES] = {"mpi", "device", "serial", "pipelined", "posted"};
#define AHEAD 2

static MPI_Comm pair = MPI_COMM_NULL;
static cl_command_queue queue;
static cl_mem devbuf;
static unsigned char *staging; /* rank 1: where the device's data is received */
static unsigned char *host;    /* rank 1: plain host memory, for mpi (as dist_mpi_pingpong) */

static void die(const char *what, int code)
{
    fprintf(stderr, PROG ": %s failed (%d)\n", what, code);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Rank 1: the first device of the wanted type, a queue, a device buffer and staging of max bytes. */
static void open_device(cl_device_type type, size_t max)
{
    cl_platform_id pl[16];
    cl_uint np = 0;
    cl_device_id dev = NULL;
    cl_int err = clGetPlatformIDs(16, pl, &np);
    for (cl_uint i = 0; err == CL_SUCCESS && i < np && dev == NULL; i++)
        if (clGetDeviceIDs(pl[i], type, 1, &dev, NULL) != CL_SUCCESS)
            dev = NULL;
    if (dev == NULL)
        die("finding a device of the type asked (--type)", err);
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (err != CL_SUCCESS)
        die("clCreateContext", err);
    queue = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    if (err != CL_SUCCESS)
        die("clCreateCommandQueueWithProperties", err);
    devbuf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, max, NULL, &err);
    if (err != CL_SUCCESS)
        die("clCreateBuffer", err);
    cl_device_type t = 0;
    clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof t, &t, NULL);
    if (!(t & CL_DEVICE_TYPE_CPU)) {
        cl_mem pin = clCreateBuffer(ctx, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, max, NULL, &err);
        if (err == CL_SUCCESS)
            staging = clEnqueueMapBuffer(queue, pin, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, max, 0, NULL,
                                         NULL, &err);
    }
    if (staging == NULL && (staging = malloc(max)) == NULL)
        die("allocating staging", 0);
    if ((host = malloc(max)) == NULL)
        die("allocating host memory", 0);
    memset(staging, 1, max); /* every page touched before timing */
    memset(host, 1, max);
    char name[256] = "?";
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
    int pinned = !(t & CL_DEVICE_TYPE_CPU) && err == CL_SUCCESS;
    MPI_Send(name, (int)sizeof name, MPI_CHAR, 0, 1, pair);
    MPI_Send(&pinned, 1, MPI_INT, 0, 1, pair);
}

/* Rank 1's side of one exchange. */
static void receive(enum mode m, size_t size, size_t piece)
{
    if (m == MODE_MPI || m == MODE_SERIAL)
        MPI_Recv(m == MODE_MPI ? host : staging, (int)size, MPI_BYTE, 0, 0, pair, MPI_STATUS_IGNORE);
    if (m == MODE_DEVICE)
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 0, pair, MPI_STATUS_IGNORE);
    if (m == MODE_DEVICE || m == MODE_SERIAL) {
        cl_int e = clEnqueueWriteBuffer(queue, devbuf, CL_TRUE, 0, size, staging, 0, NULL, NULL);
        if (e != CL_SUCCESS)
            die("clEnqueueWriteBuffer", e);
    }
    if (m == MODE_PIPELINED || m == MODE_POSTED) {
        size_t n = (size + piece - 1) / piece, posted = 0, ahead = m == MODE_POSTED ? n : AHEAD;
        MPI_Request *rq = malloc(n * sizeof *rq);
        for (size_t done = 0; done < n; done++) {
            while (posted < n && posted < done + ahead) {
                size_t off = posted * piece, k = size - off < piece ? size - off : piece;
                MPI_Irecv(staging + off, (int)k, MPI_BYTE, 0, (int)(2 + posted), pair, &rq[posted]);
                posted++;
            }
            MPI_Wait(&rq[done], MPI_STATUS_IGNORE);
            size_t off = done * piece, k = size - off < piece ? size - off : piece;
            cl_int e = clEnqueueWriteBuffer(queue, devbuf, CL_FALSE, off, k, staging + off, 0, NULL, NULL);
            if (e != CL_SUCCESS)
                die("clEnqueueWriteBuffer", e);
            clFlush(queue);
        }
        clFinish(queue);
        free(rq);
    }
    MPI_Send(NULL, 0, MPI_BYTE, 0, 0, pair);
}

/* Rank 0's side: the data as the mode wants it (pieces are sent at once, as sluice's rank 0 does). */
static void send(enum mode m, const unsigned char *buf, size_t size, size_t piece)
{
    if (m == MODE_PIPELINED || m == MODE_POSTED) {
        size_t n = (size + piece - 1) / piece;
        MPI_Request *rq = malloc(n * sizeof *rq);
        for (size_t i = 0; i < n; i++) {
            size_t off = i * piece, k = size - off < piece ? size - off : piece;
            MPI_Isend(buf + off, (int)k, MPI_BYTE, 1, (int)(2 + i), pair, &rq[i]);
        }
        for (size_t i = 0; i < n; i++)
            MPI_Wait(&rq[i], MPI_STATUS_IGNORE);
        free(rq);
    } else {
        MPI_Send(buf, m == MODE_DEVICE ? 0 : (int)size, MPI_BYTE, 1, 0, pair);
    }
    MPI_Recv(NULL, 0, MPI_BYTE, 1, 0, pair, MPI_STATUS_IGNORE);
}

/* sluice's default piece (SLUICE_DIST_CHUNK=0): a sixteenth of the transfer within 256K..8M. */
static size_t default_piece(size_t size)
{
    size_t p = size / 16;
    return p < ((size_t)256 << 10) ? (size_t)256 << 10 : p > ((size_t)8 << 20) ? (size_t)8 << 20 : p;
}

int main(int argc, char **argv)
{
    int provided, level = MPI_THREAD_SINGLE;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--thread-multiple") == 0)
            level = MPI_THREAD_MULTIPLE; /* as sluice's own MPI start-up asks */
    MPI_Init_thread(&argc, &argv, level, &provided);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    struct dist_opts o;
    dist_default_opts(&o);
    dist_parse_sizes(&o, "16M 64M 256M", PROG);
    size_t piece_opt = 0;
    cl_device_type type = CL_DEVICE_TYPE_GPU;
    for (int i = 1; i < argc; i++) {
        int r = 0;
        if (strcmp(argv[i], "--piece") == 0 && i + 1 < argc)
            r = (piece_opt = dist_parse_size(argv[++i])) > 0 ? 1 : -1;
        else if (strcmp(argv[i], "--type") == 0 && i + 1 < argc) {
            const char *t = argv[++i];
            type = strcmp(t, "gpu") == 0   ? CL_DEVICE_TYPE_GPU
                   : strcmp(t, "cpu") == 0 ? CL_DEVICE_TYPE_CPU
                   : strcmp(t, "all") == 0 ? CL_DEVICE_TYPE_ALL
                                           : 0;
            r = type ? 1 : -1;
        } else if (strcmp(argv[i], "--thread-multiple") == 0) {
            r = 1;
        } else {
            r = dist_common_opt(&o, argc, argv, &i, PROG);
        }
        if (r != 1)
            return dist_mpi_refuse(rank,
                                   "usage: mpiexec -n 2 " PROG
                                   " [--piece SIZE] [--type gpu|cpu|all] [--thread-multiple] [options]\n%s",
                                   dist_common_usage);
    }
    if (nranks < 2)
        return dist_mpi_refuse(rank, PROG ": needs 2 ranks (mpiexec -n 2)\n");
    pair = dist_mpi_pair(rank);
    if (rank <= 1) {
        size_t max = 0;
        for (int s = 0; s < o.nsizes; s++)
            max = o.sizes[s] > max ? o.sizes[s] : max;
        unsigned char *buf = NULL;
        if (rank == 1) {
            open_device(type, max);
        } else {
            char name[256];
            int pinned = 0;
            MPI_Recv(name, (int)sizeof name, MPI_CHAR, 1, 1, pair, MPI_STATUS_IGNORE);
            MPI_Recv(&pinned, 1, MPI_INT, 1, 1, pair, MPI_STATUS_IGNORE);
            printf("device %s (rank 1), staging %s, MPI thread level %s\n", name,
                   pinned ? "pinned" : "malloc'd", provided == MPI_THREAD_MULTIPLE ? "multiple" : "single");
            if ((buf = malloc(max)) == NULL)
                die("allocating the send buffer", 0);
            memset(buf, 0x5a, max);
        }
        for (int s = 0; s < o.nsizes; s++) {
            size_t size = o.sizes[s], piece = piece_opt ? piece_opt : default_piece(size);
            int reps = dist_reps_for(&o, size);
            double gbps[NMODES];
            for (int m = 0; m < NMODES; m++) {
                double *dt = malloc((size_t)reps * sizeof *dt);
                MPI_Barrier(pair);
                for (int i = -1; i < reps; i++) {
                    double t0 = dist_now();
                    if (rank == 0)
                        send((enum mode)m, buf, size, piece);
                    else
                        receive((enum mode)m, size, piece);
                    if (i >= 0)
                        dt[i] = dist_now() - t0;
                }
                struct dist_stats st = dist_stats_of(dt, reps);
                free(dt);
                gbps[m] = (double)size / st.median / 1e9;
                if (rank == 0)
                    printf("%s %zu %d %.3f %.1f\n", mode_name[m], size, reps, gbps[m], st.median * 1e6);
            }
            if (rank == 0)
                printf("ratio %zu piece %zu: device/mpi %.2f serial/mpi %.2f pipelined/mpi %.2f posted/mpi "
                       "%.2f\n",
                       size, piece, gbps[MODE_DEVICE] / gbps[MODE_MPI], gbps[MODE_SERIAL] / gbps[MODE_MPI],
                       gbps[MODE_PIPELINED] / gbps[MODE_MPI], gbps[MODE_POSTED] / gbps[MODE_MPI]);
            fflush(stdout);
        }
        free(buf);
        MPI_Comm_free(&pair);
    }
    MPI_Finalize();
    return 0;
}
