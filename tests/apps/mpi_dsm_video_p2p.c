/* SPDX-License-Identifier: MIT */
/* The video pipeline of mpi_dsm_video.c written by hand with MPI point-to-point messages, as the
 * baseline of bench/dsm.sh: rank 0 input, ranks 1..P process roles, rank P+1 output, the same
 * frames and work (mpi_dsm_video.h), the same eager scheduling (a process role gets the next
 * frame as soon as the output has consumed its last result).
 *   usage: mpi_dsm_video_p2p FRAMES WIDTH HEIGHT OUT.raw */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_dsm_video.h"

enum { TAG_FRAME = 1, TAG_RESULT, TAG_ACK };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 5) {
        fprintf(stderr, "usage: %s FRAMES WIDTH HEIGHT OUT.raw\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    uint32_t frames = (uint32_t)atoi(argv[1]), w = (uint32_t)atoi(argv[2]), h = (uint32_t)atoi(argv[3]);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int nproc = size - 2;
    if (nproc < 1) {
        fprintf(stderr, "mpi_dsm_video_p2p: needs 3 ranks or more\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t bytes = sizeof(struct video_header) + (size_t)w * h;
    unsigned char *buf = malloc(bytes), *out = malloc(bytes);
    struct video_header *hd = (struct video_header *)buf;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        uint32_t next = 0;
        int ended = 0;
        /* One frame per process role, then one more each time the output consumed a result. */
        for (int p = 1; p <= nproc; p++) {
            hd->w = w;
            hd->h = h;
            hd->frame = next < frames ? next++ : VIDEO_END;
            if (hd->frame != VIDEO_END)
                video_make_frame(hd->frame, w, h, buf + sizeof *hd);
            else
                ended++;
            MPI_Send(buf, (int)bytes, MPI_BYTE, p, TAG_FRAME, MPI_COMM_WORLD);
        }
        while (ended < nproc) {
            int p;
            MPI_Recv(&p, 1, MPI_INT, nproc + 1, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            hd->frame = next < frames ? next++ : VIDEO_END;
            if (hd->frame != VIDEO_END)
                video_make_frame(hd->frame, w, h, buf + sizeof *hd);
            else
                ended++;
            MPI_Send(buf, (int)bytes, MPI_BYTE, p, TAG_FRAME, MPI_COMM_WORLD);
        }
    } else if (rank <= nproc) {
        for (;;) {
            MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, TAG_FRAME, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            struct video_header *od = (struct video_header *)out;
            *od = *hd;
            if (hd->frame != VIDEO_END)
                od->edges = video_process(buf + sizeof *hd, w, h, out + sizeof *od);
            MPI_Send(out, (int)bytes, MPI_BYTE, nproc + 1, TAG_RESULT, MPI_COMM_WORLD);
            if (hd->frame == VIDEO_END)
                break;
        }
    } else {
        FILE *f = fopen(argv[4], "wb");
        unsigned char *held = malloc((size_t)frames * w * h + 1), *ready = calloc(frames + 1, 1);
        uint32_t written = 0;
        int ends = 0;
        double t0 = video_now();
        while (ends < nproc) {
            MPI_Status st;
            MPI_Recv(buf, (int)bytes, MPI_BYTE, MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &st);
            if (hd->frame == VIDEO_END) {
                ends++;
                continue;
            }
            memcpy(held + (size_t)hd->frame * w * h, buf + sizeof *hd, (size_t)w * h);
            ready[hd->frame] = 1;
            while (written < frames && ready[written]) {
                fwrite(held + (size_t)written * w * h, 1, (size_t)w * h, f);
                written++;
            }
            int p = st.MPI_SOURCE;
            MPI_Send(&p, 1, MPI_INT, 0, TAG_ACK, MPI_COMM_WORLD);
        }
        double s = video_now() - t0;
        fclose(f);
        fprintf(stderr, "frames %u seconds %.3f fps %.2f\n", written, s, written / s);
    }
    free(buf);
    free(out);
    MPI_Finalize();
    return 0;
}
