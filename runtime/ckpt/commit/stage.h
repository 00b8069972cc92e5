/* SPDX-License-Identifier: MIT */
/* Staging area of captured files: where each captured member lives between the program's open()
 * and the commit of its set, and how the commit engine and `sluice-ckpt recover` find out what a
 * staging file holds. This header is the on-disk contract of the stage folder (docs/CAPTURE.md).
 *
 * Layout of the stage folder (SLUICE_STAGE_DIR, default /dev/shm/sluice-<uid>, mode 0700):
 *
 *   m-<host>-<pid>-<seq>.data   exactly the member's bytes; the program's descriptors point at it, so
 *                        the kernel gives write/pwrite/lseek/holes/O_APPEND/mmap/flock semantics
 *   m-<host>-<pid>-<seq>.meta   a small text sidecar describing the data file (format below), written
 *                        BEFORE the data file is created and replaced atomically (rename) when
 *                        the member is closed; a .data without its .meta is never produced
 *
 *   m-<host>-<pid>-exec         empty: this process may have members staged that no commit took yet;
 *                        made before its first staging file, removed at its exit (stage_mark.c)
 *
 * <host> is the writer's host id (16 hex digits, common/host_id.h), <pid> the writing process,
 * <seq> a per-process counter: names never collide between the processes of a node, nor between
 * nodes that share one stage folder (their pids repeat: PID namespaces), and a rewrite of the same member
 * always stages into a new file (so a closed version that the commit engine owns is never touched again by
 * capture).
 *
 * Sidecar format (text, one "key value" per line, order fixed, values escaped: '\\' -> "\\\\",
 * newline -> "\\n"; a path may contain any byte but NUL):
 *
 *   sluice-stage 1
 *   state open|closed       open: a descriptor was still open when written (crash => recover it)
 *   pid <writer pid>
 *   writer_rank <launcher rank of the writer>
 *   member_rank <the rank number in the member's name>
 *   size <bytes>            exact for "closed"; 0 (unknown, use the data file's size) for "open"
 *   set_key <absolute path with the rank digits replaced by %r>
 *   path <absolute member path>
 *   mode <octal>            optional: the permissions the program's file would have had (the
 *                           data file itself is always 0600)
 *   host <16 hex digits>    the writer's host (common/host_id.h); absent in sidecars written
 *                           before it existed, which count as this host's
 *
 * Ownership: capture creates both files; after sluice_commit_member_closed() the commit engine
 * owns them and deletes both once the member is committed (or dropped). A member unlinked while
 * still open is deleted by capture at its last close. Files whose <pid> no longer runs on their
 * <host> are leftovers of a crash: `sluice-ckpt recover` commits the closed ones and keeps "open"
 * ones (possibly torn) aside unless asked to take them (--take-open); a writer of another host
 * cannot be probed from here, so its files are left to a recover there (or --other-hosts).
 *
 * The encoder and decoder are inline so that util code (recover) uses them without the engine. */
#ifndef SLUICE_CKPT_COMMIT_STAGE_H
#define SLUICE_CKPT_COMMIT_STAGE_H

#include "ckpt/commit/commit.h"
#include "common/host_id.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLUICE_STAGE_MAGIC "sluice-stage 1"
#define SLUICE_STAGE_DATA_SUFFIX ".data"
#define SLUICE_STAGE_META_SUFFIX ".meta"
#define SLUICE_STAGE_EXEC_MARK "exec" /* m-<host>-<pid>-exec: the exec mark (stage_mark.c) */
/* Upper bound of an encoded sidecar (two escaped paths plus small fields). */
#define SLUICE_STAGE_META_MAX (4 * PATH_MAX + 256)

struct sluice_stage_meta {
    struct sluice_staged_member m; /* m.stage_path is not stored: it is the .data beside it */
    int closed;                    /* 1: state closed, 0: state open */
    long pid;
    char host[SLUICE_HOST_ID_LEN + 1]; /* the writer's host (common/host_id.h); "": this one */
};

/* "m-<host>-<pid>-": how the names of pid's staging files begin on this host (stage.h's top). */
#define SLUICE_STAGE_PREFIX_MAX (SLUICE_HOST_ID_LEN + 32)
static inline void sluice_stage_prefix(char *buf, long pid)
{
    char host[SLUICE_HOST_ID_LEN + 1];
    sluice_host_id(host);
    snprintf(buf, SLUICE_STAGE_PREFIX_MAX, "m-%s-%ld-", host, pid);
}

/* The host and pid in a stage folder entry's name (m-<host>-<pid>-..., or m-<pid>-... as
 * written before names carried the host: host ""). 0, or -1 for a name of another form. */
static inline int sluice_stage_name_writer(const char *name, char *host, long *pid)
{
    host[0] = '\0';
    if (name[0] != 'm' || name[1] != '-')
        return -1;
    const char *p = name + 2;
    size_t hl = strspn(p, "0123456789abcdef");
    if (hl == SLUICE_HOST_ID_LEN && p[hl] == '-') {
        memcpy(host, p, hl);
        host[hl] = '\0';
        p += hl + 1;
    }
    char *end;
    *pid = strtol(p, &end, 10);
    return end != p && *end == '-' && *pid > 0 ? 0 : -1;
}

/* The default stage folder for this user (used when SLUICE_STAGE_DIR is empty). */
static inline void sluice_stage_default_dir(char *buf, size_t len)
{
    snprintf(buf, len, "/dev/shm/sluice-%lu", (unsigned long)getuid());
}

/* Escapes `s` into out; returns the number of bytes written or -1 if it does not fit. */
static inline int sluice_stage_escape_(const char *s, char *out, size_t cap)
{
    size_t o = 0;
    for (; *s; s++) {
        const char *rep = NULL;
        if (*s == '\\')
            rep = "\\\\";
        else if (*s == '\n')
            rep = "\\n";
        size_t n = rep ? 2 : 1;
        if (o + n >= cap)
            return -1;
        if (rep)
            memcpy(out + o, rep, 2);
        else
            out[o] = *s;
        o += n;
    }
    out[o] = '\0';
    return (int)o;
}

/* Encodes a sidecar into buf (NUL-terminated). Returns its length or -1 if it does not fit. */
static inline int sluice_stage_meta_format(const struct sluice_stage_meta *sm, char *buf, size_t cap)
{
    char key[2 * PATH_MAX + 1], path[2 * PATH_MAX + 1];
    if (sluice_stage_escape_(sm->m.set_key, key, sizeof key) < 0 ||
        sluice_stage_escape_(sm->m.path, path, sizeof path) < 0)
        return -1;
    int n = snprintf(buf, cap,
                     SLUICE_STAGE_MAGIC "\nstate %s\npid %ld\nwriter_rank %d\nmember_rank %d\n"
                                        "size %" PRIu64 "\nset_key %s\npath %s\n",
                     sm->closed ? "closed" : "open", sm->pid, sm->m.writer_rank, sm->m.member_rank,
                     sm->m.size, key, path);
    if (n >= 0 && (size_t)n < cap && sm->m.mode != 0)
        n += snprintf(buf + n, cap - (size_t)n, "mode %o\n", sm->m.mode & 07777);
    if (n >= 0 && (size_t)n < cap && sm->host[0] != '\0')
        n += snprintf(buf + n, cap - (size_t)n, "host %s\n", sm->host);
    return (n < 0 || (size_t)n >= cap) ? -1 : n;
}

/* Reads one "key value\n" line starting at *pos; unescapes the value into out. 0 or -1. */
static inline int sluice_stage_line_(const char *buf, size_t len, size_t *pos, const char *key, char *out,
                                     size_t cap)
{
    size_t klen = strlen(key), p = *pos;
    if (p + klen + 1 > len || memcmp(buf + p, key, klen) != 0 || buf[p + klen] != ' ')
        return -1;
    p += klen + 1;
    size_t o = 0;
    while (p < len && buf[p] != '\n') {
        char c = buf[p++];
        if (c == '\\') {
            if (p >= len)
                return -1;
            char e = buf[p++];
            if (e == 'n')
                c = '\n';
            else if (e == '\\')
                c = '\\';
            else
                return -1;
        } else if (c == '\0') {
            return -1;
        }
        if (o + 1 >= cap)
            return -1;
        out[o++] = c;
    }
    if (p >= len || o == 0)
        return -1; /* every line ends with '\n' and has a non-empty value */
    out[o] = '\0';
    *pos = p + 1;
    return 0;
}

static inline int sluice_stage_num_(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* A stage folder entry that is a sidecar ("<base>.meta"): 1, with the paths of the sidecar and of
 * its data file ("<base>.data") in `dir`; 0 for any other entry. The scans of the stage folder
 * (commit_read.c, commit_member.c, recover.c) read their entries through this. */
static inline int sluice_stage_sidecar(const char *dir, const char *name, char *meta, size_t meta_cap,
                                       char *data, size_t data_cap)
{
    size_t l = strlen(name), sl = strlen(SLUICE_STAGE_META_SUFFIX);
    if (l <= sl || strcmp(name + l - sl, SLUICE_STAGE_META_SUFFIX) != 0)
        return 0;
    int mn = snprintf(meta, meta_cap, "%s/%s", dir, name);
    int dn = snprintf(data, data_cap, "%s/%.*s%s", dir, (int)(l - sl), name, SLUICE_STAGE_DATA_SUFFIX);
    return mn >= 0 && (size_t)mn < meta_cap && dn >= 0 && (size_t)dn < data_cap; /* never a cut path */
}

/* Decodes a sidecar of `len` bytes. Returns 0, or -1 if it is not a complete, valid sidecar
 * (the caller then treats the pair as foreign and leaves it alone). stage_path is left empty. */
static inline int sluice_stage_meta_parse(const char *buf, size_t len, struct sluice_stage_meta *sm)
{
    size_t pos = 0, mlen = strlen(SLUICE_STAGE_MAGIC);
    char v[2 * PATH_MAX];
    long long n;
    memset(sm, 0, sizeof *sm);
    if (len < mlen + 1 || memcmp(buf, SLUICE_STAGE_MAGIC "\n", mlen + 1) != 0)
        return -1;
    pos = mlen + 1;
    if (sluice_stage_line_(buf, len, &pos, "state", v, sizeof v) != 0)
        return -1;
    if (strcmp(v, "closed") == 0)
        sm->closed = 1;
    else if (strcmp(v, "open") != 0)
        return -1;
    if (sluice_stage_line_(buf, len, &pos, "pid", v, sizeof v) != 0 ||
        sluice_stage_num_(v, 1, 0x7fffffff, &n) != 0)
        return -1;
    sm->pid = (long)n;
    if (sluice_stage_line_(buf, len, &pos, "writer_rank", v, sizeof v) != 0 ||
        sluice_stage_num_(v, 0, 0x7fffffff, &n) != 0)
        return -1;
    sm->m.writer_rank = (int)n;
    if (sluice_stage_line_(buf, len, &pos, "member_rank", v, sizeof v) != 0 ||
        sluice_stage_num_(v, 0, 0x7fffffff, &n) != 0)
        return -1;
    sm->m.member_rank = (int)n;
    if (sluice_stage_line_(buf, len, &pos, "size", v, sizeof v) != 0 ||
        sluice_stage_num_(v, 0, 0x7fffffffffffffffLL, &n) != 0)
        return -1;
    sm->m.size = (uint64_t)n;
    if (sluice_stage_line_(buf, len, &pos, "set_key", sm->m.set_key, sizeof sm->m.set_key) != 0 ||
        sluice_stage_line_(buf, len, &pos, "path", sm->m.path, sizeof sm->m.path) != 0)
        return -1;
    if (sm->m.set_key[0] != '/' || sm->m.path[0] != '/')
        return -1;
    if (pos < len && sluice_stage_line_(buf, len, &pos, "mode", v, sizeof v) == 0) {
        char *end;
        unsigned long mode = strtoul(v, &end, 8);
        if (*end != '\0' || mode == 0 || mode > 07777)
            return -1;
        sm->m.mode = (unsigned)mode;
    }
    if (pos < len) {
        if (sluice_stage_line_(buf, len, &pos, "host", v, sizeof v) != 0 || strlen(v) != SLUICE_HOST_ID_LEN ||
            strspn(v, "0123456789abcdef") != SLUICE_HOST_ID_LEN)
            return -1;
        memcpy(sm->host, v, SLUICE_HOST_ID_LEN + 1);
    }
    return pos == len ? 0 : -1;
}

/* Reads a sidecar (or any stage file) of at most cap bytes into buf, never through a link and
 * only if this user owns it: a file that someone else put in a stage folder is never trusted.
 * Raw system calls (the engine must not go through sluice's own open wrapper). Returns the
 * length, -EPERM for a file of another user (*owner then says whose), or another -errno. */
static inline long sluice_stage_read_own(const char *path, char *buf, size_t cap, unsigned *owner)
{
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    long rc = syscall(SYS_fstat, fd, &st) == 0 ? 0 : -errno;
    if (rc == 0 && !S_ISREG(st.st_mode))
        rc = -EINVAL;
    else if (rc == 0 && st.st_uid != geteuid()) {
        if (owner)
            *owner = (unsigned)st.st_uid;
        rc = -EPERM;
    }
    size_t n = 0;
    while (rc == 0 && n < cap) {
        long r = syscall(SYS_read, fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            rc = -errno;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    syscall(SYS_close, fd);
    return rc != 0 ? rc : (long)n;
}

/* Engine side (stage.c) ------------------------------------------------------------------ */

/* This process's stage folder (SLUICE_STAGE_DIR or the default), created 0700 on first use.
 * Returns NULL (errno set) if it cannot be created. */
const char *sluice_stage_dir(void);

/* Its name alone, the folder neither made nor checked (NULL if the name is unusable). */
const char *sluice_stage_dir_name(void);

/* The exec mark, m-<host>-<pid>-exec (stage_mark.c): an empty file that exists while this
 * process may have members staged and not handed to a commit, made before its first staging
 * file and removed at its exit. exec keeps the pid and skips the exit, so the mark tells the new
 * image that there may be members to adopt (descriptors open on staging files, closed members
 * not yet committed); an image that finds no mark has no predecessor that staged, and skips the
 * look for them (a scan of /proc/self/fd and of the stage folder, the cost of every process of
 * a job step that captures nothing). */
int sluice_stage_mark_exec(void);    /* 0 or -errno; once per process, before staging */
bool sluice_stage_exec_marked(void); /* at start: whether the previous image left the mark */
void sluice_stage_unmark_exec(void); /* at exit: removes this process's mark */

/* Creates a new staged member: writes its sidecar (state open, size 0) and then its empty data
 * file. Fills stage_path (PATH_MAX) and meta_path (PATH_MAX). Returns an O_RDWR|O_CLOEXEC
 * descriptor on the data file, or -errno (ENOSPC, EACCES on the stage folder...). */
int sluice_stage_create(const struct sluice_staged_member *m, char *stage_path, char *meta_path);
/* Reads a sidecar for the engine (sluice_stage_read_own); one of another user, which only root
 * could have put in a checked stage folder, is ignored with a warning (once per process).
 * Returns its length, or -errno. */
long sluice_stage_read_meta(const char *path, char *buf, size_t cap);
/* Rewrites the sidecar atomically (temporary name + rename). 0 or -errno. */
int sluice_stage_write_meta(const char *meta_path, const struct sluice_stage_meta *sm);
/* Removes a staged member that will never be committed (unlinked before its last close). */
void sluice_stage_remove(const char *stage_path, const char *meta_path);

#ifdef __cplusplus
}
#endif
#endif
