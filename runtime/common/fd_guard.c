/* SPDX-License-Identifier: MIT */
/* See fd_guard.h. Two counts, waited on with futexes: creations in flight on sluice's threads
 * and calls of the program in flight. Each side counts itself in and then looks at the other.
 * sluice's side gives way (counts itself out, sleeps until the program's count is 0 and is
 * pending meanwhile, which holds the program's new calls back); the program's side waits for
 * pending and running creations, each one system call and a move. No owner is recorded, so a
 * fork child resets the counts and a vfork child shares them. Raw system calls only: the
 * program's side runs in signal handlers and between vfork and exec. */
#include "common/fd_guard.h"

#include "common/init_order.h"
#include "common/real.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FD_FLOOR_MAX 512
#define WAIT_NS 1000000 /* one futex wait: a backstop, the other side wakes the waiters */
#define YIELD_MAX_NS 100000000LL

static _Thread_local int own_thread;
static atomic_int live;                 /* a sluice thread exists: the program's calls take part */
static atomic_int creating;             /* creations in flight on sluice's threads */
static atomic_int program;              /* the program's calls on descriptor numbers in flight */
static atomic_int pending;              /* creations waiting for the program's calls to drain */
static _Thread_local int program_depth; /* the program's calls under way on this thread */
static atomic_int waiting;              /* threads asleep on either count */
static atomic_int fd_floor;

static void futex_wake(atomic_int *word)
{
    if (atomic_load(&waiting) > 0)
        syscall(SYS_futex, (int *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Sleeps while *word is v, WAIT_NS at most (the waker's decrement and this increment of
 * `waiting` are ordered, so one of the two sees the other). */
static void wait_once(atomic_int *word, int v)
{
    atomic_fetch_add(&waiting, 1);
    if (atomic_load(word) == v) {
        struct timespec ts = {0, WAIT_NS};
        syscall(SYS_futex, (int *)word, FUTEX_WAIT_PRIVATE, v, &ts, NULL, 0);
    }
    atomic_fetch_sub(&waiting, 1);
}

/* Sleeps until *word is 0. */
static void wait_zero(atomic_int *word)
{
    for (int v; (v = atomic_load(word)) != 0;)
        wait_once(word, v);
}

static void leave(atomic_int *count)
{
    if (atomic_fetch_sub(count, 1) == 1)
        futex_wake(count);
}

/* FD_FLOOR_MAX, or half the soft descriptor limit where that is lower. */
static int floor_of(void)
{
    int f = atomic_load_explicit(&fd_floor, memory_order_relaxed);
    if (f == 0) {
        struct rlimit rl;
        f = FD_FLOOR_MAX;
        if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl) == 0 && rl.rlim_cur / 2 < (rlim_t)f)
            f = (int)(rl.rlim_cur / 2);
        atomic_store_explicit(&fd_floor, f, memory_order_relaxed);
    }
    return f;
}

/* The next definition of fn (looked up once, without substitution: real.c). */
#define NEXT(fn)                                                                                             \
    (__extension__({                                                                                         \
        static void *_Atomic next_slot_;                                                                     \
        void *next_p_ = atomic_load_explicit(&next_slot_, memory_order_acquire);                             \
        if (next_p_ == NULL)                                                                                 \
            next_p_ = sluice_real_resolve_in(RTLD_NEXT, #fn, &next_slot_);                                   \
        (__typeof__(&fn))next_p_;                                                                            \
    }))

/* fd at or above the floor, with its close-on-exec flag; fd itself where there is no room.
 * tell_next: fd came from the next library's open (a tool preloaded after sluice, Darshan),
 * which is told of the move as of a dup2 and a close, so that it still knows the file. */
static int move_high(int fd, bool tell_next)
{
    int fl = floor_of();
    if (fd < 0 || fd >= fl)
        return fd;
    long flags = syscall(SYS_fcntl, fd, F_GETFD);
    bool cloexec = flags > 0 && (flags & FD_CLOEXEC);
    long high = syscall(SYS_fcntl, fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, fl);
    if (high < 0)
        return fd;
    if (tell_next && NEXT(dup2)(fd, (int)high) == (int)high) {
        if (cloexec)
            syscall(SYS_fcntl, high, F_SETFD, FD_CLOEXEC); /* dup2 clears it */
        NEXT(close)(fd);
    } else {
        syscall(SYS_close, fd);
    }
    return (int)high;
}

void sluice_fd_guard_thread_enter(void)
{
    own_thread = 1;
    atomic_store(&live, 1);
}

static int64_t monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* sluice's side gives way to the program's calls under way; once it has, it is pending, and
 * the program's next calls wait for it (a program whose threads never stop calling would
 * otherwise keep it out). It gives way for YIELD_MAX_NS at most: a program's call that blocks
 * (an open of a FIFO waits for its other end, which may wait for this very call's creation)
 * must not hold sluice, nor through `pending` the program's other threads, forever. */
void sluice_fd_guard_begin(struct sluice_fd_guard_section *s)
{
    s->held = own_thread != 0;
    s->tell_next = false;
    if (!s->held)
        return;
    int e = errno;
    int64_t give_up = 0;
    for (;;) {
        atomic_fetch_add(&creating, 1);
        if (atomic_load(&program) == 0 || (give_up && monotonic_ns() > give_up))
            break;
        leave(&creating);
        if (!give_up) {
            give_up = monotonic_ns() + YIELD_MAX_NS;
            atomic_fetch_add(&pending, 1);
        }
        int v = atomic_load(&program);
        if (v != 0)
            wait_once(&program, v);
    }
    if (give_up)
        leave(&pending);
    errno = e;
}

int sluice_fd_guard_end(struct sluice_fd_guard_section *s, int fd)
{
    if (!s->held)
        return fd;
    int e = errno;
    fd = move_high(fd, s->tell_next);
    leave(&creating);
    errno = e;
    return fd;
}

/* The program's side waits for pending and running creations (each a system call and a move),
 * never for the program: a call made inside another on the same thread (a signal handler's)
 * does not wait for pending ones, which wait for the outer call. */
void sluice_fd_guard_program_begin(struct sluice_fd_guard_section *s)
{
    s->held = !own_thread && atomic_load(&live);
    s->tell_next = false;
    if (!s->held)
        return;
    int e = errno;
    if (program_depth++ == 0)
        wait_zero(&pending);
    atomic_fetch_add(&program, 1);
    wait_zero(&creating);
    errno = e;
}

void sluice_fd_guard_program_end(struct sluice_fd_guard_section *s)
{
    if (!s->held)
        return;
    int e = errno;
    leave(&program);
    program_depth--;
    errno = e;
}

/* Grows the process's descriptor table past the floor now, while it has one thread. The kernel
 * grows the table when a number beyond it is first used, and a process of several threads waits
 * for an RCU grace period to do so (fs/file.c, expand_fdtable); the first descriptor a sluice
 * thread moves to the floor, and the program's own at 64 or 256, would wait for one with the
 * progress and I/O threads running: 24-28 ms in every process of an 8-node job on a 16-core
 * host, all at the first checkpoint version (docs/REDUNDANCY.md). A descriptor is borrowed at
 * the floor and closed at once: the program sees no number taken (nothing is borrowed where 0,
 * 1 and 2 are all closed). */
static void reserve_table(void)
{
    int fl = floor_of();
    for (int fd = 0; fd <= 2; fd++) {
        long high = syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, fl);
        if (high >= 0) {
            syscall(SYS_close, high);
            return;
        }
    }
}

/* A fork child has none of sluice's threads: nothing is in flight there. Its table holds only
 * the numbers open at the fork, so it is grown again. */
static void forget_in_child(void)
{
    atomic_store(&creating, 0);
    atomic_store(&program, 0);
    atomic_store(&pending, 0);
    atomic_store(&waiting, 0);
    atomic_store(&live, 0);
    program_depth = 0;
    reserve_table();
}

/* Among the library's first constructors: before any of them can start a thread. */
__attribute__((constructor(SLUICE_PRIO_CONFIG))) static void fd_guard_init(void)
{
    reserve_table();
    pthread_atfork(NULL, NULL, forget_in_child);
}

/* Either side, whichever the calling thread is. */
static void enter(struct sluice_fd_guard_section *s)
{
    if (own_thread)
        sluice_fd_guard_begin(s);
    else
        sluice_fd_guard_program_begin(s);
}

static int leave_with(struct sluice_fd_guard_section *s, int fd)
{
    if (own_thread)
        return sluice_fd_guard_end(s, fd);
    sluice_fd_guard_program_end(s);
    return fd;
}

int sluice_fd_guard_openat(int dirfd, const char *path, int flags, int mode)
{
    struct sluice_fd_guard_section s;
    enter(&s);
    return leave_with(&s, (int)syscall(SYS_openat, dirfd, path, flags, mode));
}

#define GUARDED(call)                                                                                        \
    do {                                                                                                     \
        struct sluice_fd_guard_section s_;                                                                   \
        enter(&s_);                                                                                          \
        s_.tell_next = true;                                                                                 \
        int r_ = (call);                                                                                     \
        return leave_with(&s_, r_);                                                                          \
    } while (0)

/* open's mode is read only where the flags say there is one. */
#define OPEN_MODE(flags)                                                                                     \
    int mode = 0;                                                                                            \
    if ((flags) & (O_CREAT | O_TMPFILE)) {                                                                   \
        va_list ap;                                                                                          \
        va_start(ap, flags);                                                                                 \
        mode = va_arg(ap, int);                                                                              \
        va_end(ap);                                                                                          \
    }

static int guarded_open(const char *path, int flags, ...)
{
    OPEN_MODE(flags)
    GUARDED(NEXT(open)(path, flags, mode));
}

static int guarded_open64(const char *path, int flags, ...)
{
    OPEN_MODE(flags)
    GUARDED(NEXT(open64)(path, flags, mode));
}

static int guarded_openat(int dirfd, const char *path, int flags, ...)
{
    OPEN_MODE(flags)
    GUARDED(NEXT(openat)(dirfd, path, flags, mode));
}

static int guarded_openat64(int dirfd, const char *path, int flags, ...)
{
    OPEN_MODE(flags)
    GUARDED(NEXT(openat64)(dirfd, path, flags, mode));
}

/* opendir opens inside libc, out of reach: the folder is opened here and handed to fdopendir. */
static DIR *guarded_opendir(const char *path)
{
    struct sluice_fd_guard_section s;
    enter(&s);
    s.tell_next = true;
    int fd = leave_with(&s, NEXT(open)(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC));
    if (fd < 0)
        return NULL;
    DIR *d = NEXT(fdopendir)(fd);
    if (d == NULL) {
        int e = errno;
        syscall(SYS_close, fd);
        errno = e;
    }
    return d;
}

/* The program's calls on numbers it chose: close, the dup family, and fcntl's commands that
 * look at or create a number (not the locks, which may wait for long). A sluice thread's own
 * calls on its own descriptors pass. */
static int guarded_close(int fd)
{
    if (own_thread)
        return NEXT(close)(fd);
    GUARDED(NEXT(close)(fd));
}

static int guarded_dup(int fd)
{
    GUARDED(NEXT(dup)(fd));
}

static int guarded_dup2(int oldfd, int newfd)
{
    if (own_thread)
        return NEXT(dup2)(oldfd, newfd);
    GUARDED(NEXT(dup2)(oldfd, newfd));
}

static int guarded_dup3(int oldfd, int newfd, int flags)
{
    if (own_thread)
        return NEXT(dup3)(oldfd, newfd, flags);
    GUARDED(NEXT(dup3)(oldfd, newfd, flags));
}

/* stdio opens inside libc: on the program's threads the whole call is one call on numbers
 * (freopen closes the stream's number and dup3s the new file onto it). */
#define GUARDED_STREAM(name, params, args)                                                                   \
    static FILE *guarded_##name params                                                                       \
    {                                                                                                        \
        struct sluice_fd_guard_section s;                                                                    \
        sluice_fd_guard_program_begin(&s);                                                                   \
        FILE *stream = NEXT(name) args;                                                                      \
        sluice_fd_guard_program_end(&s);                                                                     \
        return stream;                                                                                       \
    }
GUARDED_STREAM(fopen, (const char *path, const char *mode), (path, mode))
GUARDED_STREAM(fopen64, (const char *path, const char *mode), (path, mode))
GUARDED_STREAM(freopen, (const char *path, const char *mode, FILE *old), (path, mode, old))
GUARDED_STREAM(freopen64, (const char *path, const char *mode, FILE *old), (path, mode, old))

static bool on_numbers(int cmd)
{
    return cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC || cmd == F_GETFD || cmd == F_SETFD || cmd == F_GETFL ||
           cmd == F_SETFL;
}

#define GUARDED_FCNTL(name)                                                                                  \
    static int guarded_##name(int fd, int cmd, ...)                                                          \
    {                                                                                                        \
        va_list ap;                                                                                          \
        va_start(ap, cmd);                                                                                   \
        void *arg = va_arg(ap, void *);                                                                      \
        va_end(ap);                                                                                          \
        if (!on_numbers(cmd) || (own_thread && cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC))                    \
            return NEXT(name)(fd, cmd, arg);                                                                 \
        GUARDED(NEXT(name)(fd, cmd, arg));                                                                   \
    }
GUARDED_FCNTL(fcntl)
GUARDED_FCNTL(fcntl64)

void *sluice_fd_guard_substitute(const char *name)
{
    static const struct {
        const char *name;
        void *fn;
    } table[] = {
        {"open", (void *)guarded_open},
        {"open64", (void *)guarded_open64},
        {"openat", (void *)guarded_openat},
        {"openat64", (void *)guarded_openat64},
        {"opendir", (void *)guarded_opendir},
        {"close", (void *)guarded_close},
        {"dup", (void *)guarded_dup},
        {"dup2", (void *)guarded_dup2},
        {"dup3", (void *)guarded_dup3},
        {"fcntl", (void *)guarded_fcntl},
        {"fcntl64", (void *)guarded_fcntl64},
        {"fopen", (void *)guarded_fopen},
        {"fopen64", (void *)guarded_fopen64},
        {"freopen", (void *)guarded_freopen},
        {"freopen64", (void *)guarded_freopen64},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].name, name) == 0)
            return table[i].fn;
    return NULL;
}
