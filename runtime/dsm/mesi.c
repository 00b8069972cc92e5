/* SPDX-License-Identifier: MIT */
/* Home-based MESI (docs/DSM.md has the state diagram and the messages).
 *
 * Client: I (no valid copy), S (read copy; the home lists us as a sharer), E (we own the
 * chunk and the home copy is current), M (E inside a WRITE scope). A read hit is S or E with
 * local data, a write hit is E with local data: neither sends a message.
 *
 * Home: one request per chunk at a time. A read request recalls the owner (which stays a
 * sharer). A write request invalidates every sharer; without an owner elsewhere the home copy
 * is current, so the grant goes out at once, naming how many sharers were invalidated, and
 * they acknowledge to the writer directly (M_INV with DSM_F_FWD, M_INV_ACK): three hops. With
 * an owner (its copy may be newer until its write-back) the home recalls it and grants when
 * every acknowledgement is in. Grants carry the data unless the requester's copy is current.
 * Writes come back (M_WB) at each RELEASE of a WRITE scope, so the home copy is the last
 * released write and is what lookups, publication and the next reader see. A client inside a
 * scope answers an M_INV / M_RECALL at RELEASE, after its write-back (same channel, so the
 * home has the data before the acknowledgement).
 *
 * Producer-consumer: a grant that had to take the chunk from other copies says so
 * (DSM_F_CONTENDED); the writer then gives up ownership with its write-back (DSM_F_DOWNGRADE,
 * state S), so that the next reader is answered by the home at once instead of after a recall
 * from a writer that may be busy computing. A chunk nobody else uses stays E: its writes hit.
 *
 * Migratory sharing (Stenstrom et al., Cox and Fowler, 1993): a chunk that ranks take turns
 * writing is marked by the home (mark_migratory); its grants say so (DSM_F_MIGRATORY) and the
 * writer drops its copy with its write-back (DSM_F_DROP, state I), so that the next writer
 * finds no copy to invalidate: WR_REQ, WR_GRANT, one round trip instead of three hops. */
#include <string.h>

#include "dsm/dsm.h"

/* The home answered and, for a write, every sharer it invalidated for us did too. */
static bool reply_arrived(void *arg)
{
    const struct dsm_chunk *c = arg;
    return c->reply && (c->reply_error || !(c->scope & MODE_WRITE) || c->acks_owed <= 0);
}

static int request(struct dsm_chunk *c, uint32_t type, uint32_t flags, uint64_t version)
{
    struct dsm_msg m = {.type = type,
                        .proto = (uint16_t)c->proto,
                        .flags = flags,
                        .addr = c->addr,
                        .size = c->size,
                        .version = version};
    c->reply = false;
    c->reply_error = 0;
    int rc = dsm_send(dsm_home_of(c->addr), &m, NULL, 0);
    if (rc)
        return rc;
    rc = dsm_wait(reply_arrived, c, type == M_RD_REQ ? "read of chunk" : "write of chunk", c->addr);
    if (rc)
        return rc;
    if (c->reply_error == SLUICE_DSM_ESIZE)
        return dsm_fail(SLUICE_DSM_ESIZE,
                        "chunk @%lu is %llu bytes at its home (rank %d), this chain says %zu", c->addr,
                        (unsigned long long)c->reply_size, dsm_home_of(c->addr), c->size);
    if (c->reply_error)
        return dsm_fail(c->reply_error, "chunk @%lu: refused by its home (rank %d)", c->addr,
                        dsm_home_of(c->addr));
    return 0;
}

static int acquire(struct dsm_chunk *c, int mode, bool want_data, bool *hit)
{
    bool have = dsm_chunk_has_data(c);
    if (mode == MODE_READ) {
        *hit = have && (c->state == ST_S || c->state == ST_E);
        if (*hit)
            return 0;
        return request(c, M_RD_REQ, 0, 0);
    }
    /* Owed acknowledgements (a grant whose acquire timed out): ask again, and wait for them. */
    *hit = have && c->state == ST_E && c->acks_owed <= 0;
    if (!*hit) {
        /* A current read copy saves the data transfer: the home compares versions. */
        uint64_t v = have && c->state == ST_S ? c->version : UINT64_MAX;
        int rc = request(c, M_WR_REQ, want_data ? 0 : DSM_F_NODATA, v);
        if (rc)
            return rc;
    }
    c->state = ST_M;
    return 0;
}

/* Answers an M_INV or M_RECALL now (outside a scope, or at its end): M_ACK to the home, or
 * M_INV_ACK to the writer the home named (to). */
static void answer(struct dsm_chunk *c, unsigned long addr, int proto, uint32_t type, uint32_t flags, int to)
{
    uint32_t kept = 0;
    if (c) {
        if (type == M_RECALL && (flags & DSM_F_KEEP) && c->state != ST_I && dsm_chunk_has_data(c)) {
            c->state = ST_S;
            kept = DSM_F_KEEP;
        } else {
            c->state = ST_I;
        }
    }
    bool fwd = type == M_INV && (flags & DSM_F_FWD);
    struct dsm_msg m = {
        .type = fwd ? M_INV_ACK : M_ACK, .proto = (uint16_t)proto, .flags = kept, .addr = addr};
    dsm_send(to, &m, NULL, 0);
}

/* A deferred answer goes out once the scope is over and this rank's own write grant is complete
 * (every acknowledgement in): until then another copy may still be read somewhere. */
static void answer_deferred(struct dsm_chunk *c)
{
    if (!c->deferred || c->held || c->scope != MODE_NONE || c->acks_owed > 0)
        return;
    uint32_t t = c->deferred;
    c->deferred = 0;
    answer(c, c->addr, c->proto, t, c->deferred_flags, c->deferred_to);
}

static void release(struct dsm_chunk *c, int mode, const void *data)
{
    if (mode & MODE_WRITE) {
        struct dsm_msg m = {.type = M_WB,
                            .proto = (uint16_t)c->proto,
                            .flags = c->migratory   ? DSM_F_DROP
                                     : c->contended ? DSM_F_DOWNGRADE
                                                    : 0,
                            .addr = c->addr,
                            .size = c->size};
        dsm_send(dsm_home_of(c->addr), &m, data, c->size);
        c->version++;
        c->state = c->migratory ? ST_I : c->contended ? ST_S : ST_E;
    }
    answer_deferred(c);
}

static void client_msg(struct dsm_chunk *c, const struct dsm_msg *m, const void *payload, size_t len)
{
    switch (m->type) {
    case M_RD_DATA:
    case M_WR_GRANT:
        if (!c)
            return;
        if (m->type == M_RD_DATA || (m->flags & DSM_F_DATA))
            dsm_chunk_fill(c, payload, len);
        c->version = m->version;
        c->state = m->type == M_RD_DATA ? ST_S : ST_E;
        if (m->type == M_WR_GRANT) {
            c->contended = (m->flags & DSM_F_CONTENDED) != 0;
            c->migratory = (m->flags & DSM_F_MIGRATORY) != 0;
            c->acks_owed += m->arg;
        }
        c->reply = true;
        return;
    case M_INV_ACK: /* for this rank's grant: it may come before the grant (counted all the same) */
        if (c) {
            c->acks_owed--;
            answer_deferred(c);
        }
        return;
    case M_ERROR:
        if (!c)
            return;
        c->reply_error = (int)m->arg;
        c->reply_size = m->size;
        c->reply = true;
        return;
    case M_INV:
    case M_RECALL: {
        /* In the scope, or granted already inside a poll that has not returned to the acquire;
         * or this rank's own grant still waits for acknowledgements (the next request's recall
         * follows the grant on the home's channel): the answer waits. */
        bool in_scope = c && (c->held || (c->scope != MODE_NONE && c->reply));
        bool must_wait =
            c && (c->acks_owed > 0 ||
                  (in_scope && ((c->scope & MODE_WRITE) || m->type == M_INV || !(m->flags & DSM_F_KEEP))));
        int to = m->type == M_INV && (m->flags & DSM_F_FWD) ? (int)m->arg : dsm_home_of(m->addr);
        if (must_wait) {
            c->deferred = m->type;
            c->deferred_flags = m->flags;
            c->deferred_to = to;
            return;
        }
        answer(c, m->addr, m->proto, m->type, m->flags, to);
        return;
    }
    }
}

/* ---- home side ----------------------------------------------------------------------------- */

/* Write requests after a wrong guess (a writer that re-reads its chunk: unmarked, its copy stays
 * and its reads hit, unseen by the home) before the home marks the chunk again. */
#define DSM_MIGRATORY_HOLDOFF 8

static void send_error(int dst, const struct dsm_msg *m, int code, size_t size)
{
    struct dsm_msg e = {.type = M_ERROR, .proto = m->proto, .addr = m->addr, .size = size, .arg = code};
    dsm_send(dst, &e, NULL, 0);
}

static void grant_read(struct dsm_home *h, int dst)
{
    /* The pattern stopped: the last writer reads its own chunk again (it dropped its copy: this
     * miss is the price of the guess), or several ranks read between two writes (producer-
     * consumer: the writer should keep its read copy, DSM_F_DOWNGRADE). */
    if (dst == h->last_writer) {
        if (h->migratory)
            h->holdoff = DSM_MIGRATORY_HOLDOFF;
        h->migratory = false;
    } else if (!h->sharers[dst] && ++h->readers >= 2)
        h->migratory = false;
    h->sharers[dst] = 1;
    struct dsm_msg r = {.type = M_RD_DATA,
                        .proto = (uint16_t)h->proto,
                        .addr = h->key.addr,
                        .size = h->size,
                        .version = h->version};
    dsm_send(dst, &r, h->data, h->size);
}

/* acks: the sharers that acknowledge to dst itself (M_INV_ACK) before its acquire completes. */
static void grant_write(struct dsm_home *h, int dst, uint32_t flags, uint64_t version, int acks)
{
    h->owner = dst;
    h->last_writer = dst;
    h->readers = 0;
    bool data = !(flags & DSM_F_NODATA) && (!(flags & DSM_F_KEEP) || version != h->version);
    struct dsm_msg r = {.type = M_WR_GRANT,
                        .proto = (uint16_t)h->proto,
                        .flags = (data ? DSM_F_DATA : 0) | (flags & (DSM_F_CONTENDED | DSM_F_MIGRATORY)),
                        .addr = h->key.addr,
                        .size = h->size,
                        .version = h->version,
                        .arg = acks};
    dsm_send(dst, &r, h->data, data ? h->size : 0);
}

static void finish(struct dsm_home *h)
{
    int type = h->busy_type;
    h->busy_type = 0;
    if (type == M_RD_REQ)
        grant_read(h, h->busy_src);
    else
        grant_write(h, h->busy_src, h->busy_flags, h->busy_version, 0);
    dsm_home_run_queue(h);
}

static void start_read(struct dsm_home *h, const struct dsm_msg *m, int src)
{
    if (h->owner >= 0 && h->owner != src) {
        struct dsm_msg r = {.type = M_RECALL, .proto = m->proto, .flags = DSM_F_KEEP, .addr = m->addr};
        h->busy_type = M_RD_REQ;
        h->busy_src = src;
        h->acks = 1;
        dsm_send(h->owner, &r, NULL, 0);
        return;
    }
    if (h->owner == src)
        h->owner = -1; /* the owner lost its copy (evicted): it reads like anyone */
    grant_read(h, src);
}

/* At a write request from src: marked when the only copy besides src's is the last writer's (S
 * after its downgrade, or E), or when there is none because the last writer dropped it (the
 * mark holds); cleared when the last writer writes again, or another rank holds a copy. A
 * wrong guess (grant_read) holds the mark off for DSM_MIGRATORY_HOLDOFF write requests. */
static void mark_migratory(struct dsm_home *h, int src)
{
    int lw = h->last_writer;
    if (h->holdoff > 0) {
        h->holdoff--;
        h->migratory = false;
        return;
    }
    if (lw < 0 || lw == src) {
        h->migratory = false;
        return;
    }
    bool others = h->owner >= 0 && h->owner != src && h->owner != lw;
    for (int r = 0; r < D.size; r++)
        others |= h->sharers[r] && r != src && r != lw;
    bool lw_copy = h->sharers[lw] || h->owner == lw;
    h->migratory = !others && (lw_copy || h->migratory);
}

/* Without an owner other than the requester the home copy is the last released write (every
 * WRITE scope's RELEASE writes back): the grant goes out at once, after the invalidations, and
 * the sharers acknowledge to the writer, whose acquire counts them; the home serves the next
 * request meanwhile (the new owner is recalled after the grant, on the same channel, and waits
 * with its answer). An owner's copy may be newer than the home's until its write-back: it is
 * recalled, and the grant waits here for every acknowledgement. */
static void start_write(struct dsm_home *h, const struct dsm_msg *m, int src)
{
    /* The requester's copy can be current only if it is still a sharer: an invalidation that
     * crossed its request makes its version stale. */
    uint32_t flags = m->flags | (h->sharers[src] ? DSM_F_KEEP : 0);
    mark_migratory(h, src);
    if (h->migratory)
        flags |= DSM_F_MIGRATORY;
    h->sharers[src] = 0;
    bool owned = h->owner >= 0 && h->owner != src;
    int acks = owned;
    for (int r = 0; r < D.size; r++)
        acks += h->sharers[r];
    if (acks > 0)
        flags |= DSM_F_CONTENDED;
    if (owned) { /* set before sending: an answer may come back inside the send (unit tests) */
        h->busy_type = M_WR_REQ;
        h->busy_src = src;
        h->busy_flags = flags;
        h->busy_version = m->version;
        h->acks = acks;
    }
    for (int r = 0; r < D.size; r++) {
        if (!h->sharers[r])
            continue;
        h->sharers[r] = 0;
        struct dsm_msg inv = {
            .type = M_INV, .proto = m->proto, .flags = owned ? 0 : DSM_F_FWD, .addr = m->addr, .arg = src};
        dsm_send(r, &inv, NULL, 0);
    }
    if (!owned) {
        grant_write(h, src, flags, m->version, acks);
        return;
    }
    struct dsm_msg rc = {.type = M_RECALL, .proto = m->proto, .addr = m->addr};
    dsm_send(h->owner, &rc, NULL, 0);
}

static void home_msg(const struct dsm_msg *m, const void *payload, size_t len, int src)
{
    struct dsm_home *h = dsm_home_get(m->addr, K_CHUNK, m->type == M_RD_REQ || m->type == M_WR_REQ);
    if (!h)
        return; /* an acknowledgement or write-back for a chunk this home never served */
    switch (m->type) {
    case M_RD_REQ:
    case M_WR_REQ: {
        int rc = dsm_home_size(h, m->size, m->proto);
        if (rc) {
            send_error(src, m, rc, h->size);
            return;
        }
        if (h->busy_type) {
            dsm_home_queue(h, m, payload, len);
            return;
        }
        if (m->type == M_RD_REQ)
            start_read(h, m, src);
        else
            start_write(h, m, src);
        return;
    }
    case M_ACK:
        if (src == h->owner) {
            h->owner = -1;
            if (m->flags & DSM_F_KEEP)
                h->sharers[src] = 1;
        }
        if (h->busy_type && --h->acks == 0)
            finish(h);
        return;
    case M_WB:
        if (len == h->size && h->data) {
            memcpy(h->data, payload, len);
            h->version++;
            /* A recall in flight settles ownership with its ACK instead (sent after this). A
             * dropped copy (DSM_F_DROP) leaves no sharer: the next writer is granted at once. */
            if ((m->flags & (DSM_F_DOWNGRADE | DSM_F_DROP)) && src == h->owner && !h->busy_type) {
                h->owner = -1;
                h->sharers[src] = (m->flags & DSM_F_DOWNGRADE) != 0;
            }
            dsm_home_written(h);
        }
        return;
    }
}

const struct dsm_protocol_ops dsm_mesi_ops = {
    .name = "mesi",
    .acquire = acquire,
    .release = release,
    .client_msg = client_msg,
    .home_msg = home_msg,
};

const struct dsm_protocol_ops *dsm_protocol(int proto)
{
    (void)proto; /* one protocol so far: add a case per new one */
    return &dsm_mesi_ops;
}
