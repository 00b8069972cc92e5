/* SPDX-License-Identifier: MIT */
/* See library.h. SLUICE_MPI_LIBRARY is the soname of the MPI library found at configure time. */
#include "mpi/library.h"

#include <dlfcn.h>
#include <pthread.h>

#include "common/log.h"
#include "common/real.h"
#include "sluice_runtime_deps.h"

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static int loaded; /* 1 loaded, -1 failed (reported once) */

int sluice_mpi_library_load(void)
{
    pthread_mutex_lock(&load_lock);
    if (loaded == 0) {
        /* Already loaded: the program links MPI. Asked by a name that only the library defines:
         * PMPI_Init_thread is exported by libsluice itself (shim/mpi.c) and by tools preloaded
         * beside it (Darshan, PMPI profilers), some of which do not load MPI themselves. */
        if (sluice_real_dlsym(RTLD_DEFAULT, "PMPI_Initialized") != NULL) {
            loaded = 1;
        } else if (dlopen(SLUICE_MPI_LIBRARY, RTLD_NOW | RTLD_GLOBAL) != NULL) {
            loaded = 1;
        } else {
            const char *why = dlerror();
            sluice_log_warn("cannot load the MPI library %s (Debian package %s): %s; sluice will not use MPI",
                            SLUICE_MPI_LIBRARY, SLUICE_MPI_DEB, why ? why : "unknown error");
            loaded = -1;
        }
    }
    int rc = loaded == 1 ? 0 : -1;
    pthread_mutex_unlock(&load_lock);
    return rc;
}

void *sluice_mpi_library_symbol(const char *name)
{
    void *h = dlopen(SLUICE_MPI_LIBRARY, RTLD_NOW | RTLD_NOLOAD);
    if (h == NULL)
        return NULL;
    void *p = sluice_real_dlsym(h, name);
    dlclose(h); /* RTLD_NOLOAD took a reference; the library stays loaded */
    return p;
}
