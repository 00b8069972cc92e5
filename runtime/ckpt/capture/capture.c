/* SPDX-License-Identifier: MIT */
/* Capture core: start-up (patterns, cwd, fd table), path classification, fork and exit.
 * The per-call work lives in capture_open.c (opens), capture_fd.c (descriptors),
 * capture_names.c (namespace calls) and capture_dirs.c (listings). */
#include "ckpt/capture/capture_internal.h"

#include "ckpt/commit/stage.h"
#include "ckpt/container/container.h"
#include "common/exit_hooks.h"
#include "common/init_order.h"
#include "common/log.h"
#include "common/real.h"
#include "config/config.h"
#include "mpi/roles.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

bool sluice_capture_enabled;
__thread int sluice_capture_guard __attribute__((tls_model("initial-exec")));
struct sluice_capture_member *_Atomic *sluice_capture_fdtab;
int sluice_capture_fdtab_size;

pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;
struct sluice_capture_member *capture_open;
struct capture_closed *capture_closed;
uint64_t capture_closed_seq;
struct capture_vdir *capture_vdirs;
struct sluice_pattern_set capture_patterns;
int capture_writer_rank = -1;
static mode_t capture_umask = 022; /* capture_file_umask's */

/* The working directory, cached so that relative paths resolve without a syscall; chdir and
 * fchdir wrappers refresh it. cwd_digit lets the fast filter skip the copy. */
static char capture_cwd[PATH_MAX];
static atomic_bool capture_cwd_digit;
static int capture_fd_high = -1;  /* highest fd ever attached (bounds scans); lock held */
static pid_t capture_pid;         /* this process, refreshed in fork children (not vfork) */
static atomic_bool capture_dirty; /* this process staged or adopted a member */

static void refresh_cwd_locked(void)
{
    char real[PATH_MAX];
    if (SLUICE_REAL(getcwd)(real, sizeof real) == NULL)
        real[0] = '\0'; /* removed or too long: resolve through /proc/self/cwd */
    /* A virtual folder's stand-in: relative names are resolved in the virtual folder. */
    bool virt = real[0] != '\0' && capture_standin_decode(real, capture_cwd, sizeof capture_cwd);
    if (!virt)
        memcpy(capture_cwd, real, strlen(real) + 1);
    atomic_store(&capture_cwd_virtual, virt);
    bool digit = false;
    for (const char *c = capture_cwd; *c; c++)
        digit |= (*c >= '0' && *c <= '9');
    atomic_store(&capture_cwd_digit, digit || capture_cwd[0] == '\0');
}

void sluice_capture_cwd_changed(void)
{
    pthread_mutex_lock(&capture_lock);
    refresh_cwd_locked();
    pthread_mutex_unlock(&capture_lock);
}

int capture_resolve(int dirfd, const char *path, char *abs, size_t cap)
{
    char base[PATH_MAX];
    if (path[0] == '/') {
        base[0] = '/';
        base[1] = '\0';
    } else if (dirfd == AT_FDCWD) {
        pthread_mutex_lock(&capture_lock);
        memcpy(base, capture_cwd, strlen(capture_cwd) + 1);
        pthread_mutex_unlock(&capture_lock);
        if (base[0] == '\0' && SLUICE_REAL(getcwd)(base, sizeof base) == NULL)
            return -1;
    } else {
        char link[64], real[PATH_MAX];
        snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
        ssize_t n = SLUICE_REAL(readlink)(link, real, sizeof real - 1);
        if (n <= 0 || real[0] != '/')
            return -1; /* not a directory descriptor we can name: leave it to the kernel */
        real[n] = '\0';
        if (!capture_standin_decode(real, base, sizeof base)) /* a virtual folder's descriptor */
            memcpy(base, real, (size_t)n + 1);
    }
    return sluice_path_absolute(base, path, abs, cap) < 0 ? -1 : 0;
}

bool capture_classify(int dirfd, const char *path, struct capture_name *n, bool want_dir)
{
    if (path == NULL || path[0] == '\0')
        return false;
    bool rel = path[0] != '/';
    bool cwd_digit =
        rel && (dirfd != AT_FDCWD || atomic_load_explicit(&capture_cwd_digit, memory_order_relaxed));
    bool maybe_member = sluice_pattern_may_match(&capture_patterns, path, cwd_digit);
    /* A per-rank folder's name holds its rank digits (in the path or in the cwd). */
    bool maybe_dir = false;
    if (want_dir && capture_patterns.any_rank_in_dir) {
        maybe_dir = cwd_digit;
        for (const char *c = path; *c && !maybe_dir; c++)
            maybe_dir = *c >= '0' && *c <= '9';
    }
    if (!maybe_member && !maybe_dir)
        return false;
    if (capture_resolve(dirfd, path, n->abs, sizeof n->abs) != 0)
        return false;
    n->member = maybe_member &&
                sluice_pattern_match(&capture_patterns, n->abs, &n->rank, n->key, sizeof n->key) &&
                !sluice_container_is_reserved(n->abs);
    n->vdir = !n->member && maybe_dir && sluice_pattern_match_dir(&capture_patterns, n->abs, NULL);
    return n->member || n->vdir;
}

struct sluice_capture_member *capture_find_open(const char *abs)
{
    struct sluice_capture_member *m = NULL;
    HASH_FIND_STR(capture_open, abs, m);
    return m;
}

struct capture_closed *capture_find_closed(const char *abs)
{
    struct capture_closed *c = NULL;
    HASH_FIND_STR(capture_closed, abs, c);
    return c;
}

void capture_forget_closed(const char *abs)
{
    struct capture_closed *c = capture_find_closed(abs);
    if (c != NULL) {
        HASH_DEL(capture_closed, c);
        free(c);
    }
}

void capture_closed_below(const char *dir, size_t len, int (*fn)(void *arg, const char *path), void *arg)
{
    struct hit {
        uint64_t seq;
        char *path;
    } *hits = NULL;
    size_t n = 0, cap = 0;
    pthread_mutex_lock(&capture_lock);
    for (struct capture_closed *c = capture_closed; c; c = c->hh.next) {
        if (strncmp(c->path, dir, len) != 0 || c->path[len] != '/')
            continue;
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 16;
            struct hit *h = realloc(hits, ncap * sizeof *h);
            if (h == NULL)
                break;
            hits = h;
            cap = ncap;
        }
        if ((hits[n].path = strdup(c->path)) == NULL)
            break;
        hits[n++].seq = c->seq;
    }
    pthread_mutex_unlock(&capture_lock);
    bool stop = false;
    for (size_t i = 0; i < n; i++) {
        uint64_t size;
        int64_t mtime;
        /* The engine answers for versions closed here and committed ones alike (stat asks it). */
        if (!stop && sluice_commit_stat_member(hits[i].path, &size, &mtime, NULL) == 0) {
            stop = fn(arg, hits[i].path) != 0;
        } else if (!stop) {
            pthread_mutex_lock(&capture_lock);
            struct capture_closed *c = capture_find_closed(hits[i].path);
            if (c != NULL && c->seq == hits[i].seq) /* not closed again meanwhile */
                capture_forget_closed(hits[i].path);
            pthread_mutex_unlock(&capture_lock);
        }
        free(hits[i].path);
    }
    free(hits);
}

void capture_fd_attach(int fd, struct sluice_capture_member *m)
{
    atomic_store_explicit(&capture_dirty, true, memory_order_relaxed);
    m->fds++;
    if (fd > capture_fd_high)
        capture_fd_high = fd;
    atomic_store_explicit(&sluice_capture_fdtab[fd], m, memory_order_release);
}

struct sluice_capture_member *capture_fd_detach(int fd)
{
    if (fd < 0 || fd >= sluice_capture_fdtab_size)
        return NULL;
    struct sluice_capture_member *m =
        atomic_exchange_explicit(&sluice_capture_fdtab[fd], NULL, memory_order_acq_rel);
    if (m == NULL || --m->fds > 0)
        return NULL;
    if (!m->unlinked && !m->view)
        HASH_DEL(capture_open, m);
    return m;
}

/* ---- start-up, fork, exit ------------------------------------------------------------------ */

/* The umask, read at the first need (/proc/self/status: reading it with umask() would change it
 * for a moment under the program's other threads), not at start: most processes of a job step
 * never need it. Two threads that both read it store the same value. */
mode_t capture_file_umask(void)
{
    static atomic_int umask_read; /* 0 until capture_umask holds the value */
    if (atomic_load_explicit(&umask_read, memory_order_acquire))
        return capture_umask;
    int fd = SLUICE_REAL(open)("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char buf[4096];
        ssize_t n = SLUICE_REAL(read)(fd, buf, sizeof buf - 1);
        SLUICE_REAL(close)(fd);
        buf[n > 0 ? n : 0] = '\0';
        const char *u = n > 0 ? strstr(buf, "\nUmask:") : NULL;
        if (u != NULL)
            capture_umask = (mode_t)strtoul(u + 7, NULL, 8) & 0777;
    }
    atomic_store_explicit(&umask_read, 1, memory_order_release);
    return capture_umask;
}

static void fork_prepare(void)
{
    pthread_mutex_lock(&capture_lock);
}
static void fork_parent(void)
{
    pthread_mutex_unlock(&capture_lock);
}
/* The child shares the parent's open file descriptions but not its ownership of members: the
 * parent reports them at its last close. The child forgets them (its writes still land in the
 * staging files through the shared descriptions). */
static void fork_child(void)
{
    pthread_mutex_init(&capture_lock, NULL);
    capture_pid = getpid();
    atomic_store(&capture_dirty, false);
    for (int fd = 0; fd <= capture_fd_high; fd++)
        atomic_store_explicit(&sluice_capture_fdtab[fd], NULL, memory_order_relaxed);
    capture_open = NULL; /* the parent's members are leaked in the child on purpose */
}

/* After exec, descriptors that the previous image of this process opened on captured names
 * (without O_CLOEXEC; typically a shell's "cmd > ckpt.$RANK", where the shell opens the member
 * and then execs cmd) are still open on staging files. The new image adopts them by their
 * sidecars, so their last close still hands the member to the commit engine. */
static void adopt_inherited(void)
{
    const char *stage = sluice_stage_dir();
    if (stage == NULL)
        return;
    char prefix[PATH_MAX], own[SLUICE_STAGE_PREFIX_MAX];
    sluice_stage_prefix(own, (long)getpid());
    int plen = snprintf(prefix, sizeof prefix, "%s/%s", stage, own);
    if (plen <= 0 || (size_t)plen >= sizeof prefix)
        return;
    DIR *d = SLUICE_REAL(opendir)("/proc/self/fd");
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = SLUICE_REAL(readdir)(d)) != NULL) {
        char link[64], target[PATH_MAX];
        int fd = atoi(e->d_name);
        if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd == dirfd(d) || fd >= sluice_capture_fdtab_size)
            continue;
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = SLUICE_REAL(readlink)(link, target, sizeof target - 1);
        size_t dl = strlen(SLUICE_STAGE_DATA_SUFFIX);
        if (n <= plen || (size_t)n <= dl)
            continue;
        target[n] = '\0';
        if (strncmp(target, prefix, (size_t)plen) != 0 ||
            strcmp(target + n - dl, SLUICE_STAGE_DATA_SUFFIX) != 0)
            continue;
        char meta[PATH_MAX];
        snprintf(meta, sizeof meta, "%.*s%s", (int)((size_t)n - dl), target, SLUICE_STAGE_META_SUFFIX);
        char buf[SLUICE_STAGE_META_MAX];
        ssize_t len = sluice_stage_read_meta(meta, buf, sizeof buf);
        struct sluice_stage_meta sm;
        if (len <= 0 || sluice_stage_meta_parse(buf, (size_t)len, &sm) != 0 || sm.closed)
            continue;
        struct sluice_capture_member *m = capture_find_open(sm.m.path);
        if (m == NULL) {
            if ((m = calloc(1, sizeof *m)) == NULL)
                continue;
            memcpy(m->path, sm.m.path, sizeof m->path);
            memcpy(m->set_key, sm.m.set_key, sizeof m->set_key);
            m->member_rank = sm.m.member_rank;
            m->mode = sm.m.mode ? (mode_t)sm.m.mode : (0666 & ~capture_file_umask());
            snprintf(m->stage_path, sizeof m->stage_path, "%s", target);
            memcpy(m->meta_path, meta, sizeof m->meta_path);
            HASH_ADD_STR(capture_open, path, m);
        }
        capture_fd_attach(fd, m);
    }
    SLUICE_REAL(closedir)(d);
}

/* What the commit engine calls back at its start and at exit (commit.h). */
static const struct sluice_commit_client capture_client = {
    .close_all = sluice_capture_close_all,
    .announce_open = sluice_capture_announce_open,
};

/* _exit and _Exit (common/exit_hooks.h): see sluice_capture_before_exit for when it does nothing. */
static int capture_exit_hook(int status)
{
    return sluice_capture_enabled ? sluice_capture_before_exit(status) : status;
}

__attribute__((constructor(SLUICE_PRIO_CKPT))) static void capture_start(void)
{
    sluice_commit_set_client(&capture_client);
    sluice_exit_hook_add(SLUICE_EXIT_ORDER_CAPTURE, capture_exit_hook);
    const char *spec = sluice_config.CAPTURE;
    if (spec == NULL || spec[0] == '\0')
        return;
    refresh_cwd_locked();
    char err[512];
    if (sluice_pattern_compile(&capture_patterns, spec, capture_cwd[0] ? capture_cwd : "/", err,
                               sizeof err) != 0)
        sluice_fatal_config("%s", err);
    struct rlimit rl;
    rlim_t n = 65536;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY && rl.rlim_max > n)
        n = rl.rlim_max;
    if (n > (1u << 20))
        n = 1u << 20;
    sluice_capture_fdtab = calloc(n, sizeof *sluice_capture_fdtab);
    if (sluice_capture_fdtab == NULL)
        sluice_fatal_config("SLUICE_CAPTURE: cannot allocate the descriptor table (%lu entries)",
                            (unsigned long)n);
    sluice_capture_fdtab_size = (int)n;
    capture_writer_rank = sluice_launch_rank();
    capture_pid = getpid();
    if (sluice_stage_exec_marked()) /* an earlier image of this pid staged (stage.h) */
        adopt_inherited();
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    sluice_mpi_on_finalize(sluice_capture_close_all);
    sluice_capture_vdirs = capture_patterns.any_rank_in_dir;
    sluice_capture_enabled = true;
}

void sluice_capture_announce_open(void)
{
    if (!sluice_capture_enabled)
        return;
    /* Keys copied under the lock; the engine is called without it. */
    size_t n = 0, cap = 0;
    char(*keys)[PATH_MAX] = NULL;
    pthread_mutex_lock(&capture_lock);
    for (struct sluice_capture_member *m = capture_open; m != NULL; m = m->hh.next) {
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            char(*k)[PATH_MAX] = realloc(keys, ncap * sizeof *keys);
            if (k == NULL)
                break;
            keys = k;
            cap = ncap;
        }
        memcpy(keys[n++], m->set_key, PATH_MAX);
    }
    pthread_mutex_unlock(&capture_lock);
    for (size_t i = 0; i < n; i++)
        sluice_commit_member_opened(keys[i]);
    free(keys);
}

void sluice_capture_close_all(void)
{
    if (!sluice_capture_enabled)
        return;
    sluice_capture_guard_enter();
    fflush(NULL); /* stdio buffers of captured streams reach their staging files */
    struct sluice_capture_member *done = NULL, *m, *tmp;
    pthread_mutex_lock(&capture_lock);
    for (int fd = 0; fd <= capture_fd_high; fd++) {
        m = atomic_exchange_explicit(&sluice_capture_fdtab[fd], NULL, memory_order_acq_rel);
        /* A stream left open: the flush above failed if its error flag is set. */
        if (m != NULL && m->stream != NULL && !m->view && m->stage_err == 0 && ferror(m->stream))
            m->stage_err = capture_stream_loss(fd);
        if (m != NULL && --m->fds == 0) {
            if (!m->unlinked && !m->view)
                HASH_DEL(capture_open, m);
            m->hh.next = done; /* reuse the link: the member has left the table */
            done = m;
        }
    }
    pthread_mutex_unlock(&capture_lock);
    for (m = done; m != NULL; m = tmp) {
        tmp = m->hh.next;
        capture_member_release(m);
    }
    sluice_capture_guard_leave();
}

/* Runs before the commit engine's destructor (SLUICE_PRIO_CKPT), so that its exit flush sees
 * members the program left open. */
__attribute__((destructor(SLUICE_PRIO_CKPT + 1))) static void capture_stop(void)
{
    sluice_capture_close_all();
}

/* Finds this library's DT_FINI_ARRAY and runs it in reverse order, as _dl_fini would. */
static int fini_visit(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    const void *self_base = ctx;
    if ((const void *)info->dlpi_addr != self_base)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
            continue;
        const ElfW(Dyn) *dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        ElfW(Addr) arr = 0;
        size_t bytes = 0;
        for (; dyn->d_tag != DT_NULL; dyn++) {
            if (dyn->d_tag == DT_FINI_ARRAY)
                arr = dyn->d_un.d_ptr;
            else if (dyn->d_tag == DT_FINI_ARRAYSZ)
                bytes = dyn->d_un.d_val;
        }
        if (arr == 0)
            return 1;
        void (**fns)(void) = (void (**)(void))(info->dlpi_addr + arr);
        for (size_t k = bytes / sizeof *fns; k > 0; k--)
            fns[k - 1]();
        return 1;
    }
    return 1;
}

static void run_own_destructors(void)
{
    Dl_info self;
    if (dladdr((void *)run_own_destructors, &self) == 0 || self.dli_fbase == NULL)
        return;
    dl_iterate_phdr(fini_visit, self.dli_fbase);
}

int sluice_capture_before_exit(int status)
{
    if (!sluice_capture_enabled || sluice_capture_guard != 0 || getpid() != capture_pid)
        return status;
    /* The rank's own process takes part in the exit flush even if it wrote nothing, as exit()
     * would make it (a dash script that writes on other ranks only ends with _exit). */
    if (!atomic_load(&capture_dirty) && !sluice_commit_launcher_child())
        return status;
    sluice_capture_close_all();
    /* Run libsluice's own destructors, exactly as exit() would have run them (commit flush,
     * MPI finalization of what sluice initialized, trace dump), and none of the program's. */
    run_own_destructors();
    /* A failed commit (its line printed by the flush) makes the status non-zero, as exit()
     * does through commit_exit.c's on_exit handler, which _exit skips. */
    return status == 0 && sluice_commit_exit_failed() ? 1 : status;
}
