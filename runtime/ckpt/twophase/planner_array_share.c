/* SPDX-License-Identifier: MIT */
/* A participant's own pieces of a set laid out as a global array (sluice_tp_array_share,
 * planner_array.h), cut from the layout record straight in file order.
 *
 * Every member is a cursor over its runs (its header, then its rows merged where contiguous in
 * the file), clipped to one stretch of the file: a writer's own member everywhere but in its own
 * domain, on an aggregator each member that touches the domain within the domain. The stretches
 * of one member are disjoint and members never share a byte, so a binary heap of the cursors,
 * keyed by where each one's next piece starts, hands the pieces out in file order, the plan's
 * order: no sort afterwards. (An aggregator's 32,776 pieces of a 16 MiB array on 8 ranks: the
 * merge sort that ordered them, through a second buffer as large, took more than the cut itself
 * in a fresh process.) Large piece lists are huge-page memory put in place at once (hugebuf.h). */
#include "ckpt/twophase/planner_array.h"

#include "common/hugebuf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* From this many bytes of pieces on, huge pages (one fault per 2 MiB in a fresh process). */
enum { HUGE_PIECES = 1 << 20 };

/* One member's runs within [lo, hi): the current one is (file, logical, len), len 0 once done. */
struct cursor {
    struct sluice_array_block b;
    uint64_t head;   /* its header's offset, UINT64_MAX once handed out (or none) */
    uint64_t k;      /* the next row */
    uint64_t k_file; /* where row k starts (UINT64_MAX: past the last row) */
    uint64_t lo, hi; /* the stretch of the file it is clipped to */
    uint64_t file, logical, len;
    size_t local;
    int src;
};

/* The first row of block b that ends past `at` (past = row_len), or starts at or past it
 * (past = 0); b->nrows when none. Rows lie in storage order. */
static uint64_t first_row_at(const struct sluice_array *a, const struct sluice_array_block *b, uint64_t at,
                             uint64_t past)
{
    uint64_t lo = 0, hi = b->nrows;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (a->array_offset + sluice_array_row_offset(a, b, mid) + past <= at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Where row k of c's block starts in the file, UINT64_MAX past the last. */
static uint64_t row_file(const struct sluice_array *a, const struct cursor *c, uint64_t k)
{
    return k < c->b.nrows ? a->array_offset + sluice_array_row_offset(a, &c->b, k) : UINT64_MAX;
}

/* Moves c to its next run that overlaps [lo, hi); len 0 when there is none. The header comes
 * where it lies among the rows (before them in a container); rows are merged while contiguous in
 * the file, never past hi (the clip would cut them there). */
static void next_run(const struct sluice_array *a, struct cursor *c)
{
    for (;;) {
        c->len = 0;
        uint64_t row = c->k_file;
        if (row >= c->hi) {
            c->k = c->b.nrows; /* rows lie in storage order: none further is in the stretch */
            c->k_file = row = UINT64_MAX;
        }
        if (c->head != UINT64_MAX && c->head < row) {
            uint64_t h = c->head;
            c->head = UINT64_MAX;
            if (h >= c->hi || h + a->header <= c->lo)
                continue;
            c->file = h;
            c->logical = 0;
            c->len = a->header;
            return;
        }
        if (row == UINT64_MAX)
            return;
        c->file = row;
        c->logical = a->header + c->k * c->b.row_len;
        c->len = c->b.row_len;
        for (;;) {
            c->k_file = row_file(a, c, ++c->k);
            if (c->k_file != c->file + c->len || c->k_file >= c->hi)
                return;
            c->len += c->b.row_len;
        }
    }
}

static void cursor_start(const struct sluice_array *a, const uint32_t *grid,
                         const struct sluice_tp_array_who *w, uint64_t lo, uint64_t hi, struct cursor *c)
{
    sluice_array_block(a, grid, (uint32_t)w->member_rank, &c->b);
    c->head = a->header ? a->header_offset + (uint64_t)w->member_rank * a->header : UINT64_MAX;
    c->k = first_row_at(a, &c->b, lo, c->b.row_len);
    c->k_file = row_file(a, c, c->k);
    c->lo = lo;
    c->hi = hi;
    c->local = w->local;
    c->src = w->src;
    next_run(a, c);
}

/* Where c's next piece starts. */
static uint64_t key(const struct cursor *c)
{
    return c->file > c->lo ? c->file : c->lo;
}

/* A heap entry: a cursor and its key, kept beside it so that sifting reads no cursor. */
struct entry {
    uint64_t key;
    size_t c;
};

static void sift_down(struct entry *heap, size_t n, size_t i)
{
    struct entry e = heap[i];
    for (;;) {
        size_t l = 2 * i + 1;
        if (l >= n)
            break;
        if (l + 1 < n && heap[l + 1].key < heap[l].key)
            l++;
        if (heap[l].key >= e.key)
            break;
        heap[i] = heap[l];
        i = l;
    }
    heap[i] = e;
}

/* The pieces being made: huge pages (bytes > 0) or malloc'ed (bytes 0). */
struct pieces {
    struct sluice_tp_piece *v;
    size_t n, cap, bytes;
    const struct cursor *c; /* the run being cut */
};

static struct sluice_tp_piece *pieces_alloc(size_t cap, size_t *bytes)
{
    *bytes = cap * sizeof(struct sluice_tp_piece) >= HUGE_PIECES ? cap * sizeof(struct sluice_tp_piece) : 0;
    return *bytes ? sluice_hugebuf_alloc(*bytes) : malloc(cap * sizeof(struct sluice_tp_piece));
}

void sluice_tp_pieces_free(struct sluice_tp_piece *v, size_t bytes)
{
    if (bytes)
        sluice_hugebuf_free(v, bytes);
    else
        free(v);
}

static int emit(void *arg, size_t di, uint32_t round, uint64_t x, uint64_t e)
{
    struct pieces *p = arg;
    if (p->n == p->cap) { /* the estimate below is a bound but for window cuts */
        size_t bytes, cap = p->cap * 2;
        struct sluice_tp_piece *v = pieces_alloc(cap, &bytes);
        if (!v)
            return -ENOMEM;
        memcpy(v, p->v, p->n * sizeof *v);
        sluice_tp_pieces_free(p->v, p->bytes);
        p->v = v;
        p->cap = cap;
        p->bytes = bytes;
    }
    const struct cursor *c = p->c;
    p->v[p->n++] =
        (struct sluice_tp_piece){c->local, c->logical + (x - c->file), x, e - x, c->src, (uint32_t)di, round};
    return 0;
}

/* Room for the pieces of c's member within its stretch with no window cut in them: its header
 * and one per row (runs merge rows, so this is an upper bound). */
static uint64_t pieces_at_most(const struct sluice_array *a, const struct cursor *c)
{
    return 1 + first_row_at(a, &c->b, c->hi, 0) - first_row_at(a, &c->b, c->lo, c->b.row_len);
}

int sluice_tp_array_share(const struct sluice_array *a, const struct sluice_tp_domain *d, size_t nd,
                          uint64_t round_size, const struct sluice_tp_array_who *mine, size_t nmine, long own,
                          const struct sluice_tp_array_who *who, size_t nwho, struct sluice_tp_piece **out,
                          size_t *nout, size_t *out_bytes)
{
    uint32_t grid[SLUICE_ARRAY_DIMS_MAX];
    *out = NULL;
    *nout = 0;
    *out_bytes = 0;
    if (sluice_array_grid(a, a->nprocs, grid, NULL, 0) || round_size == 0 || (own >= 0 && (size_t)own >= nd))
        return -EINVAL;
    for (size_t i = 0; i < nmine + nwho; i++) {
        int r = i < nmine ? mine[i].member_rank : who[i - nmine].member_rank;
        if (r < 0 || (uint32_t)r >= a->nprocs)
            return -EINVAL;
    }
    /* Own members everywhere but in the own domain (before it and after it), whose pieces all
     * come from who, clipped to it. */
    size_t ncur = own >= 0 ? 2 * nmine + nwho : nmine;
    struct cursor *cs = malloc((ncur ? ncur : 1) * sizeof *cs);
    struct entry *heap = malloc((ncur ? ncur : 1) * sizeof *heap);
    if (!cs || !heap) {
        free(cs);
        free(heap);
        return -ENOMEM;
    }
    size_t nc = 0;
    for (size_t i = 0; i < nmine; i++) {
        if (own < 0) {
            cursor_start(a, grid, &mine[i], 0, UINT64_MAX, &cs[nc++]);
            continue;
        }
        cursor_start(a, grid, &mine[i], 0, d[own].begin, &cs[nc++]);
        cursor_start(a, grid, &mine[i], d[own].end, UINT64_MAX, &cs[nc++]);
    }
    for (size_t i = 0; own >= 0 && i < nwho; i++)
        cursor_start(a, grid, &who[i], d[own].begin, d[own].end, &cs[nc++]);
    uint64_t want = 64;
    size_t nh = 0;
    for (size_t i = 0; i < nc; i++) {
        want += pieces_at_most(a, &cs[i]) + 2;
        if (cs[i].len)
            heap[nh++] = (struct entry){key(&cs[i]), i};
    }
    struct pieces p = {.cap = want <= SIZE_MAX / sizeof *p.v ? (size_t)want : 0};
    p.v = p.cap ? pieces_alloc(p.cap, &p.bytes) : NULL;
    int rc = p.v ? 0 : -ENOMEM;
    for (size_t i = nh / 2; i-- > 0;)
        sift_down(heap, nh, i);
    while (rc == 0 && nh > 0) {
        struct cursor *c = &cs[heap[0].c];
        uint64_t e = c->file + c->len < c->hi ? c->file + c->len : c->hi;
        p.c = c;
        rc = sluice_tp_split_range(d, nd, round_size, heap[0].key, e, emit, &p);
        next_run(a, c);
        if (c->len)
            heap[0].key = key(c);
        else
            heap[0] = heap[--nh];
        sift_down(heap, nh, 0);
    }
    free(cs);
    free(heap);
    if (rc) {
        sluice_tp_pieces_free(p.v, p.bytes);
        return rc;
    }
    *out = p.v;
    *nout = p.n;
    *out_bytes = p.bytes;
    return 0;
}
