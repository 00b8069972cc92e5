/* SPDX-License-Identifier: MIT */
/* The one place that resolves next definitions of wrapped symbols (see real.h). */
#include "common/real.h"

#include "common/fd_guard.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Raw-syscall versions of the fd calls that glibc or the dynamic linker may issue while
 * dlsym is running. They are only used when a lookup re-enters itself on one thread. */
static int raw_open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, int) : 0;
    va_end(ap);
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}
static int raw_openat(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, int) : 0;
    va_end(ap);
    return (int)syscall(SYS_openat, dirfd, path, flags, mode);
}
static ssize_t raw_read(int fd, void *buf, size_t n)
{
    return syscall(SYS_read, fd, buf, n);
}
static ssize_t raw_write(int fd, const void *buf, size_t n)
{
    return syscall(SYS_write, fd, buf, n);
}
static int raw_close(int fd)
{
    return (int)syscall(SYS_close, fd);
}
static off_t raw_lseek(int fd, off_t off, int whence)
{
    return syscall(SYS_lseek, fd, off, whence);
}

static const struct {
    const char *name;
    void *fn;
} raw_fallbacks[] = {
    {"open", (void *)raw_open},       {"open64", (void *)raw_open}, {"openat", (void *)raw_openat},
    {"openat64", (void *)raw_openat}, {"read", (void *)raw_read},   {"write", (void *)raw_write},
    {"close", (void *)raw_close},     {"lseek", (void *)raw_lseek}, {"lseek64", (void *)raw_lseek},
};

static _Thread_local int resolving;

static void *fallback_for(const char *name)
{
    for (size_t i = 0; i < sizeof raw_fallbacks / sizeof raw_fallbacks[0]; i++)
        if (strcmp(raw_fallbacks[i].name, name) == 0)
            return raw_fallbacks[i].fn;
    return NULL;
}

typedef void *(*dlsym_fn)(void *, const char *);

__attribute__((no_sanitize_address, no_sanitize_undefined, no_sanitize("thread"))) dlsym_fn
sluice_real_dlsym_fn(void)
{
    static dlsym_fn fn;
    dlsym_fn f = __atomic_load_n(&fn, __ATOMIC_ACQUIRE);
    if (f == NULL) {
        f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
        if (f == NULL)
            f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
        __atomic_store_n(&fn, f, __ATOMIC_RELEASE);
    }
    return f;
}

/* (noinline: glibc's dlsym takes RTLD_NEXT relative to its caller, which must be libsluice.) */
__attribute__((noinline)) void *sluice_real_dlsym(void *handle, const char *name)
{
    dlsym_fn f = sluice_real_dlsym_fn();
    return f != NULL ? f(handle, name) : NULL;
}

void *sluice_real_resolve_in(void *handle, const char *name, void *_Atomic *slot)
{
    if (resolving)
        return fallback_for(name); /* not cached: the real one is found once dlsym returns */
    resolving = 1;
    void *p = sluice_real_dlsym(handle, name);
    resolving = 0;
    if (p != NULL)
        atomic_store_explicit(slot, p, memory_order_release);
    return p;
}

void *sluice_real_resolve(const char *name, void *_Atomic *slot)
{
    /* The calls that create descriptors get their guarded versions (fd_guard.h). */
    void *guarded = sluice_fd_guard_substitute(name);
    if (guarded != NULL) {
        atomic_store_explicit(slot, guarded, memory_order_release);
        return guarded;
    }
    return sluice_real_resolve_in(RTLD_NEXT, name, slot);
}
