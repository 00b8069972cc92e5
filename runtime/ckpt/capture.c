/* Capture core: start-up (patterns, cwd, fd table), path classification, fork and exit.
 * The per-call work lives in capture_open.c (opens), capture_fd.c (descriptors),
 * capture_names.c (namespace calls) and capture_dirs.c (listings). */
#include "ckpt/capture_internal.h"

#include "ckpt/container.h"
#include "ckpt/stage.h"
#include "common/init_order.h"
#include "common/log.h"
#include "common/real.h"
#include "config/config.h"
#include "mpi/roles.h"

#include <errno.h>
#include <fcntl.h>
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
struct capture_vdir *capture_vdirs;
struct sluice_pattern_set capture_patterns;
int capture_writer_rank = -1;
mode_t capture_umask = 022;

/* The working directory, cached so that relative paths resolve without a syscall; chdir and
 * fchdir wrappers refresh it. cwd_digit lets the fast filter skip the copy. */
static char capture_cwd[PATH_MAX];
static atomic_bool capture_cwd_digit;
static int capture_fd_high = -1; /* highest fd ever attached (bounds scans); lock held */

static void refresh_cwd_locked(void)
{
    if (getcwd(capture_cwd, sizeof capture_cwd) == NULL)
        capture_cwd[0] = '\0'; /* removed or too long: resolve through /proc/self/cwd */
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
        if (base[0] == '\0' && getcwd(base, sizeof base) == NULL)
            return -1;
    } else {
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
        ssize_t n = readlink(link, base, sizeof base - 1);
        if (n <= 0 || base[0] != '/')
            return -1; /* not a directory descriptor we can name: leave it to the kernel */
        base[n] = '\0';
    }
    return sluice_path_absolute(base, path, abs, cap) < 0 ? -1 : 0;
}

bool capture_classify(int dirfd, const char *path, struct capture_name *n)
{
    if (path == NULL || path[0] == '\0')
        return false;
    bool rel = path[0] != '/';
    bool cwd_digit = rel && (dirfd != AT_FDCWD || atomic_load_explicit(&capture_cwd_digit, memory_order_relaxed));
    bool maybe_member = sluice_pattern_may_match(&capture_patterns, path, cwd_digit);
    if (!maybe_member && !capture_patterns.any_rank_in_dir)
        return false;
    if (capture_resolve(dirfd, path, n->abs, sizeof n->abs) != 0)
        return false;
    n->member = maybe_member &&
                sluice_pattern_match(&capture_patterns, n->abs, &n->rank, n->key, sizeof n->key) &&
                !sluice_container_is_reserved(n->abs);
    n->vdir = !n->member && sluice_pattern_match_dir(&capture_patterns, n->abs, NULL);
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

void capture_fd_attach(int fd, struct sluice_capture_member *m)
{
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
    if (!m->unlinked)
        HASH_DEL(capture_open, m);
    return m;
}

/* ---- start-up, fork, exit ------------------------------------------------------------------ */

static void read_umask(void)
{
    int fd = SLUICE_REAL(open)("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[4096];
    ssize_t n = SLUICE_REAL(read)(fd, buf, sizeof buf - 1);
    SLUICE_REAL(close)(fd);
    if (n <= 0)
        return;
    buf[n] = '\0';
    const char *u = strstr(buf, "\nUmask:");
    if (u != NULL)
        capture_umask = (mode_t)strtoul(u + 7, NULL, 8) & 0777;
}

static void fork_prepare(void) { pthread_mutex_lock(&capture_lock); }
static void fork_parent(void) { pthread_mutex_unlock(&capture_lock); }
/* The child shares the parent's open file descriptions but not its ownership of members: the
 * parent reports them at its last close. The child forgets them (its writes still land in the
 * staging files through the shared descriptions). */
static void fork_child(void)
{
    pthread_mutex_init(&capture_lock, NULL);
    for (int fd = 0; fd <= capture_fd_high; fd++)
        atomic_store_explicit(&sluice_capture_fdtab[fd], NULL, memory_order_relaxed);
    capture_open = NULL; /* the parent's members are leaked in the child on purpose */
}

__attribute__((constructor(SLUICE_PRIO_CKPT))) static void capture_start(void)
{
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
    read_umask();
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    sluice_mpi_on_finalize(sluice_capture_close_all);
    sluice_capture_enabled = true;
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
        if (m != NULL && --m->fds == 0) {
            if (!m->unlinked)
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
