/* SPDX-License-Identifier: MIT */
/* Resolution of the "real" (next) definition of every interposed symbol.
 *
 * All wrappers go through SLUICE_REAL(fn); the lookup logic lives once, in real.c.
 * Each call site caches the pointer in its own static slot, so the fast path is one
 * acquire load. Safe before constructors have run (resolution is lazy), from several
 * threads at once (resolution is idempotent), and against re-entry from inside dlsym
 * (a nested lookup of an fd-level call gets a raw-syscall fallback instead of recursing).
 * The calls that create descriptors (open, openat, opendir...) resolve to the versions of
 * common/fd_guard.h, which keep the descriptors of sluice's own threads out of the program's way. */
#ifndef SLUICE_COMMON_REAL_H
#define SLUICE_COMMON_REAL_H

#include <stdatomic.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Looks up `name` with dlsym(RTLD_NEXT), stores it in *slot and returns it. Returns a
 * raw-syscall fallback for a few fd calls when called re-entrantly, NULL if the symbol
 * exists nowhere after libsluice (callers then fail with ENOSYS). */
void *sluice_real_resolve(const char *name, void *_Atomic *slot);

/* Same, but through a handle (used for the real OpenCL loader sluice dlopens itself). */
void *sluice_real_resolve_in(void *handle, const char *name, void *_Atomic *slot);

/* libc's dlsym. libsluice exports a dlsym of its own (shim/opencl_dlsym.c, for programs that look
 * the OpenCL loader's functions up by hand), which a call by name from the runtime would reach
 * through the PLT. As with dlsym, RTLD_NEXT means after libsluice. sluice_real_dlsym_fn: the
 * function itself, found once (NULL if libc has none), safe while a sanitizer initialises. */
void *sluice_real_dlsym(void *handle, const char *name);
void *(*sluice_real_dlsym_fn(void))(void *, const char *);

#define SLUICE_REAL(fn)                                                                                      \
    (__extension__({                                                                                         \
        static void *_Atomic sluice_real_slot_;                                                              \
        void *sluice_real_p_ = atomic_load_explicit(&sluice_real_slot_, memory_order_acquire);               \
        if (__builtin_expect(sluice_real_p_ == NULL, 0))                                                     \
            sluice_real_p_ = sluice_real_resolve(#fn, &sluice_real_slot_);                                   \
        (__typeof__(&fn))sluice_real_p_;                                                                     \
    }))

#ifdef __cplusplus
}
#endif
#endif
