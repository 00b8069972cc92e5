/* SPDX-License-Identifier: MIT */
/* The debug stream (SLUICE_DEBUG): one human-readable line per event, written as it happens
 * with a single write(2) so that lines from several threads or ranks never interleave.
 *
 *   SLUICE_DEBUG=stderr|1|on|yes|true    to fd 2, only while fd 2 is open
 *   SLUICE_DEBUG=<path>                  appended to that file; %r -> rank, %p -> pid
 *   SLUICE_DEBUG=""|0|off|no|false       nothing
 *   SLUICE_DEBUG=TAG,TAG[:TARGET]        only those subsystems (debug_tags.def; "all"), to
 *                                        TARGET (stderr or a path as above; stderr if none)
 * The first two select every subsystem. A head of lower-case letters, digits and commas before
 * the first ':' that holds a comma or is a tag is a tag list; anything else is a path.
 *
 * Formatting avoids stdio so that an event recorded in a signal handler prints safely. */
#include <errno.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/log.h"
#include "trace/debug.h"
#include "trace/kinds.h"
#include "trace/rawio.h"
#include "trace/state.h"

unsigned sluice_debug_tags;

/* Each event's subsystem: its category in events.def, which must name a tag. */
static const unsigned char kind_tag[SLUICE_EV_COUNT] = {
#define SLUICE_EVENT(number, name, category, a, b, c) [number] = SLUICE_DEBUG_##category,
#include "trace/events.def"
#undef SLUICE_EVENT
};
_Static_assert(SLUICE_DEBUG_NTAGS <= 32, "debug_tags.def: at most 32 tags (one bit each)");

const char *const sluice_debug_tag_names[SLUICE_DEBUG_NTAGS] = {
#define SLUICE_DEBUG_TAG(name, what) #name,
#include "trace/debug_tags.def"
#undef SLUICE_DEBUG_TAG
};

static int debug_fd = -1;     /* -1: off; 2: stderr; else our own file */
static char debug_path[4096]; /* the spelling, for re-expansion after fork */
static bool debug_path_has_pid;

static int spec_is(const char *spec, const char *const *words)
{
    for (; *words; words++)
        if (strcasecmp(spec, *words) == 0)
            return 1;
    return 0;
}
static const char *const off_words[] = {"", "0", "off", "no", "false", "none", NULL};
static const char *const stderr_words[] = {"1", "stderr", "on", "yes", "true", NULL};

bool sluice_trace_debug_wanted(const char *spec)
{
    return spec != NULL && !spec_is(spec, off_words);
}

static int open_path(int rank)
{
    char path[4096];
    struct sluice_textbuf b = {path, 0, sizeof path};
    for (const char *s = debug_path; *s; s++) {
        if (s[0] == '%' && s[1] == 'r') {
            sluice_tb_u64(&b, (uint64_t)rank);
            s++;
        } else if (s[0] == '%' && s[1] == 'p') {
            sluice_tb_u64(&b, (uint64_t)syscall(SYS_getpid));
            s++;
        } else {
            sluice_tb_mem(&b, s, 1);
        }
    }
    if (b.len >= sizeof path) { /* %r or %p made it longer than PATH_MAX: never a cut name */
        errno = ENAMETOOLONG;
        return -1;
    }
    sluice_tb_cstr(&b);
    /* Never through a link, and never appending to someone else's file (a name planted in a
     * shared folder such as /tmp): ELOOP or EACCES instead. A device (/dev/null) is fine. */
    int fd = sluice_raw_open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
    struct stat st;
    if (fd >= 0 && (syscall(SYS_fstat, fd, &st) != 0 || (!S_ISCHR(st.st_mode) && st.st_uid != geteuid()))) {
        sluice_raw_close(fd);
        errno = EACCES;
        return -1;
    }
    return fd;
}

/* The tag list at the head of spec, if it is one: *tags gets its bits and *target what follows
 * its ':' (NULL: stderr). Returns 0 (not a tag list: spec is a path), 1, or -1 after one line
 * naming an unknown tag. */
static int parse_tags(const char *spec, unsigned *tags, const char **target)
{
    size_t head = strcspn(spec, ":");
    if (head == 0 || strspn(spec, "abcdefghijklmnopqrstuvwxyz0123456789,") != head)
        return 0;
    unsigned bits = 0;
    bool list = memchr(spec, ',', head) != NULL;
    const char *unknown = NULL;
    size_t unknown_len = 0;
    for (const char *w = spec; w < spec + head;) {
        size_t n = strcspn(w, ",:");
        unsigned bit = n == 3 && memcmp(w, "all", 3) == 0 ? ~0u : 0;
        for (int t = 0; t < SLUICE_DEBUG_NTAGS && bit == 0; t++)
            if (strlen(sluice_debug_tag_names[t]) == n && memcmp(w, sluice_debug_tag_names[t], n) == 0)
                bit = 1u << t;
        if (bit == 0 && n > 0 && unknown == NULL) {
            unknown = w;
            unknown_len = n;
        }
        bits |= bit;
        w += n + (w[n] == ',');
    }
    if (!list && unknown != NULL)
        return 0; /* one word that is no tag: a file of that name, as before tags existed */
    if (unknown != NULL) {
        char known[256];
        struct sluice_textbuf b = {known, 0, sizeof known - 1};
        for (int t = 0; t < SLUICE_DEBUG_NTAGS; t++) {
            sluice_tb_str(&b, sluice_debug_tag_names[t]);
            sluice_tb_str(&b, ", ");
        }
        sluice_tb_str(&b, "all");
        sluice_log_warn("SLUICE_DEBUG=%s: unknown subsystem \"%.*s\" (subsystems: %s); debug stream off",
                        spec, (int)unknown_len, unknown, sluice_tb_cstr(&b));
        return -1;
    }
    *tags = bits & ((SLUICE_DEBUG_NTAGS >= 32 ? 0u : 1u << SLUICE_DEBUG_NTAGS) - 1u);
    *target = spec[head] == ':' ? spec + head + 1 : NULL;
    return 1;
}

int sluice_trace_debug_open(const char *spec, int rank)
{
    sluice_trace_debug_close();
    if (!sluice_trace_debug_wanted(spec))
        return 0;
    unsigned tags = ~0u >> (32 - SLUICE_DEBUG_NTAGS);
    const char *target = spec;
    int list = parse_tags(spec, &tags, &target);
    if (list < 0)
        return 0; /* said why, in one line */
    if (list > 0 && (target == NULL || target[0] == '\0' || spec_is(target, stderr_words)))
        target = "stderr";
    if (list > 0 && !sluice_trace_debug_wanted(target))
        return 0;
    if (spec_is(target, stderr_words)) {
        debug_fd = 2;
        __atomic_store_n(&sluice_debug_tags, tags, __ATOMIC_RELAXED);
        return 0;
    }
    spec = target;
    size_t n = strlen(spec);
    if (n >= sizeof debug_path)
        return -ENAMETOOLONG;
    memcpy(debug_path, spec, n + 1);
    debug_path_has_pid = strstr(spec, "%p") != NULL;
    debug_fd = open_path(rank);
    if (debug_fd < 0)
        return -errno;
    __atomic_store_n(&sluice_debug_tags, tags, __ATOMIC_RELAXED);
    return 0;
}

void sluice_trace_debug_close(void)
{
    __atomic_store_n(&sluice_debug_tags, 0u, __ATOMIC_RELAXED);
    if (debug_fd > 2)
        sluice_raw_close(debug_fd);
    debug_fd = -1;
}

/* A fork child whose file is named by pid gets its own file; otherwise it shares the
 * parent's descriptor (O_APPEND keeps lines whole). */
void sluice_trace_debug_after_fork(int rank)
{
    if (debug_fd > 2 && debug_path_has_pid) {
        sluice_raw_close(debug_fd);
        debug_fd = open_path(rank);
    }
}

/* "path (string id)" -> "path": the label before any parenthesis. */
static void put_label(struct sluice_textbuf *b, const char *meaning)
{
    const char *paren = strstr(meaning, " (");
    sluice_tb_mem(b, meaning, paren ? (size_t)(paren - meaning) : strlen(meaning));
}

/* "sluice[rank] +secs pid P tid T ": the head of every line of the stream. */
void sluice_trace_debug_prefix(struct sluice_textbuf *b, uint64_t t_ns, uint64_t tid)
{
    uint64_t rel = t_ns < sluice_trace_g.start_mono_ns ? 0 : t_ns - sluice_trace_g.start_mono_ns;
    sluice_tb_str(b, "sluice[");
    sluice_tb_i64(b, sluice_trace_g.rank);
    sluice_tb_str(b, "] +");
    sluice_tb_u64(b, rel / 1000000000ull);
    sluice_tb_str(b, ".");
    sluice_tb_u64w(b, (rel % 1000000000ull) / 1000, 6);
    sluice_tb_str(b, " pid ");
    sluice_tb_u64(b, (uint64_t)sluice_trace_g.pid);
    sluice_tb_str(b, " tid ");
    sluice_tb_u64(b, tid);
    sluice_tb_str(b, " ");
}

/* Writes one finished line (its '\n' included), if the stream is open: one write(2). */
void sluice_trace_debug_write(const char *line, size_t len)
{
    int saved = errno;
    int fd = debug_fd;
    if (fd >= 0 && !(fd == 2 && syscall(SYS_fcntl, 2, F_GETFD) == -1)) /* stderr closed (coreutils) */
        sluice_raw_write_all(fd, line, len);
    errno = saved;
}

void sluice_trace_debug_emit(const struct sluice_trace_thread *ts, const struct sluice_tf_event *ev)
{
    if (debug_fd < 0 || !sluice_debug_on((enum sluice_debug_tag)kind_tag[ev->kind]))
        return;
    char line[1024];
    struct sluice_textbuf b = {line, 0, sizeof line - 1};
    sluice_trace_debug_prefix(&b, ev->t_ns, (uint64_t)ts->tid);
    const struct sluice_kind_info *k = &sluice_kinds[ev->kind];
    sluice_tb_str(&b, k->name);
    const uint64_t words[3] = {ev->a, ev->b, ev->c};
    for (int w = 0; w < 3; w++) {
        if (k->meaning[w][0] == '\0')
            continue;
        sluice_tb_str(&b, w == 0 ? " " : ", ");
        put_label(&b, k->meaning[w]);
        sluice_tb_str(&b, "=");
        uint32_t len;
        const char *s = sluice_kind_word_is_string(ev->kind, w)
                            ? sluice_trace_strings_get((uint32_t)words[w], &len)
                            : NULL;
        if (s) {
            sluice_tb_str(&b, "\"");
            sluice_tb_mem(&b, s, len > 256 ? 256 : len);
            sluice_tb_str(&b, len > 256 ? "...\"" : "\""); /* one line: the trace file keeps it whole */
        } else if ((int64_t)words[w] < 0 && (int64_t)words[w] >= -65536) {
            sluice_tb_i64(&b, (int64_t)words[w]); /* -1 (none), negative codes */
        } else {
            sluice_tb_u64(&b, words[w]);
        }
    }
    if (ev->dur_ns) {
        sluice_tb_str(&b, " dur=");
        sluice_tb_u64(&b, ev->dur_ns);
        sluice_tb_str(&b, "ns");
    }
    if (ev->flags & SLUICE_EVF_ERROR)
        sluice_tb_str(&b, " ERROR");
    if (ev->callsite) {
        sluice_tb_str(&b, " site=");
        sluice_tb_u64(&b, ev->callsite);
    }
    line[b.len++] = '\n';
    sluice_trace_debug_write(line, b.len);
}
