/* SPDX-License-Identifier: MIT */
/* See reader.h. The whole file is read into memory and parsed in one pass over its
 * sections; events and call-site frames are used in place (sections are 8-byte aligned). */
#include "trace/reader.h"
#include "common/align.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct parse {
    struct sluice_trace_file *f;
    const char *name;
    char *err;
    size_t errlen;
    bool in_section; /* a message then names the section and its offset */
    uint32_t section_tag;
    uint64_t section_off;
};

static const char *tag_name(uint32_t tag);

__attribute__((format(printf, 2, 3))) static int fail(struct parse *p, const char *fmt, ...)
{
    int n = snprintf(p->err, p->errlen, "%s: ", p->name);
    if (n < 0 || (size_t)n >= p->errlen)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    size_t used = strlen(p->err);
    if (p->in_section && !strstr(p->err, "at byte ") && used + 1 < p->errlen)
        snprintf(p->err + used, p->errlen - used, " (%s section at byte %llu)", tag_name(p->section_tag),
                 (unsigned long long)p->section_off);
    return -1;
}

static const char *tag_name(uint32_t tag)
{
    switch (tag) {
    case SLUICE_TF_STRINGS:
        return "STRINGS";
    case SLUICE_TF_KINDS:
        return "KINDS";
    case SLUICE_TF_THREAD:
        return "THREAD";
    case SLUICE_TF_CALLSITES:
        return "CALLSITES";
    case SLUICE_TF_MODULES:
        return "MODULES";
    case SLUICE_TF_END:
        return "END";
    default:
        return "unknown";
    }
}

/* Capacity doubles at 4, 8, 16...: `n` elements fit, room for one more is made when needed. */
static void *grow(void *arr, size_t n, size_t elem)
{
    if (n == 0)
        return realloc(arr, 4 * elem);
    if (n >= 4 && (n & (n - 1)) == 0)
        return realloc(arr, 2 * n * elem);
    return arr;
}

static int parse_strings(struct parse *p, const unsigned char *s, uint64_t len)
{
    struct sluice_trace_file *f = p->f;
    uint64_t off = 0;
    while (off < len) {
        uint32_t id, slen;
        if (len - off < 8)
            return fail(p, "corrupt: STRINGS record cut short at payload byte %llu", (unsigned long long)off);
        memcpy(&id, s + off, 4);
        memcpy(&slen, s + off + 4, 4);
        off += 8;
        uint64_t padded = ((uint64_t)slen + 3) & ~3ull;
        if (padded > len - off)
            return fail(p, "corrupt: string %u of %u bytes overruns its section", id, slen);
        /* Ids are dense from 1 and each record takes 8 bytes or more: an id beyond size / 8
         * is corrupt, and must not make the table (indexed by id) huge. */
        if (id == 0 || id > 100000000u || id > f->size / 8)
            return fail(p, "corrupt: string id %u out of range", id);
        if (id >= f->nstrings) {
            uint32_t n = id + 1 > f->nstrings * 2 ? id + 1 : f->nstrings * 2;
            char **grown = realloc(f->strings, sizeof(char *) * n);
            if (!grown)
                return fail(p, "out of memory");
            memset(grown + f->nstrings, 0, sizeof(char *) * (n - f->nstrings));
            f->strings = grown;
            f->nstrings = n;
        }
        if (f->strings[id])
            return fail(p, "corrupt: string id %u appears twice", id);
        f->strings[id] = strndup((const char *)s + off, slen);
        if (!f->strings[id])
            return fail(p, "out of memory");
        off += padded;
    }
    return 0;
}

static int parse_kinds(struct parse *p, const unsigned char *s, uint64_t len)
{
    struct sluice_trace_file *f = p->f;
    uint32_t count;
    if (f->kinds)
        return fail(p, "corrupt: two KINDS sections");
    if (len < 4)
        return fail(p, "corrupt: KINDS section too short");
    memcpy(&count, s, 4);
    if (count != f->header.kind_count)
        return fail(p, "corrupt: KINDS lists %u kinds, header says %u", count, f->header.kind_count);
    f->kinds = calloc(count ? count : 1, sizeof(char *));
    if (!f->kinds)
        return fail(p, "out of memory");
    f->nkinds = count;
    uint64_t off = 4;
    for (uint32_t k = 0; k < count; k++) {
        uint32_t nl;
        if (len - off < 4)
            return fail(p, "corrupt: KINDS cut short at kind %u", k);
        memcpy(&nl, s + off, 4);
        off += 4;
        if (nl == 0 || nl > 256 || nl > len - off)
            return fail(p, "corrupt: name of kind %u has bad length %u", k, nl);
        f->kinds[k] = strndup((const char *)s + off, nl);
        if (!f->kinds[k])
            return fail(p, "out of memory");
        off += nl;
    }
    if (off != len)
        return fail(p, "corrupt: %llu stray bytes after KINDS", (unsigned long long)(len - off));
    return 0;
}

static int parse_thread(struct parse *p, const unsigned char *s, uint64_t len)
{
    struct sluice_trace_file *f = p->f;
    struct sluice_trace_rthread t;
    if (len < sizeof t.info)
        return fail(p, "corrupt: THREAD section too short (%llu bytes)", (unsigned long long)len);
    memcpy(&t.info, s, sizeof t.info);
    uint64_t ovf = (uint64_t)t.info.overflow_count * 8;
    if (t.info.overflow_count != f->header.kind_count)
        return fail(p, "corrupt: thread %u has %u overflow counters for %u kinds", t.info.index,
                    t.info.overflow_count, f->header.kind_count);
    if (t.info.events > (len - sizeof t.info) / sizeof(struct sluice_tf_event) ||
        sizeof t.info + ovf + t.info.events * sizeof(struct sluice_tf_event) != len)
        return fail(p, "corrupt: thread %u says %llu events but its section holds %llu bytes", t.info.index,
                    (unsigned long long)t.info.events, (unsigned long long)len);
    t.overflow = (const uint64_t *)(s + sizeof t.info);
    t.events = (const struct sluice_tf_event *)(s + sizeof t.info + ovf);
    uint64_t dropped = 0;
    for (uint32_t k = 0; k < t.info.overflow_count; k++)
        dropped += t.overflow[k];
    if (dropped != t.info.dropped)
        return fail(p, "corrupt: thread %u overflow counters sum to %llu, not %llu", t.info.index,
                    (unsigned long long)dropped, (unsigned long long)t.info.dropped);
    for (uint64_t i = 0; i < t.info.events; i++)
        if (t.events[i].kind >= f->header.kind_count)
            return fail(p, "corrupt: thread %u event %llu has kind %u (file knows %u kinds)", t.info.index,
                        (unsigned long long)i, t.events[i].kind, f->header.kind_count);
    struct sluice_trace_rthread *grown = grow(f->threads, f->nthreads, sizeof *grown);
    if (!grown)
        return fail(p, "out of memory");
    f->threads = grown;
    f->threads[f->nthreads++] = t;
    return 0;
}

static int parse_callsites(struct parse *p, const unsigned char *s, uint64_t len)
{
    struct sluice_trace_file *f = p->f;
    uint64_t off = 0;
    while (off < len) {
        struct sluice_trace_rcallsite c;
        if (len - off < 8)
            return fail(p, "corrupt: CALLSITES record cut short");
        memcpy(&c.id, s + off, 4);
        memcpy(&c.depth, s + off + 4, 4);
        off += 8;
        if (c.id == 0 || c.depth == 0 || c.depth > 64 || (uint64_t)c.depth * 8 > len - off)
            return fail(p, "corrupt: call site %u with depth %u", c.id, c.depth);
        c.frames = (const uint64_t *)(s + off);
        off += (uint64_t)c.depth * 8;
        struct sluice_trace_rcallsite *grown = grow(f->callsites, f->ncallsites, sizeof *grown);
        if (!grown)
            return fail(p, "out of memory");
        f->callsites = grown;
        f->callsites[f->ncallsites++] = c;
    }
    return 0;
}

static int parse_modules(struct parse *p, const unsigned char *s, uint64_t len)
{
    struct sluice_trace_file *f = p->f;
    uint64_t off = 0;
    while (off < len) {
        struct sluice_trace_rmodule m;
        if (len - off < sizeof m.m)
            return fail(p, "corrupt: MODULES record cut short");
        memcpy(&m.m, s + off, sizeof m.m);
        off += sizeof m.m;
        uint64_t padded = sluice_pad8(m.m.path_len);
        if (m.m.path_len == 0 || padded > len - off || m.m.end <= m.m.start)
            return fail(p, "corrupt: module record [%llx, %llx) with path of %u bytes",
                        (unsigned long long)m.m.start, (unsigned long long)m.m.end, m.m.path_len);
        m.path = strndup((const char *)s + off, m.m.path_len);
        if (!m.path)
            return fail(p, "out of memory");
        off += padded;
        struct sluice_trace_rmodule *grown = grow(f->modules, f->nmodules, sizeof *grown);
        if (!grown) {
            free(m.path);
            return fail(p, "out of memory");
        }
        f->modules = grown;
        f->modules[f->nmodules++] = m;
    }
    return 0;
}

static int check_header(struct parse *p, const unsigned char *d, size_t size)
{
    struct sluice_tf_header *h = &p->f->header;
    if (size < 8 || memcmp(d, SLUICE_TF_MAGIC, 8) != 0)
        return fail(p, "not a sluice trace file (no \"%s\" magic)", SLUICE_TF_MAGIC);
    if (size < sizeof *h)
        return fail(p, "truncated: %zu bytes, the header alone is %zu", size, sizeof *h);
    memcpy(h, d, sizeof *h);
    if (h->endian != SLUICE_TF_ENDIAN)
        return fail(p, "written on a machine of the other byte order (marker %#x)", h->endian);
    if (h->version != SLUICE_TF_VERSION)
        return fail(p, "format version %u; this reader reads version %u", h->version, SLUICE_TF_VERSION);
    if (h->header_size != sizeof *h || h->event_size != sizeof(struct sluice_tf_event))
        return fail(p, "corrupt: header says header %u bytes, event %u bytes (expected %zu, %zu)",
                    h->header_size, h->event_size, sizeof *h, sizeof(struct sluice_tf_event));
    if (h->rank < 0 || h->rank >= (1 << 30) || h->size < 1 || h->size > (1 << 30))
        return fail(p, "corrupt: rank %d of launcher size %d", h->rank, h->size);
    if (h->kind_count == 0 || h->kind_count > 65535)
        return fail(p, "corrupt: %u event kinds", h->kind_count);
    if (memchr(h->hostname, 0, sizeof h->hostname) == NULL || memchr(h->exe, 0, sizeof h->exe) == NULL)
        return fail(p, "corrupt: hostname or program path not terminated");
    return 0;
}

static int cmp_callsite(const void *a, const void *b)
{
    uint32_t x = ((const struct sluice_trace_rcallsite *)a)->id,
             y = ((const struct sluice_trace_rcallsite *)b)->id;
    return x < y ? -1 : x > y;
}

static int cmp_thread(const void *a, const void *b)
{
    uint32_t x = ((const struct sluice_trace_rthread *)a)->info.index;
    uint32_t y = ((const struct sluice_trace_rthread *)b)->info.index;
    return x < y ? -1 : x > y;
}

static int parse_all(struct parse *p)
{
    struct sluice_trace_file *f = p->f;
    const unsigned char *d = f->data;
    if (check_header(p, d, f->size) != 0)
        return -1;
    uint64_t off = sizeof(struct sluice_tf_header), sections = 0;
    bool ended = false;
    while (!ended) {
        if (off == f->size)
            return fail(p,
                        "truncated: ends after %llu sections without an END record (the writer was "
                        "interrupted?)",
                        (unsigned long long)sections);
        struct sluice_tf_section sh;
        if (f->size - off < sizeof sh)
            return fail(p, "truncated: section header at byte %llu cut short", (unsigned long long)off);
        memcpy(&sh, d + off, sizeof sh);
        uint64_t padded = sluice_pad8(sh.length);
        uint64_t avail = f->size - off - sizeof sh;
        if (sh.length > avail || padded + 8 > avail)
            return fail(p, "truncated: %s section at byte %llu needs %llu bytes, %llu remain",
                        tag_name(sh.tag), (unsigned long long)off, (unsigned long long)(padded + 8),
                        (unsigned long long)avail);
        const unsigned char *payload = d + off + sizeof sh;
        uint64_t sum;
        memcpy(&sum, payload + padded, 8);
        if (sluice_fnv1a(sluice_fnv1a(SLUICE_FNV_INIT, payload, padded), &sh, sizeof sh) != sum)
            return fail(p, "corrupt: checksum mismatch in %s section at byte %llu", tag_name(sh.tag),
                        (unsigned long long)off);
        int r = 0;
        p->in_section = true;
        p->section_tag = sh.tag;
        p->section_off = off;
        switch (sh.tag) {
        case SLUICE_TF_STRINGS:
            r = parse_strings(p, payload, sh.length);
            break;
        case SLUICE_TF_KINDS:
            r = parse_kinds(p, payload, sh.length);
            break;
        case SLUICE_TF_THREAD:
            r = parse_thread(p, payload, sh.length);
            break;
        case SLUICE_TF_CALLSITES:
            r = parse_callsites(p, payload, sh.length);
            break;
        case SLUICE_TF_MODULES:
            r = parse_modules(p, payload, sh.length);
            break;
        case SLUICE_TF_END:
            if (sh.length != sizeof f->end)
                return fail(p, "corrupt: END record of %llu bytes", (unsigned long long)sh.length);
            memcpy(&f->end, payload, sizeof f->end);
            if (f->end.sections != sections || f->end.bytes != off)
                return fail(p, "corrupt: END says %llu sections in %llu bytes, found %llu in %llu",
                            (unsigned long long)f->end.sections, (unsigned long long)f->end.bytes,
                            (unsigned long long)sections, (unsigned long long)off);
            if (f->end.header_fnv != sluice_fnv1a(SLUICE_FNV_INIT, d, sizeof(struct sluice_tf_header)))
                return fail(p, "corrupt: header checksum mismatch");
            ended = true;
            break;
        default:
            break; /* a section from a newer writer: checked, skipped */
        }
        p->in_section = false;
        if (r != 0)
            return -1;
        off += sizeof sh + padded + 8;
        if (!ended)
            sections++;
    }
    if (off != f->size)
        return fail(p, "corrupt: %llu bytes after the END record", (unsigned long long)(f->size - off));
    if (!f->kinds)
        return fail(p, "corrupt: no KINDS section");
    if (f->ncallsites > 1)
        qsort(f->callsites, f->ncallsites, sizeof *f->callsites, cmp_callsite);
    if (f->nthreads > 1) /* the writer lists newest first; readers want first-used first */
        qsort(f->threads, f->nthreads, sizeof *f->threads, cmp_thread);
    for (size_t i = 1; i < f->ncallsites; i++)
        if (f->callsites[i].id == f->callsites[i - 1].id)
            return fail(p, "corrupt: call site %u appears twice", f->callsites[i].id);
    for (size_t i = 0; i < f->nthreads; i++) {
        const struct sluice_trace_rthread *t = &f->threads[i];
        for (uint64_t e = 0; e < t->info.events; e++)
            if (t->events[e].callsite && !sluice_trace_file_callsite(f, t->events[e].callsite))
                return fail(p, "corrupt: thread %u event %llu at byte %llu refers to unknown call site %u",
                            t->info.index, (unsigned long long)e,
                            (unsigned long long)((const unsigned char *)&t->events[e] - d),
                            t->events[e].callsite);
    }
    return 0;
}

static void release_data(void *data, size_t size, bool mapped)
{
    if (mapped)
        munmap(data, size);
    else
        free(data);
}

static int parse_owned(void *data, size_t size, bool mapped, const char *name, struct sluice_trace_file **out,
                       char *err, size_t errlen)
{
    struct sluice_trace_file *f = calloc(1, sizeof *f);
    if (!f) {
        release_data(data, size, mapped);
        snprintf(err, errlen, "%s: out of memory", name);
        return -1;
    }
    f->data = data;
    f->size = size;
    f->mapped = mapped;
    f->path = strdup(name);
    struct parse p = {.f = f, .name = name, .err = err, .errlen = errlen};
    if (parse_all(&p) != 0) {
        sluice_trace_file_free(f);
        return -1;
    }
    *out = f;
    return 0;
}

int sluice_trace_file_parse(const void *data, size_t size, const char *name, struct sluice_trace_file **out,
                            char *err, size_t errlen)
{
    void *copy = malloc(size ? size : 1);
    if (!copy) {
        snprintf(err, errlen, "%s: out of memory", name);
        return -1;
    }
    if (size)
        memcpy(copy, data, size);
    return parse_owned(copy, size, false, name, out, err, errlen);
}

/* Files are mapped, not copied: a summary of many large rank files then leans on the page
 * cache instead of holding every file in memory. Reading is the fallback (e.g. a pipe). */
int sluice_trace_file_read(const char *path, struct sluice_trace_file **out, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map != MAP_FAILED) {
            close(fd);
            return parse_owned(map, (size_t)st.st_size, true, path, out, err, errlen);
        }
    }
    size_t cap = 1 << 16, size = 0;
    char *buf = malloc(cap);
    while (buf) {
        ssize_t n = read(fd, buf + size, cap - size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            free(buf);
            close(fd);
            snprintf(err, errlen, "%s: read error: %s", path, strerror(e));
            return -1;
        }
        if (n == 0)
            break;
        size += (size_t)n;
        if (size == cap) {
            char *grown = realloc(buf, cap * 2);
            if (!grown) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
    }
    close(fd);
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    return parse_owned(buf, size, false, path, out, err, errlen);
}

void sluice_trace_file_free(struct sluice_trace_file *f)
{
    if (!f)
        return;
    for (uint32_t i = 0; i < f->nstrings; i++)
        free(f->strings[i]);
    free(f->strings);
    for (uint32_t k = 0; k < f->nkinds; k++)
        free(f->kinds[k]);
    free(f->kinds);
    for (size_t i = 0; i < f->nmodules; i++)
        free(f->modules[i].path);
    free(f->modules);
    free(f->threads);
    free(f->callsites);
    if (f->data)
        release_data(f->data, f->size, f->mapped);
    free(f->path);
    free(f);
}

const char *sluice_trace_file_string(const struct sluice_trace_file *f, uint64_t id)
{
    return id < f->nstrings ? f->strings[id] : NULL;
}

const char *sluice_trace_file_kind(const struct sluice_trace_file *f, unsigned kind)
{
    return kind < f->nkinds ? f->kinds[kind] : NULL;
}

const struct sluice_trace_rcallsite *sluice_trace_file_callsite(const struct sluice_trace_file *f,
                                                                uint32_t id)
{
    size_t lo = 0, hi = f->ncallsites; /* sorted by id once parsed */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (f->callsites[mid].id == id)
            return &f->callsites[mid];
        if (f->callsites[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const struct sluice_trace_rmodule *sluice_trace_file_module(const struct sluice_trace_file *f, uint64_t ip)
{
    for (size_t i = 0; i < f->nmodules; i++)
        if (ip >= f->modules[i].m.start && ip < f->modules[i].m.end)
            return &f->modules[i];
    return NULL;
}
