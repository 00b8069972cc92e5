/* SPDX-License-Identifier: MIT */
/* A second preload library shaped like the I/O profilers sites preload into every job (Darshan):
 * it wraps open, write (also pwrite, pwritev and copy_file_range), the dup family and close (a descriptor
 * dup'd keeps its file, one closed forgets it) and MPI_Init/MPI_Init_thread/MPI_Finalize,
 * exports the PMPI_ names as aliases of its MPI_ wrappers, and forwards every call with dlsym(RTLD_NEXT,
 * "PMPI_..." or the libc name), as Darshan does. It counts what it sees and writes one report per process
 * into $PRELOAD_TOOL_DIR/tool.<pid>, at MPI_Finalize before forwarding (as Darshan writes its log) or at exit
 * for a process that never finalized: mpi_init N / mpi_finalize N        entries into the MPI wrappers
 * (either name) file OPENS WRITES BYTES PATH       per path opened through open/open64/openat/openat64/creat
 * Used by tests/integration/shim/preload_order.sh to show sluice works before or after such a tool. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define MAX_PATHS 512
#define MAX_FDS 4096

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct file_stat {
    char path[PATH_MAX];
    long opens, writes;
    long long bytes;
} files[MAX_PATHS];
static int nfiles;
static int fd_file[MAX_FDS]; /* index + 1 into files, 0: not ours */
static int mpi_inits, mpi_finalizes, reported;

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

static void opened(int dirfd, const char *path, int fd)
{
    if (fd < 0 || fd >= MAX_FDS || path == NULL)
        return;
    char full[PATH_MAX];
    if (path[0] != '/' && dirfd == AT_FDCWD && getcwd(full, sizeof full))
        snprintf(full + strlen(full), sizeof full - strlen(full), "/%s", path);
    else
        snprintf(full, sizeof full, "%s", path);
    pthread_mutex_lock(&lock);
    int i = 0;
    while (i < nfiles && strcmp(files[i].path, full) != 0)
        i++;
    if (i == nfiles && nfiles < MAX_PATHS)
        snprintf(files[nfiles++].path, PATH_MAX, "%s", full);
    if (i < nfiles) {
        files[i].opens++;
        fd_file[fd] = i + 1;
    }
    pthread_mutex_unlock(&lock);
}

static void wrote(int fd, ssize_t n)
{
    if (fd < 0 || fd >= MAX_FDS || n < 0)
        return;
    pthread_mutex_lock(&lock);
    if (fd_file[fd]) {
        files[fd_file[fd] - 1].writes++;
        files[fd_file[fd] - 1].bytes += n;
    }
    pthread_mutex_unlock(&lock);
}

static int mode_of(int flags, va_list ap)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, int) : 0;
}

#define OPEN_WRAPPER(name)                                                                                   \
    EXPORT int name(const char *path, int flags, ...)                                                        \
    {                                                                                                        \
        va_list ap;                                                                                          \
        va_start(ap, flags);                                                                                 \
        int mode = mode_of(flags, ap);                                                                       \
        va_end(ap);                                                                                          \
        int fd = NEXT(name)(path, flags, mode);                                                              \
        opened(AT_FDCWD, path, fd);                                                                          \
        return fd;                                                                                           \
    }
#define OPENAT_WRAPPER(name)                                                                                 \
    EXPORT int name(int dirfd, const char *path, int flags, ...)                                             \
    {                                                                                                        \
        va_list ap;                                                                                          \
        va_start(ap, flags);                                                                                 \
        int mode = mode_of(flags, ap);                                                                       \
        va_end(ap);                                                                                          \
        int fd = NEXT(name)(dirfd, path, flags, mode);                                                       \
        opened(dirfd, path, fd);                                                                             \
        return fd;                                                                                           \
    }
OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)
OPENAT_WRAPPER(openat)
OPENAT_WRAPPER(openat64)

EXPORT int creat(const char *path, mode_t mode)
{
    int fd = NEXT(creat)(path, mode);
    opened(AT_FDCWD, path, fd);
    return fd;
}

EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    ssize_t r = NEXT(write)(fd, buf, n);
    wrote(fd, r);
    return r;
}

EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    ssize_t r = NEXT(pwrite)(fd, buf, n, off);
    wrote(fd, r);
    return r;
}

EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
    ssize_t r = NEXT(pwrite64)(fd, buf, n, off);
    wrote(fd, r);
    return r;
}

/* Vectored writes, as Darshan's POSIX module wraps them (sluice's aggregators write with them). */
EXPORT ssize_t pwritev(int fd, const struct iovec *v, int n, off_t off)
{
    ssize_t r = NEXT(pwritev)(fd, v, n, off);
    wrote(fd, r);
    return r;
}

EXPORT ssize_t pwritev64(int fd, const struct iovec *v, int n, off_t off)
{
    ssize_t r = NEXT(pwritev64)(fd, v, n, off);
    wrote(fd, r);
    return r;
}

/* Kernel copies count as writes to their destination: sluice copies the parts of a member that a
 * new version takes unchanged from the previous one (an appended log's old lines, a file
 * rewritten in place) with it, where the staged copy had only references to them. */
EXPORT ssize_t copy_file_range(int in, off_t *in_off, int out, off_t *out_off, size_t n, unsigned flags)
{
    ssize_t r = NEXT(copy_file_range)(in, in_off, out, out_off, n, flags);
    wrote(out, r);
    return r;
}

/* A duplicate writes to its original's file; a closed descriptor to none. */
static void duplicated(int oldfd, int newfd)
{
    if (oldfd < 0 || oldfd >= MAX_FDS || newfd < 0 || newfd >= MAX_FDS || oldfd == newfd)
        return;
    pthread_mutex_lock(&lock);
    fd_file[newfd] = fd_file[oldfd];
    pthread_mutex_unlock(&lock);
}

EXPORT int dup(int fd)
{
    int r = NEXT(dup)(fd);
    duplicated(fd, r);
    return r;
}

EXPORT int dup2(int fd, int newfd)
{
    int r = NEXT(dup2)(fd, newfd);
    duplicated(fd, r);
    return r;
}

EXPORT int dup3(int fd, int newfd, int flags)
{
    int r = NEXT(dup3)(fd, newfd, flags);
    duplicated(fd, r);
    return r;
}

EXPORT int close(int fd)
{
    if (fd >= 0 && fd < MAX_FDS) {
        pthread_mutex_lock(&lock);
        fd_file[fd] = 0;
        pthread_mutex_unlock(&lock);
    }
    return NEXT(close)(fd);
}

/* The report goes through the next open/write (not these wrappers): it is not counted. */
static void report(void)
{
    const char *dir = getenv("PRELOAD_TOOL_DIR");
    pthread_mutex_lock(&lock);
    int done = reported;
    reported = 1;
    pthread_mutex_unlock(&lock);
    if (done || dir == NULL)
        return;
    char path[PATH_MAX], line[PATH_MAX + 96];
    snprintf(path, sizeof path, "%s/tool.%d", dir, (int)getpid());
    int fd = NEXT(open)(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    pthread_mutex_lock(&lock);
    int n = snprintf(line, sizeof line, "mpi_init %d\nmpi_finalize %d\n", mpi_inits, mpi_finalizes);
    NEXT(write)(fd, line, (size_t)n);
    for (int i = 0; i < nfiles; i++) {
        n = snprintf(line, sizeof line, "file %ld %ld %lld %s\n", files[i].opens, files[i].writes,
                     files[i].bytes, files[i].path);
        NEXT(write)(fd, line, (size_t)n);
    }
    pthread_mutex_unlock(&lock);
    NEXT(close)(fd);
}

__attribute__((destructor)) static void report_at_exit(void)
{
    report();
}

static void count(int *c)
{
    pthread_mutex_lock(&lock);
    (*c)++;
    pthread_mutex_unlock(&lock);
}

/* MPI's C prototypes need no MPI types here: int, int *, char ***. */
typedef int (*init_fn)(int *, char ***);
typedef int (*init_thread_fn)(int *, char ***, int, int *);
typedef int (*finalize_fn)(void);

EXPORT int MPI_Init(int *argc, char ***argv)
{
    count(&mpi_inits);
    return ((init_fn)dlsym(RTLD_NEXT, "PMPI_Init"))(argc, argv);
}

EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    count(&mpi_inits);
    return ((init_thread_fn)dlsym(RTLD_NEXT, "PMPI_Init_thread"))(argc, argv, required, provided);
}

EXPORT int MPI_Finalize(void)
{
    count(&mpi_finalizes);
    report();
    return ((finalize_fn)dlsym(RTLD_NEXT, "PMPI_Finalize"))();
}

EXPORT int PMPI_Init(int *argc, char ***argv) __attribute__((alias("MPI_Init")));
EXPORT int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
    __attribute__((alias("MPI_Init_thread")));
EXPORT int PMPI_Finalize(void) __attribute__((alias("MPI_Finalize")));
