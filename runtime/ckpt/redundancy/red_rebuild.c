/* SPDX-License-Identifier: MIT */
/* Rebuild of lost node parts at restart (docs/REDUNDANCY.md, "Rebuild"): when sluice's
 * communicator is made, before the ranks agree on the node-local versions (level_agree.c), each
 * node's leader (red_nodes.h) says which level records its stage folder holds and which
 * protected partner copies (red_copy.h). Every rank computes the same plan from that: a
 * protected version whose records of some ranks no node holds any more, where partner copies
 * hold every missing rank, is rebuilt: the copy's holder sends it (in chunks, bounded memory) to
 * the leader of the node that runs the rank reading each missing member (rank r reads ckpt.r),
 * which checks every checksum and writes the records and staging files into its stage folder
 * (sluice_red_copy_restore). Nothing of the file system is read. One line and a CKPT_REBUILD
 * event per part rebuilt; a corrupt copy is one line and is never used. A job whose nodes hold
 * no copy pays one MPI_Allreduce of an int. */
#include "ckpt/redundancy/red_rebuild.h"
#include "ckpt/commit/commit_internal.h"
#include "ckpt/commit/stage.h"
#include "ckpt/redundancy/red_copy.h"
#include "ckpt/redundancy/red_nodes.h"
#include "ckpt/redundancy/red_warm.h"
#include "ckpt/redundancy/red_xor.h"
#include "common/log.h"
#include "common/real.h"
#include "config/config.h"
#include "mpi/roles.h"
#include "mpi/tags.h"
#include "mpi/wait_help.h"
#include "trace/trace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SUMMARY_MAX (64u << 20)

struct copy_entry {
    uint64_t h, v;
    int nprocs, holder, nranks;
    char file[NAME_MAX + 1];
    int *ranks;
};

struct plan {
    uint64_t *rh, *rv; /* records present: (key hash, version, rank) */
    int *rr, nrec;
    struct copy_entry *c;
    int ncopy;
};

static int append(char **buf, size_t *len, size_t *cap, const char *s)
{
    size_t l = strlen(s);
    if (*len + l + 1 > *cap) {
        size_t ncap = (*cap + l + 1) * 2;
        char *b = ncap <= SUMMARY_MAX ? realloc(*buf, ncap) : NULL;
        if (!b)
            return -ENOMEM;
        *buf = b;
        *cap = ncap;
    }
    memcpy(*buf + *len, s, l + 1);
    *len += l;
    return 0;
}

/* This leader's summary: "R hash version rank" per record, "C hash version nprocs holder file
 * nranks ranks..." per protected copy. */
static int summarize(const char *dir, int me, char **out, size_t *len)
{
    size_t cap = 0;
    *out = NULL;
    *len = 0;
    DIR *d = SLUICE_REAL(opendir)(dir);
    if (!d)
        return 0;
    struct sluice_red_header *h = malloc(sizeof *h);
    struct dirent *e;
    int rc = h ? 0 : -ENOMEM;
    while (rc == 0 && (e = SLUICE_REAL(readdir)(d)) != NULL) {
        char line[NAME_MAX + 64], path[PATH_MAX];
        uint64_t hash, v;
        int rank, n = 0;
        size_t l = strlen(e->d_name);
        if (sscanf(e->d_name, "lv-%16" SCNx64 "-%20" SCNu64 "-%d.rec%n", &hash, &v, &rank, &n) == 3 &&
            (size_t)n == l) {
            snprintf(line, sizeof line, "R %" PRIx64 " %" PRIu64 " %d\n", hash, v, rank);
            rc = append(out, len, &cap, line);
        } else if (sscanf(e->d_name, "rc-%16" SCNx64 "-%20" SCNu64 "-", &hash, &v) == 2 &&
                   l > strlen(SLUICE_RED_COPY_SUFFIX) &&
                   strcmp(e->d_name + l - strlen(SLUICE_RED_COPY_SUFFIX), SLUICE_RED_COPY_SUFFIX) == 0 &&
                   snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path &&
                   sluice_red_copy_header(path, h) == 0 && sluice_red_marked(dir, h->key, v)) {
            snprintf(line, sizeof line, "C %" PRIx64 " %" PRIu64 " %d %d %s %d", hash, v, h->nprocs, me,
                     e->d_name, h->nranks);
            rc = append(out, len, &cap, line);
            for (int i = 0; rc == 0 && i < h->nranks; i++) {
                snprintf(line, sizeof line, " %d", h->ranks[i]);
                rc = append(out, len, &cap, line);
            }
            if (rc == 0)
                rc = append(out, len, &cap, "\n");
        } else if (strncmp(e->d_name, SLUICE_RED_XOR_PREFIX, strlen(SLUICE_RED_XOR_PREFIX)) == 0) {
            char *x = red_xor_summary_line(dir, e->d_name, me);
            if (x)
                rc = append(out, len, &cap, x);
            free(x);
        }
    }
    SLUICE_REAL(closedir)(d);
    free(h);
    return rc;
}

static void plan_free(struct plan *p)
{
    for (int i = 0; i < p->ncopy; i++)
        free(p->c[i].ranks);
    free(p->c);
    free(p->rh);
    free(p->rv);
    free(p->rr);
}

/* Parses every leader's summary (text, NUL-free, lines). 0 or -ENOMEM. */
static int parse(const char *all, size_t len, struct plan *p)
{
    int nlines = 0;
    for (size_t i = 0; i < len; i++)
        nlines += all[i] == '\n';
    p->rh = calloc((size_t)nlines + 1, sizeof *p->rh);
    p->rv = calloc((size_t)nlines + 1, sizeof *p->rv);
    p->rr = calloc((size_t)nlines + 1, sizeof *p->rr);
    p->c = calloc((size_t)nlines + 1, sizeof *p->c);
    if (!p->rh || !p->rv || !p->rr || !p->c)
        return -ENOMEM;
    for (size_t off = 0; off < len;) {
        const char *s = all + off, *nl = memchr(s, '\n', len - off);
        if (!nl)
            break;
        off = (size_t)(nl - all) + 1;
        struct copy_entry *c = &p->c[p->ncopy];
        int pos = 0;
        if (s[0] == 'R' && sscanf(s, "R %" SCNx64 " %" SCNu64 " %d", &p->rh[p->nrec], &p->rv[p->nrec],
                                  &p->rr[p->nrec]) == 3) {
            p->nrec++;
        } else if (s[0] == 'C' &&
                   sscanf(s, "C %" SCNx64 " %" SCNu64 " %d %d %255s %d%n", &c->h, &c->v, &c->nprocs,
                          &c->holder, c->file, &c->nranks, &pos) == 6 &&
                   c->nranks > 0 && c->nranks <= SLUICE_RED_MAX_RANKS) {
            c->ranks = calloc((size_t)c->nranks, sizeof *c->ranks);
            if (!c->ranks)
                return -ENOMEM;
            const char *q = s + pos;
            for (int i = 0; i < c->nranks; i++)
                c->ranks[i] = (int)strtol(q, (char **)&q, 10);
            p->ncopy++;
        }
    }
    return 0;
}

static int present(const struct plan *p, uint64_t h, uint64_t v, int rank);
static int present_cb(const void *ctx, uint64_t h, uint64_t v, int rank)
{
    return present(ctx, h, v, rank);
}

static int present(const struct plan *p, uint64_t h, uint64_t v, int rank)
{
    for (int i = 0; i < p->nrec; i++)
        if (p->rh[i] == h && p->rv[i] == v && p->rr[i] == rank)
            return 1;
    return 0;
}

/* Marks the ranks of copy i that must be rebuilt (-1 for the others): missing everywhere and
 * not taken by an earlier copy. Returns how many. */
static int missing(const struct plan *p, int i)
{
    struct copy_entry *c = &p->c[i];
    int n = 0;
    for (int k = 0; k < c->nranks; k++) {
        int r = c->ranks[k], taken = present(p, c->h, c->v, r) || r < 0 || r >= c->nprocs;
        for (int j = 0; j < i && !taken; j++)
            for (int q = 0; q < p->c[j].nranks && !taken; q++)
                taken = p->c[j].h == c->h && p->c[j].v == c->v && p->c[j].ranks[q] == r;
        c->ranks[k] = taken ? -1 : r;
        n += !taken;
    }
    return n;
}

/* 1 when the records present and the copies' missing ranks cover every rank of version v. */
static int coverable(const struct plan *p, uint64_t h, uint64_t v, int nprocs)
{
    for (int r = 0; r < nprocs; r++) {
        int ok = present(p, h, v, r);
        for (int i = 0; i < p->ncopy && !ok; i++)
            for (int k = 0; k < p->c[i].nranks && !ok; k++)
                ok = p->c[i].h == h && p->c[i].v == v && p->c[i].ranks[k] == r;
        if (!ok)
            return 0;
    }
    return 1;
}

static void rank_list(const int *ranks, int n, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < n && len + 12 < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%d", len ? "," : "", ranks[i]);
}

/* The target's side of one task: the copy (here or received into tmp) restored for ranks.
 * xor_from: NULL for a partner copy held by holder_host; else what an XOR rebuild used. */
static int restore(const char *dir, const char *copy, const int *ranks, int n, const char *holder_host,
                   const char *xor_from)
{
    struct sluice_red_header *h = malloc(sizeof *h);
    char err[PATH_MAX], list[256];
    rank_list(ranks, n, list, sizeof list);
    if (!h || sluice_red_copy_header(copy, h) != 0) {
        sluice_log_warn("checkpoint rebuild: the partner copy %s from node %s is unreadable; not used", copy,
                        holder_host);
        free(h);
        return 0;
    }
    int64_t bytes = sluice_red_copy_restore(copy, dir, ranks, n, err, sizeof err);
    if (xor_from && bytes < 0)
        sluice_log_warn("checkpoint %s version %" PRIu64
                        ": ranks %s (the part of lost node %s) rebuilt from %s "
                        "are not used: %s; an older version is served",
                        h->key, h->version, list, h->host, xor_from, err);
    else if (xor_from)
        sluice_log_warn("checkpoint %s version %" PRIu64
                        ": rebuilt ranks %s (the part of lost node %s, %" PRId64
                        " bytes) from %s into this node's stage folder; the file system was not read",
                        h->key, h->version, list, h->host, bytes, xor_from);
    else if (bytes < 0)
        sluice_log_warn("checkpoint %s version %" PRIu64 ": the partner copy of ranks %s (the part of lost "
                        "node %s) held by node %s is not used: %s; an older version is served",
                        h->key, h->version, list, h->host, holder_host, err);
    else {
        sluice_log_warn(
            "checkpoint %s version %" PRIu64 ": rebuilt ranks %s (the part of lost node %s, %" PRId64
            " bytes) from the partner copy held by node %s into this node's stage folder; the file "
            "system was not read",
            h->key, h->version, list, h->host, bytes, holder_host);
    }
    if (bytes >= 0 && sluice_trace_active())
        sluice_trace_instant(SLUICE_EV_CKPT_REBUILD, sluice_trace_string(h->key), h->version,
                             (uint64_t)bytes);
    free(h);
    return bytes >= 0;
}

int red_rebuild_task(MPI_Comm comm, const struct red_nodes *n, const char *dir, const char *file, int holder,
                     int target, const int *ranks, int nr, const char *xor_from)
{
    char copy[PATH_MAX], tmp[PATH_MAX];
    snprintf(copy, sizeof copy, "%s/%s", dir, file);
    const char *holder_host = n->host[n->node_of[holder]];
    if (holder == n->rank && target == n->rank)
        return restore(dir, copy, ranks, nr, holder_host, xor_from);
    int ok = 1;
    unsigned char *buf = malloc(SLUICE_RED_CHUNK);
    if (holder == n->rank) {
        int fd = SLUICE_REAL(open)(copy, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        for (ssize_t k = 1; k > 0;) {
            k = fd >= 0 && buf ? SLUICE_REAL(read)(fd, buf, SLUICE_RED_CHUNK) : 0;
            k = k < 0 ? 0 : k; /* a short copy fails its checks at the target */
            PMPI_Send(buf, (int)k, MPI_BYTE, target, SLUICE_TAG_REBUILD, comm);
        }
        if (fd >= 0)
            SLUICE_REAL(close)(fd);
    } else if (target == n->rank) {
        snprintf(tmp, sizeof tmp, "%s/%s.tmp.rebuild.%ld", dir, file, (long)getpid());
        int fd = SLUICE_REAL(open)(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        ok = fd >= 0;
        for (int k = 1; k > 0;) {
            MPI_Status st;
            static unsigned char spare[SLUICE_RED_CHUNK];
            PMPI_Recv(buf ? buf : spare, SLUICE_RED_CHUNK, MPI_BYTE, holder, SLUICE_TAG_REBUILD, comm, &st);
            PMPI_Get_count(&st, MPI_BYTE, &k);
            if (ok && k > 0 && SLUICE_REAL(write)(fd, buf ? buf : spare, (size_t)k) != k)
                ok = 0;
        }
        if (fd >= 0)
            SLUICE_REAL(close)(fd);
        if (ok)
            ok = restore(dir, tmp, ranks, nr, holder_host, xor_from);
        else
            sluice_log_warn("checkpoint rebuild: could not store the partner copy %s from node %s here (%s)",
                            file, holder_host, strerror(errno));
        SLUICE_REAL(unlink)(tmp);
    }
    free(buf);
    return ok;
}

/* The tasks of version v of the set hashed h: every copy's missing ranks to the nodes that
 * read them. 1 when every rank's part of it went well (collective). */
static int rebuild_version(MPI_Comm comm, const struct red_nodes *n, const char *dir, struct plan *p,
                           uint64_t h, uint64_t v, int *ranks)
{
    int ok = 1;
    for (int i = 0; i < p->ncopy; i++) {
        struct copy_entry *c = &p->c[i];
        if (c->h != h || c->v != v)
            continue;
        for (int t = 0; t < n->nnodes; t++) { /* rank r's member goes where rank r % size runs */
            int nr = 0;
            for (int k = 0; k < c->nranks; k++)
                if (c->ranks[k] >= 0 && n->node_of[c->ranks[k] % n->size] == t)
                    ranks[nr++] = c->ranks[k];
            if (nr)
                ok &= red_rebuild_task(comm, n, dir, c->file, c->holder, n->leader[t], ranks, nr, NULL);
        }
    }
    sluice_quiet_allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    return ok;
}

/* Per set, its newest version that lost parts and can be rebuilt; an older one only where that
 * failed (a corrupt copy). Every rank runs the same tasks in the same order (the plan is the
 * same everywhere). */
static void execute(MPI_Comm comm, const struct red_nodes *n, const char *dir, struct plan *p)
{
    int *ranks = malloc((size_t)SLUICE_RED_MAX_RANKS * sizeof *ranks);
    uint64_t *done = calloc((size_t)p->ncopy + 1, sizeof *done); /* sets finished */
    int ndone = 0;
    for (int i = 0; i < p->ncopy; i++)
        if (missing(p, i) == 0)
            p->c[i].nranks = 0; /* nothing of it to rebuild */
    for (;;) {
        /* The newest version still to try, of a set not finished. */
        int best = -1;
        for (int i = 0; i < p->ncopy; i++) {
            struct copy_entry *c = &p->c[i];
            int fin = 0;
            for (int d = 0; d < ndone && !fin; d++)
                fin = done[d] == c->h;
            if (c->nranks && !fin && coverable(p, c->h, c->v, c->nprocs) &&
                (best < 0 || c->v > p->c[best].v || (c->v == p->c[best].v && c->h < p->c[best].h)))
                best = i;
        }
        if (best < 0 || !ranks || !done)
            break;
        uint64_t h = p->c[best].h, v = p->c[best].v;
        int ok = rebuild_version(comm, n, dir, p, h, v, ranks);
        for (int i = 0; i < p->ncopy; i++)
            if (p->c[i].h == h && p->c[i].v == v)
                p->c[i].nranks = 0; /* tried */
        if (ok)
            done[ndone++] = h;
    }
    free(ranks);
    free(done);
}

static void rebuild(MPI_Comm comm, const struct red_nodes *n)
{
    const char *dir = sluice_stage_dir();
    char *mine = NULL;
    size_t mylen = 0;
    if (dir && n->leader[n->mine] == n->rank && summarize(dir, n->rank, &mine, &mylen) != 0)
        mylen = 0;
    int len = (int)mylen, longest = len, *lens = calloc((size_t)n->size, sizeof *lens),
        *displs = calloc((size_t)n->size, sizeof *displs);
    /* No copy anywhere, the usual case: this one MPI_Allreduce is all it costs. */
    if (!mine || (strncmp(mine, "C ", 2) != 0 && strncmp(mine, "X ", 2) != 0 && !strstr(mine, "\nC ") &&
                  !strstr(mine, "\nX ")))
        longest = 0;
    sluice_quiet_allreduce(MPI_IN_PLACE, &longest, 1, MPI_INT, MPI_MAX, comm);
    int ok = lens && displs;
    if (longest > 0)
        sluice_quiet_allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (longest > 0 && ok &&
        sluice_quiet_allgather(&len, 1, MPI_INT, lens, 1, MPI_INT, comm) == MPI_SUCCESS) {
        size_t total = 0;
        for (int i = 0; i < n->size; i++) {
            displs[i] = (int)total;
            total += (size_t)lens[i];
        }
        char *all = total <= SUMMARY_MAX ? malloc(total + 1) : NULL;
        ok = all != NULL;
        sluice_quiet_allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
        struct plan p = {0};
        if (ok &&
            sluice_quiet_allgatherv(mine, len, MPI_CHAR, all, lens, displs, MPI_CHAR, comm) == MPI_SUCCESS) {
            ok = parse(all, total, &p) == 0;
            sluice_quiet_allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
            if (ok) {
                execute(comm, n, dir, &p);
                red_xor_execute(comm, n, dir, all, total, present_cb, &p);
            }
        }
        plan_free(&p);
        free(all);
    }
    if (!ok && n->rank == 0)
        sluice_log_warn("checkpoint rebuild: out of memory planning it; lost node parts are not rebuilt");
    free(mine);
    free(lens);
    free(displs);
}

static void on_comm(MPI_Comm comm)
{
    red_nodes_make(comm);
    const struct red_nodes *n = red_nodes();
    if (!n)
        return;
    if (n->rank == 0 && n->nnodes < 2 && sluice_config.REDUNDANCY &&
        strcmp(sluice_config.REDUNDANCY, "none") != 0)
        sluice_log_warn("SLUICE_REDUNDANCY=%s: the job runs on one node, which has no partner; node-local "
                        "versions stay staged (not protected)",
                        sluice_config.REDUNDANCY);
    else if (n->rank == 0 && sluice_config.REDUNDANCY && strcmp(sluice_config.REDUNDANCY, "xor") == 0 &&
             n->nnodes > (int)sluice_config.REDUNDANCY_SET &&
             n->nnodes % (int)sluice_config.REDUNDANCY_SET == 1)
        sluice_log_warn(
            "SLUICE_REDUNDANCY_SET=%u: the last of the job's %d nodes would form an XOR set of one "
            "node, which has no parity; it joins the set before it (%u nodes)",
            (unsigned)sluice_config.REDUNDANCY_SET, n->nnodes, (unsigned)sluice_config.REDUNDANCY_SET + 1);
    rebuild(comm, n);
    red_warm_start(n);
}

void commit_red_register(void)
{
    sluice_mpi_on_comm(on_comm);
}
