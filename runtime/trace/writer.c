/* SPDX-License-Identifier: MIT */
/* Writes this process's trace file (format.h, docs/TRACE.md). Runs at exit and inside fatal-
 * signal handlers, so it only uses async-signal-safe means: raw system calls, a static output
 * buffer, no malloc, no stdio, no locks. Other threads may still be recording: every list is
 * read up to what was published, which is a consistent prefix.
 *
 * Sections are streamed; a section's length is patched into its header when it ends (in the
 * buffer, or with pwrite if the header was flushed already). The file is written under a
 * temporary name and renamed, so a reader never sees a half-written file under the final name. */
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/log.h"
#include "common/private_dir.h"
#include "trace/kinds.h"
#include "trace/rawio.h"
#include "trace/state.h"

struct sluice_trace_out {
    int fd;
    int err;          /* first error (-errno), sticky */
    uint64_t pos;     /* logical bytes emitted */
    uint64_t flushed; /* bytes already written to fd */
    size_t len;       /* bytes waiting in buf */
    bool in_section;
    uint32_t sec_tag;
    uint64_t sec_hdr_off, sec_len, sec_fnv, sections;
    char buf[64 << 10];
};
static struct sluice_trace_out out_state; /* static: a signal stack may be small */

static void flush(struct sluice_trace_out *o)
{
    if (o->len && !o->err)
        o->err = sluice_raw_write_all(o->fd, o->buf, o->len);
    o->flushed += o->len;
    o->len = 0;
}

static void out_raw(struct sluice_trace_out *o, const void *p, size_t n)
{
    const char *s = p;
    o->pos += n;
    while (n > 0) {
        size_t room = sizeof o->buf - o->len;
        size_t k = n < room ? n : room;
        memcpy(o->buf + o->len, s, k);
        o->len += k;
        s += k;
        n -= k;
        if (o->len == sizeof o->buf)
            flush(o);
    }
}

void sluice_trace_out_bytes(struct sluice_trace_out *o, const void *p, size_t n)
{
    out_raw(o, p, n);
    if (o->in_section) {
        o->sec_len += n;
        o->sec_fnv = sluice_fnv1a(o->sec_fnv, p, n);
    }
}

static void section_begin(struct sluice_trace_out *o, uint32_t tag)
{
    struct sluice_tf_section h = {.tag = tag};
    o->sec_tag = tag;
    o->sec_hdr_off = o->pos;
    out_raw(o, &h, sizeof h);
    o->in_section = true;
    o->sec_len = 0;
    o->sec_fnv = SLUICE_FNV_INIT;
}

static void section_end(struct sluice_trace_out *o)
{
    uint64_t length = o->sec_len;
    static const char zeros[8];
    if (length % 8)
        sluice_trace_out_bytes(o, zeros, 8 - length % 8);
    o->in_section = false;
    /* The checksum covers the section header too, so a damaged tag or length is caught. */
    struct sluice_tf_section h = {.tag = o->sec_tag, .length = length};
    uint64_t sum = sluice_fnv1a(o->sec_fnv, &h, sizeof h);
    out_raw(o, &sum, sizeof sum);
    uint64_t at = o->sec_hdr_off + offsetof(struct sluice_tf_section, length);
    if (at >= o->flushed) {
        memcpy(o->buf + (at - o->flushed), &length, sizeof length);
    } else if (!o->err) {
        long w = syscall(SYS_pwrite64, o->fd, &length, sizeof length, (long)at);
        if (w != (long)sizeof length)
            o->err = w < 0 ? -errno : -EIO;
    }
    o->sections++;
}

static void put_u32(struct sluice_trace_out *o, uint32_t v)
{
    sluice_trace_out_bytes(o, &v, sizeof v);
}

static void write_strings(struct sluice_trace_out *o)
{
    static const char zeros[4];
    uint32_t count = sluice_trace_strings_count();
    section_begin(o, SLUICE_TF_STRINGS);
    for (uint32_t id = 1; id <= count; id++) {
        uint32_t len;
        const char *s = sluice_trace_strings_get(id, &len);
        put_u32(o, id);
        put_u32(o, len);
        sluice_trace_out_bytes(o, s, len);
        if (len % 4)
            sluice_trace_out_bytes(o, zeros, 4 - len % 4);
    }
    section_end(o);
}

static void write_kinds(struct sluice_trace_out *o)
{
    section_begin(o, SLUICE_TF_KINDS);
    put_u32(o, SLUICE_EV_COUNT);
    for (unsigned k = 0; k < SLUICE_EV_COUNT; k++) {
        uint32_t len = (uint32_t)strlen(sluice_kinds[k].name);
        put_u32(o, len);
        sluice_trace_out_bytes(o, sluice_kinds[k].name, len);
    }
    section_end(o);
}

static void write_thread(struct sluice_trace_out *o, struct sluice_trace_thread *t, uint64_t now)
{
    /* Pass 1 fixes how many events this file holds; chunks fill in order, so pass 2 writes
     * exactly that prefix even if the thread appends meanwhile. */
    uint64_t events = 0;
    for (struct sluice_trace_chunk *c = atomic_load_explicit(&t->head, memory_order_acquire); c;
         c = atomic_load_explicit(&c->next, memory_order_acquire))
        events += atomic_load_explicit(&c->count, memory_order_acquire);

    struct sluice_tf_thread rec = {
        .index = t->index,
        .tid = t->tid,
        .first_ns = t->first_ns,
        .events = events,
        .overflow_count = SLUICE_EV_COUNT,
    };
    uint64_t last = __atomic_load_n(&t->last_ns, __ATOMIC_RELAXED);
    rec.last_ns = last ? last : now;
    for (int s = 0; s < SLUICE_TIME_STATES; s++)
        rec.time_ns[s] = __atomic_load_n(&t->time_ns[s], __ATOMIC_RELAXED);
    if (!last) { /* still running: the current state has run since its last switch */
        uint32_t state = __atomic_load_n(&t->state, __ATOMIC_RELAXED);
        uint64_t since = __atomic_load_n(&t->state_since, __ATOMIC_RELAXED);
        if (state < SLUICE_TIME_STATES && now > since)
            rec.time_ns[state] += now - since;
    }
    uint64_t overflow[SLUICE_EV_COUNT];
    for (unsigned k = 0; k < SLUICE_EV_COUNT; k++) {
        overflow[k] = __atomic_load_n(&t->overflow[k], __ATOMIC_RELAXED);
        rec.dropped += overflow[k];
    }
    rec.reentrant = __atomic_load_n(&t->reentrant, __ATOMIC_RELAXED);

    section_begin(o, SLUICE_TF_THREAD);
    sluice_trace_out_bytes(o, &rec, sizeof rec);
    sluice_trace_out_bytes(o, overflow, sizeof overflow);
    uint64_t left = events;
    for (struct sluice_trace_chunk *c = atomic_load_explicit(&t->head, memory_order_acquire); c && left;
         c = atomic_load_explicit(&c->next, memory_order_acquire)) {
        uint64_t n = atomic_load_explicit(&c->count, memory_order_acquire);
        if (n > left)
            n = left;
        sluice_trace_out_bytes(o, c->ev, n * sizeof(struct sluice_tf_event));
        left -= n;
    }
    section_end(o);
}

/* Events of threads that were refused a state (budget spent) are counted process-wide; they
 * are written as a thread record with index SLUICE_TF_NO_THREAD, tid -1 and no events. */
static void write_orphans(struct sluice_trace_out *o)
{
    uint64_t overflow[SLUICE_EV_COUNT], dropped = 0;
    for (unsigned k = 0; k < SLUICE_EV_COUNT; k++)
        dropped += overflow[k] = atomic_load(&sluice_trace_g.orphan_overflow[k]);
    if (dropped == 0)
        return;
    struct sluice_tf_thread rec = {
        .index = SLUICE_TF_NO_THREAD, .tid = -1, .dropped = dropped, .overflow_count = SLUICE_EV_COUNT};
    section_begin(o, SLUICE_TF_THREAD);
    sluice_trace_out_bytes(o, &rec, sizeof rec);
    sluice_trace_out_bytes(o, overflow, sizeof overflow);
    section_end(o);
}

static void write_callsites(struct sluice_trace_out *o)
{
    uint32_t slots = sluice_trace_callsites_slots();
    if (slots == 0)
        return;
    section_begin(o, SLUICE_TF_CALLSITES);
    for (uint32_t i = 0; i < slots; i++) {
        const uint64_t *frames;
        uint32_t depth = sluice_trace_callsites_get(i, &frames);
        if (depth == 0)
            continue;
        put_u32(o, i + 1);
        put_u32(o, depth);
        sluice_trace_out_bytes(o, frames, sizeof(uint64_t) * depth);
    }
    section_end(o);
}

static bool any_dropped(void)
{
    for (struct sluice_trace_thread *t = atomic_load(&sluice_trace_g.threads); t; t = t->next) {
        if (__atomic_load_n(&t->reentrant, __ATOMIC_RELAXED))
            return true;
        for (unsigned k = 0; k < SLUICE_EV_COUNT; k++)
            if (__atomic_load_n(&t->overflow[k], __ATOMIC_RELAXED))
                return true;
    }
    for (unsigned k = 0; k < SLUICE_EV_COUNT; k++)
        if (atomic_load(&sluice_trace_g.orphan_overflow[k]))
            return true;
    return sluice_trace_strings_dropped() || sluice_trace_callsites_dropped();
}

int sluice_trace_write_file(const char *path, int fatal_signal)
{
    struct sluice_trace_out *o = &out_state;
    memset(o, 0, offsetof(struct sluice_trace_out, buf));
    /* A fresh name, never through a link: the trace folder may be shared (docs/SECURITY.md). */
    o->fd = sluice_raw_open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (o->fd < 0)
        return -errno;

    uint64_t now = sluice_now_ns();
    struct sluice_tf_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, SLUICE_TF_MAGIC, 8);
    h.version = SLUICE_TF_VERSION;
    h.header_size = sizeof h;
    h.endian = SLUICE_TF_ENDIAN;
    h.event_size = sizeof(struct sluice_tf_event);
    h.rank = sluice_trace_g.rank;
    h.size = sluice_trace_g.size;
    h.pid = sluice_trace_g.pid;
    h.ppid = sluice_trace_g.ppid;
    h.start_mono_ns = sluice_trace_g.start_mono_ns;
    h.start_real_ns = sluice_trace_g.start_real_ns;
    h.end_mono_ns = now;
    struct timespec res;
    h.clock_res_ns = clock_getres(CLOCK_MONOTONIC, &res) == 0 ? (uint64_t)res.tv_nsec : 0;
    h.clock_id = CLOCK_MONOTONIC;
    h.flags = sluice_trace_g.flags | (fatal_signal ? SLUICE_TF_FLAG_SIGNAL : 0) |
              (any_dropped() ? SLUICE_TF_FLAG_DROPPED : 0);
    h.trace_limit = sluice_trace_g.limit;
    h.backtrace_depth = sluice_trace_g.backtrace;
    h.exit_status = sluice_trace_g.exit_status;
    h.fatal_signal = (uint32_t)fatal_signal;
    h.kind_count = SLUICE_EV_COUNT;
    memcpy(h.hostname, sluice_trace_g.hostname, sizeof h.hostname - 1);
    memcpy(h.exe, sluice_trace_g.exe, sizeof h.exe - 1);
    out_raw(o, &h, sizeof h);

    write_strings(o);
    write_kinds(o);
    for (struct sluice_trace_thread *t = atomic_load(&sluice_trace_g.threads); t; t = t->next)
        write_thread(o, t, now);
    write_orphans(o);
    write_callsites(o);
    section_begin(o, SLUICE_TF_MODULES);
    sluice_trace_write_modules(o);
    section_end(o);

    struct sluice_tf_end end = {
        .sections = o->sections,
        .bytes = o->pos,
        .strings_dropped = sluice_trace_strings_dropped(),
        .callsites_dropped = sluice_trace_callsites_dropped(),
        .header_fnv = sluice_fnv1a(SLUICE_FNV_INIT, &h, sizeof h),
    };
    section_begin(o, SLUICE_TF_END);
    sluice_trace_out_bytes(o, &end, sizeof end);
    section_end(o);
    flush(o);
    int err = o->err;
    if (sluice_raw_close(o->fd) != 0 && !err)
        err = -errno;
    return err;
}

/* mkdir -p, tolerant of other ranks creating the same folders at the same moment. */
static int make_dirs(char *path)
{
    for (char *p = path + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char saved = *p;
            *p = '\0';
            long r = syscall(SYS_mkdirat, AT_FDCWD, path, 0777);
            int e = errno;
            *p = saved;
            if (r != 0 && e != EEXIST)
                return -e;
            if (saved == '\0')
                return 0;
        }
    }
}

/* Path buffers are static, not on the stack: this runs in signal handlers, possibly on a small
 * alternate signal stack. Callers are serialized (the constructor, then at most one dump). */
static char dir_copy[sizeof sluice_trace_g.dir];
static char final_path[sizeof sluice_trace_g.dir + 64], tmp_path[sizeof final_path + 8];

int sluice_trace_make_dir(void)
{
    memcpy(dir_copy, sluice_trace_g.dir, sizeof dir_copy);
    return make_dirs(dir_copy);
}

/* <dir>/rank-<R>.pid-<P>.<host id>.sluicetrace: one file per process, so one per rank when each
 * rank is one process; a fork child of a rank writes its own file under its own pid. The host
 * id (common/host_id.h) keeps processes of different nodes apart in a shared folder, where
 * their pids repeat (PID namespaces) and a rename would replace one's file by the other's. */
int sluice_trace_dump(int fatal_signal)
{
    if (!sluice_trace_g.stats || sluice_trace_g.dir[0] == '\0')
        return 0;
    if (atomic_exchange(&sluice_trace_g.dumped, 1))
        return 0;
    int saved = errno;
    int err = sluice_trace_make_dir();
    char *final = final_path, *tmp = tmp_path;
    struct sluice_textbuf b = {final, 0, sizeof final_path};
    sluice_tb_str(&b, sluice_trace_g.dir);
    sluice_tb_str(&b, "/rank-");
    sluice_tb_i64(&b, sluice_trace_g.rank);
    sluice_tb_str(&b, ".pid-");
    sluice_tb_i64(&b, sluice_trace_g.pid);
    sluice_tb_str(&b, ".");
    sluice_tb_str(&b, sluice_trace_g.host_id);
    sluice_tb_str(&b, SLUICE_TF_SUFFIX);
    sluice_tb_cstr(&b);
    struct sluice_textbuf t = {tmp, 0, sizeof tmp_path};
    sluice_tb_str(&t, final);
    sluice_tb_str(&t, ".tmp");
    sluice_tb_i64(&t, (int64_t)(sluice_random_u64() >> 1)); /* unpredictable: nobody plants it */
    sluice_tb_cstr(&t);
    if (err == 0)
        err = sluice_trace_write_file(tmp, fatal_signal);
    if (err == 0 && syscall(SYS_renameat, AT_FDCWD, tmp, AT_FDCWD, final) != 0)
        err = -errno;
    if (err != 0 && err != -EEXIST)
        syscall(SYS_unlinkat, AT_FDCWD, tmp, 0); /* ours (random name): no leftover */
    if (err != 0) {
        struct sluice_textbuf m = {tmp, 0, sizeof tmp_path - 1};
        sluice_tb_str(&m, "sluice[");
        sluice_tb_i64(&m, sluice_trace_g.rank);
        sluice_tb_str(&m, "]: cannot write trace file ");
        sluice_tb_str(&m, final);
        sluice_tb_str(&m, ": ");
        const char *name = strerrorname_np(-err); /* a table lookup: signal-safe */
        if (name)
            sluice_tb_str(&m, name);
        else
            sluice_tb_i64(&m, -err);
        sluice_tb_str(&m, "\n");
        sluice_log_raw(tmp, m.len);
    }
    errno = saved;
    return err;
}
