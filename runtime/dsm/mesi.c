/* SPDX-License-Identifier: MIT */
/* Home-based MESI (docs/DSM.md has the state diagram and the messages).
 *
 * Client: I (no valid copy), S (read copy; the home lists us as a sharer), E (we own the
 * chunk and the home copy is current), M (E inside a WRITE scope). A read hit is S or E with
 * local data, a write hit is E with local data: neither sends a message.
 *
 * Home: one request per chunk at a time. A read request recalls the owner (which stays a
 * sharer); a write request invalidates every sharer and recalls the owner; the grant goes out
 * when every acknowledgement is in, with the data unless the requester's copy is current.
 * Writes come back (M_WB) at each RELEASE of a WRITE scope, so the home copy is the last
 * released write and is what lookups, publication and the next reader see. A client inside a
 * scope answers an M_INV / M_RECALL at RELEASE, after its write-back (same channel, so the
 * home has the data before the acknowledgement).
 *
 * Producer-consumer: a grant that had to take the chunk from other copies says so
 * (DSM_F_CONTENDED); the writer then gives up ownership with its write-back (DSM_F_DOWNGRADE,
 * state S), so that the next reader is answered by the home at once instead of after a recall
 * from a writer that may be busy computing. A chunk nobody else uses stays E: its writes hit. */
#include <string.h>

#include "dsm/dsm.h"

static bool reply_arrived(void *arg)
{
    return ((struct dsm_chunk *)arg)->reply;
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
    *hit = have && c->state == ST_E;
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

static void ack(struct dsm_chunk *c, unsigned long addr, int proto, uint32_t flags)
{
    struct dsm_msg m = {.type = M_ACK, .proto = (uint16_t)proto, .flags = flags, .addr = addr};
    (void)c;
    dsm_send(dsm_home_of(addr), &m, NULL, 0);
}

/* Answers an M_INV or M_RECALL now (outside a scope, or at its end). */
static void answer(struct dsm_chunk *c, unsigned long addr, int proto, uint32_t type, uint32_t flags)
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
    ack(c, addr, proto, kept);
}

static void release(struct dsm_chunk *c, int mode, const void *data)
{
    if (mode & MODE_WRITE) {
        struct dsm_msg m = {.type = M_WB,
                            .proto = (uint16_t)c->proto,
                            .flags = c->contended ? DSM_F_DOWNGRADE : 0,
                            .addr = c->addr,
                            .size = c->size};
        dsm_send(dsm_home_of(c->addr), &m, data, c->size);
        c->version++;
        c->state = c->contended ? ST_S : ST_E;
    }
    if (c->deferred) {
        uint32_t t = c->deferred;
        c->deferred = 0;
        answer(c, c->addr, c->proto, t, c->deferred_flags);
    }
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
        if (m->type == M_WR_GRANT)
            c->contended = (m->flags & DSM_F_CONTENDED) != 0;
        c->reply = true;
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
        /* In the scope, or granted already inside a poll that has not returned to the acquire. */
        bool in_scope = c && (c->held || (c->scope != MODE_NONE && c->reply));
        bool must_wait =
            in_scope && ((c->scope & MODE_WRITE) || m->type == M_INV || !(m->flags & DSM_F_KEEP));
        if (must_wait) {
            c->deferred = m->type;
            c->deferred_flags = m->flags;
            return;
        }
        answer(c, m->addr, m->proto, m->type, m->flags);
        return;
    }
    }
}

/* ---- home side ----------------------------------------------------------------------------- */

static void send_error(int dst, const struct dsm_msg *m, int code, size_t size)
{
    struct dsm_msg e = {.type = M_ERROR, .proto = m->proto, .addr = m->addr, .size = size, .arg = code};
    dsm_send(dst, &e, NULL, 0);
}

static void grant_read(struct dsm_home *h, int dst)
{
    h->sharers[dst] = 1;
    struct dsm_msg r = {.type = M_RD_DATA,
                        .proto = (uint16_t)h->proto,
                        .addr = h->key.addr,
                        .size = h->size,
                        .version = h->version};
    dsm_send(dst, &r, h->data, h->size);
}

static void grant_write(struct dsm_home *h, int dst, uint32_t flags, uint64_t version)
{
    h->owner = dst;
    bool data = !(flags & DSM_F_NODATA) && (!(flags & DSM_F_KEEP) || version != h->version);
    struct dsm_msg r = {.type = M_WR_GRANT,
                        .proto = (uint16_t)h->proto,
                        .flags = (data ? DSM_F_DATA : 0) | (flags & DSM_F_CONTENDED),
                        .addr = h->key.addr,
                        .size = h->size,
                        .version = h->version};
    dsm_send(dst, &r, h->data, data ? h->size : 0);
}

static void finish(struct dsm_home *h)
{
    int type = h->busy_type;
    h->busy_type = 0;
    if (type == M_RD_REQ)
        grant_read(h, h->busy_src);
    else
        grant_write(h, h->busy_src, h->busy_flags, h->busy_version);
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

static void start_write(struct dsm_home *h, const struct dsm_msg *m, int src)
{
    h->busy_type = M_WR_REQ;
    h->busy_src = src;
    /* The requester's copy can be current only if it is still a sharer: an invalidation that
     * crossed its request makes its version stale. */
    h->busy_flags = m->flags | (h->sharers[src] ? DSM_F_KEEP : 0);
    h->busy_version = m->version;
    h->acks = 0;
    for (int r = 0; r < D.size; r++) {
        if (!h->sharers[r])
            continue;
        h->sharers[r] = 0;
        if (r == src)
            continue;
        struct dsm_msg inv = {.type = M_INV, .proto = m->proto, .addr = m->addr};
        dsm_send(r, &inv, NULL, 0);
        h->acks++;
    }
    if (h->owner >= 0 && h->owner != src) {
        struct dsm_msg rc = {.type = M_RECALL, .proto = m->proto, .addr = m->addr};
        dsm_send(h->owner, &rc, NULL, 0);
        h->acks++;
    }
    if (h->acks > 0)
        h->busy_flags |= DSM_F_CONTENDED;
    else
        finish(h);
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
            /* A recall in flight settles ownership with its ACK instead (sent after this). */
            if ((m->flags & DSM_F_DOWNGRADE) && src == h->owner && !h->busy_type) {
                h->owner = -1;
                h->sharers[src] = 1;
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
