/* SPDX-License-Identifier: MIT */
/* The S-DSM paper's video pipeline over sluice's DSM (sluice_dsm.h), under mpiexec with P+2
 * ranks: rank 0 the input role, ranks 1..P process roles, rank P+1 the output role.
 *   usage: mpi_dsm_video [--opencl] FRAMES WIDTH HEIGHT OUT.raw   (under mpiexec, 3 ranks or more)
 *          mpi_dsm_video --reference FRAMES WIDTH HEIGHT OUT.raw   (one process, no DSM)
 * With --opencl each process role runs the edge stencil as an OpenCL kernel on its own device
 * (mpi_dsm_video_cl.h), the Hough transform on the host; it prints its device on stderr.
 * Every process role p has an input buffer in[p], an output buffer out[p] and a "consumed"
 * chunk ack[p] in the DSM. There is no explicit synchronization after start-up: only
 * exclusive writes and notifications. The input writes frame n into a free in[p]; that
 * notifies process p, which computes into out[p]; that notifies the output, which writes the
 * frame to OUT.raw (in frame order) and writes ack[p]; that notifies the input that in[p] is
 * free again. Each role then sits in sluice_dsm_loop() until its subscriptions are gone.
 * The output prints "frames N seconds S fps F" on stderr. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_dsm_video.h"
#include "mpi_dsm_video_cl.h"
#include "sluice_dsm.h"

#define IN_BASE 10000ul
#define OUT_BASE 20000ul
#define ACK_BASE 30000ul
#define STRIDE 64ul         /* room for a frame of up to 64 chunks in each buffer */
#define CHUNK (64ul * 1024) /* the buffers' chunk size */

static uint32_t frames, w, h;
static int nproc, rank;
static size_t frame_bytes;

/* Placement: with every rank a server (SLUICE_DSM_SERVERS=all, the default) a chunk's home is its
 * address modulo the number of ranks, so chunk i of a buffer sits at (base + i) * ranks + home.
 * Each buffer lives on the rank that waits for it (in[p] on process role p, out[p] on the output,
 * ack[p] on the input): a request then goes to a rank that is idle in its event loop or to the
 * requester itself, never to a third rank busy computing, whose answer would wait for a core. */
static unsigned long chunk_addr(unsigned long base, size_t i, int home)
{
    return (base + i) * (unsigned long)(nproc + 2) + (unsigned long)home;
}
static unsigned long in_addr(int p)
{
    return chunk_addr(IN_BASE + STRIDE * (unsigned long)p, 0, p);
}
static unsigned long out_addr(int p)
{
    return chunk_addr(OUT_BASE + STRIDE * (unsigned long)p, 0, nproc + 1);
}
static unsigned long ack_addr(int p)
{
    return chunk_addr(ACK_BASE + STRIDE * (unsigned long)p, 0, 0);
}

/* The chain of bytes at the buffer whose first chunk is addr: chunks at addr, addr + ranks, ...
 * (same home), CHUNK bytes each, the remainder last. The same call gives the same chain. */
static sluice_dsm_chain *buffer(unsigned long addr, size_t bytes)
{
    unsigned long a[STRIDE];
    size_t sz[STRIDE], n = 0;
    for (size_t off = 0; off < bytes && n < STRIDE; off += CHUNK, n++) {
        a[n] = addr + n * (unsigned long)(nproc + 2);
        sz[n] = bytes - off < CHUNK ? bytes - off : CHUNK;
    }
    return sluice_dsm_malloc_lst(a, n, sz, n, SLUICE_DSM_MESI);
}

static void die(const char *what)
{
    fprintf(stderr, "mpi_dsm_video rank %d: %s failed: %s\n", rank, what,
            sluice_dsm_strerror(sluice_dsm_last_error()));
    exit(1);
}

/* ---- input role ---------------------------------------------------------------------------- */

static uint32_t next_frame;

static void put_frame(int p)
{
    sluice_dsm_chain *c = buffer(in_addr(p), frame_bytes);
    struct video_header *hd = c ? sluice_dsm_write(c) : NULL;
    if (!hd)
        die("write of an input buffer");
    hd->w = w;
    hd->h = h;
    if (next_frame < frames) {
        hd->frame = next_frame++;
        video_make_frame(hd->frame, w, h, (unsigned char *)(hd + 1));
    } else {
        hd->frame = VIDEO_END;
    }
    if (sluice_dsm_release(c))
        die("release");
}

static void on_ack(unsigned long addr, void *args)
{
    int p = (int)(intptr_t)args;
    (void)addr;
    bool end = next_frame >= frames;
    put_frame(p); /* the next frame, or the end marker */
    if (end && sluice_dsm_unsubscribe(ack_addr(p), on_ack, args))
        die("unsubscribe");
}

static void input_role(void)
{
    for (int p = 1; p <= nproc; p++)
        if (sluice_dsm_subscribe(ack_addr(p), on_ack, (void *)(intptr_t)p))
            die("subscribe");
    if (sluice_dsm_barrier(1, (unsigned)(nproc + 2)))
        die("barrier");
    for (int p = 1; p <= nproc; p++) {
        bool end = next_frame >= frames;
        put_frame(p);
        if (end && sluice_dsm_unsubscribe(ack_addr(p), on_ack, (void *)(intptr_t)p))
            die("unsubscribe");
    }
}

/* ---- process role -------------------------------------------------------------------------- */

static unsigned char *scratch_in;
static bool use_cl;
static struct video_cl cl;

static uint32_t process_frame(const unsigned char *in, unsigned char *out)
{
    if (!use_cl)
        return video_process(in, w, h, out);
    uint32_t edges = video_cl_edges(&cl, in, out);
    video_hough(w, h, out);
    return edges;
}

static void on_input(unsigned long addr, void *args)
{
    (void)args;
    sluice_dsm_chain *in = buffer(addr, frame_bytes);
    const struct video_header *hd = in ? sluice_dsm_read(in) : NULL;
    if (!hd)
        die("read of the input buffer");
    uint32_t f = hd->frame;
    if (f != VIDEO_END)
        memcpy(scratch_in, hd + 1, (size_t)w * h);
    sluice_dsm_release(in);
    sluice_dsm_chain *out = buffer(out_addr(rank), frame_bytes);
    struct video_header *od = out ? sluice_dsm_write(out) : NULL;
    if (!od)
        die("write of the output buffer");
    od->frame = f;
    od->w = w;
    od->h = h;
    od->edges = f == VIDEO_END ? 0 : process_frame(scratch_in, (unsigned char *)(od + 1));
    sluice_dsm_release(out);
    if (f == VIDEO_END && sluice_dsm_unsubscribe(addr, on_input, NULL))
        die("unsubscribe");
}

static void process_role(void)
{
    scratch_in = malloc((size_t)w * h);
    if (use_cl) {
        video_cl_init(&cl, w, h);
        fprintf(stderr, "process role %d: edge kernel on OpenCL device %s\n", rank, cl.device);
    }
    if (sluice_dsm_subscribe(in_addr(rank), on_input, NULL))
        die("subscribe");
    if (sluice_dsm_barrier(1, (unsigned)(nproc + 2)))
        die("barrier");
}

/* ---- output role --------------------------------------------------------------------------- */

static FILE *outf;
static unsigned char *held; /* frames computed, not written yet (frame order) */
static unsigned char *ready;
static uint32_t written, ends;
static double t_start;

static void on_output(unsigned long addr, void *args)
{
    int p = (int)(intptr_t)args;
    sluice_dsm_chain *c = buffer(addr, frame_bytes);
    const struct video_header *hd = c ? sluice_dsm_read(c) : NULL;
    if (!hd)
        die("read of an output buffer");
    uint32_t f = hd->frame;
    if (f != VIDEO_END && f < frames) {
        memcpy(held + (size_t)f * w * h, hd + 1, (size_t)w * h);
        ready[f] = 1;
    }
    sluice_dsm_release(c);
    if (f == VIDEO_END) {
        ends++;
        if (sluice_dsm_unsubscribe(addr, on_output, args))
            die("unsubscribe");
        return;
    }
    while (written < frames && ready[written]) {
        fwrite(held + (size_t)written * w * h, 1, (size_t)w * h, outf);
        written++;
    }
    /* The frame is consumed: in[p] may take the next one. */
    sluice_dsm_chain *a = buffer(ack_addr(p), sizeof(uint32_t));
    uint32_t *v = a ? sluice_dsm_write(a) : NULL;
    if (!v)
        die("write of an ack");
    *v = f;
    sluice_dsm_release(a);
}

static void output_role(const char *path)
{
    outf = fopen(path, "wb");
    held = malloc((size_t)frames * w * h + 1);
    ready = calloc(frames + 1, 1);
    if (!outf || !held || !ready)
        die("opening the output");
    for (int p = 1; p <= nproc; p++)
        if (sluice_dsm_subscribe(out_addr(p), on_output, (void *)(intptr_t)p))
            die("subscribe");
    if (sluice_dsm_barrier(1, (unsigned)(nproc + 2)))
        die("barrier");
    t_start = video_now();
}

static int reference(const char *path)
{
    FILE *f = fopen(path, "wb");
    unsigned char *in = malloc((size_t)w * h), *out = malloc((size_t)w * h);
    if (!f || !in || !out)
        return 1;
    double t0 = video_now();
    for (uint32_t n = 0; n < frames; n++) {
        video_make_frame(n, w, h, in);
        video_process(in, w, h, out);
        fwrite(out, 1, (size_t)w * h, f);
    }
    double s = video_now() - t0;
    fclose(f);
    fprintf(stderr, "reference frames %u seconds %.3f fps %.2f\n", frames, s, frames / s);
    return 0;
}

int main(int argc, char **argv)
{
    int ref = argc > 1 && strcmp(argv[1], "--reference") == 0;
    use_cl = argc > 1 && strcmp(argv[1], "--opencl") == 0;
    if (use_cl)
        ref = 1; /* the numbers follow one option word */
    if (argc != 5 + ref) {
        fprintf(stderr, "usage: %s [--reference | --opencl] FRAMES WIDTH HEIGHT OUT.raw\n", argv[0]);
        return 2;
    }
    frames = (uint32_t)atoi(argv[1 + ref]);
    w = (uint32_t)atoi(argv[2 + ref]);
    h = (uint32_t)atoi(argv[3 + ref]);
    const char *path = argv[4 + ref];
    if (ref && !use_cl)
        return reference(path);
    frame_bytes = sizeof(struct video_header) + (size_t)w * h;
    if (sluice_dsm_init())
        return 1;
    rank = sluice_dsm_rank();
    nproc = sluice_dsm_size() - 2;
    if (nproc < 1) {
        fprintf(stderr, "mpi_dsm_video: needs 3 ranks or more (input, process roles, output)\n");
        return 2;
    }
    if (frame_bytes > STRIDE * CHUNK) {
        fprintf(stderr, "mpi_dsm_video: frames of %zu bytes exceed the %lu-byte buffers\n", frame_bytes,
                STRIDE * CHUNK);
        return 2;
    }
    if (rank == 0)
        input_role();
    else if (rank <= nproc)
        process_role();
    else
        output_role(path);
    if (sluice_dsm_loop())
        die("event loop");
    if (use_cl && rank >= 1 && rank <= nproc)
        video_cl_free(&cl);
    if (rank == nproc + 1) {
        double s = video_now() - t_start;
        fclose(outf);
        fprintf(stderr, "frames %u seconds %.3f fps %.2f\n", written, s, written / s);
        if (written != frames || ends != (uint32_t)nproc) {
            fprintf(stderr, "mpi_dsm_video: wrote %u of %u frames, %u of %d process roles ended\n", written,
                    frames, ends, nproc);
            return 1;
        }
    }
    return sluice_dsm_finalize() ? 1 : 0;
}
