/* SPDX-License-Identifier: MIT */
/* The video pipeline's frames and per-frame work, shared by the DSM version
 * (mpi_dsm_video.c), the hand-written MPI version (mpi_dsm_video_p2p.c) and the single-process
 * reference (mpi_dsm_video.c --reference), so that all three compute the same bytes.
 *   frame n: synthetic grey image (moving bars and a rotating line over a gradient, noise)
 *   process: 3x3 Sobel edge magnitude, threshold, Hough transform (double sin/cos per edge
 *            pixel and angle: cost grows with the number of edges), lines above a second
 *            threshold drawn over the edge image. */
#ifndef MPI_DSM_VIDEO_H
#define MPI_DSM_VIDEO_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define VIDEO_THETAS 180
#define VIDEO_END UINT32_MAX /* frame number that ends a stream */

struct video_header {
    uint32_t frame; /* VIDEO_END: no more frames */
    uint32_t w, h;
    uint32_t edges;
};

static inline uint32_t video_noise(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

static inline void video_make_frame(uint32_t n, uint32_t w, uint32_t h, unsigned char *px)
{
    double a = 0.15 * n;
    double cx = w / 2.0, cy = h / 2.0;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            int v = (int)(40 + (x * 60) / w);
            if (((x + 3 * n) / 16) % 4 == 0)
                v += 90; /* moving vertical bars: their number of edges changes */
            double d = (x - cx) * sin(a) - (y - cy) * cos(a);
            if (fabs(d) < 2.0)
                v = 250; /* a rotating line for the Hough transform to find */
            if ((n % 5) == 0 && y > h / 3 && y < h / 3 + 3)
                v = 230; /* every fifth frame a horizontal line too */
            v += (int)(video_noise(n * 1000003u + y * w + x) % 9) - 4;
            px[y * w + x] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
}

/* The stencil: out[i] = 128 where the Sobel magnitude exceeds 200 (interior pixels), 0 elsewhere.
 * Returns the edge count. mpi_dsm_video_cl.h has the same as an OpenCL kernel. */
static inline uint32_t video_edges(const unsigned char *in, uint32_t w, uint32_t h, unsigned char *out)
{
    memset(out, 0, (size_t)w * h);
    uint32_t edges = 0;
    for (uint32_t y = 1; y + 1 < h; y++)
        for (uint32_t x = 1; x + 1 < w; x++) {
            const unsigned char *p = in + y * w + x;
            int gx = -p[-(int)w - 1] - 2 * p[-1] - p[w - 1] + p[-(int)w + 1] + 2 * p[1] + p[w + 1];
            int gy = -p[-(int)w - 1] - 2 * p[-(int)w] - p[-(int)w + 1] + p[w - 1] + 2 * p[w] + p[w + 1];
            int m = abs(gx) + abs(gy);
            if (m > 200) {
                out[y * w + x] = 128;
                edges++;
            }
        }
    return edges;
}

/* The Hough transform of the edge image (pixels at 128), lines above the threshold drawn at 255. */
static inline void video_hough(uint32_t w, uint32_t h, unsigned char *out)
{
    int rmax = (int)ceil(sqrt((double)w * w + (double)h * h));
    int nr = 2 * rmax + 1;
    uint32_t *acc = calloc((size_t)VIDEO_THETAS * (size_t)nr, sizeof *acc);
    if (!acc)
        return;
    for (uint32_t y = 1; y + 1 < h; y++)
        for (uint32_t x = 1; x + 1 < w; x++) {
            if (out[y * w + x] != 128)
                continue;
            for (int t = 0; t < VIDEO_THETAS; t++) {
                double th = t * M_PI / VIDEO_THETAS;
                int r = (int)lround(x * cos(th) + y * sin(th));
                acc[(size_t)t * nr + (size_t)(r + rmax)]++;
            }
        }
    uint32_t threshold = (w < h ? w : h) * 4 / 5;
    for (int t = 0; t < VIDEO_THETAS; t++) {
        double th = t * M_PI / VIDEO_THETAS, c = cos(th), s = sin(th);
        for (int r = 0; r < nr; r++) {
            if (acc[(size_t)t * nr + (size_t)r] < threshold)
                continue;
            double rho = r - rmax;
            /* Draw the line x cos + y sin = rho across the image. */
            if (fabs(s) > fabs(c)) {
                for (uint32_t x = 0; x < w; x++) {
                    long y = lround((rho - x * c) / s);
                    if (y >= 0 && y < (long)h)
                        out[(size_t)y * w + x] = 255;
                }
            } else {
                for (uint32_t y = 0; y < h; y++) {
                    long x = lround((rho - y * s) / c);
                    if (x >= 0 && x < (long)w)
                        out[(size_t)y * w + (size_t)x] = 255;
                }
            }
        }
    }
    free(acc);
}

/* in: w*h grey pixels; out: w*h pixels (edges, lines drawn at 255). Returns the edge count. */
static inline uint32_t video_process(const unsigned char *in, uint32_t w, uint32_t h, unsigned char *out)
{
    uint32_t edges = video_edges(in, w, h, out);
    video_hough(w, h, out);
    return edges;
}

static inline double video_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#endif
