/* SPDX-License-Identifier: MIT */
/* Binding to the real OpenCL ICD loader, and the on/off switch.
 *
 * libsluice.so does not link libOpenCL: a program that dlopen()s the loader RTLD_LOCAL would
 * otherwise see the loader's symbols, not sluice's, and sluice's own RTLD_NEXT lookups would
 * find nothing (../shared/reference/opencl-interposition.md §4.2). So sluice opens the loader
 * itself, on the first OpenCL call, and resolves every entry point in it by name.
 *
 * Search order: libOpenCL.so.1, then libOpenCL.so (the ordinary dynamic-linker search, so
 * LD_LIBRARY_PATH and the program's own loader choice are honoured). A candidate that turns out
 * to be sluice itself (installed as a libOpenCL.so.1 in the cliloader style) is skipped. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cl/intercept/backend.h"
#include "cl/intercept/names.h"
#include "cl/intercept/wrap.h"
#include "common/log.h"
#include "common/real.h"
#include "config/config.h"
#include "sluice_runtime_deps.h"

int sluice_cl_state = SLUICE_CL_UNSET;

static struct sluice_cl_backend loader_backend = {.name = "local"};
static const char *loader_path = "";
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static const char *const loader_candidates[] = {"libOpenCL.so.1", "libOpenCL.so"};

static void **api_slot(struct sluice_cl_api *api, const struct sluice_cl_name *n)
{
    return (void **)((char *)api + n->api_offset);
}

static bool mode_is_off(void)
{
    const char *m = sluice_config_early(SLUICE_CFG_OPENCL); /* also before the constructor */
    return m != NULL && strcmp(m, "off") == 0;
}

static void *open_loader(void)
{
    Dl_info self;
    if (dladdr((void *)open_loader, &self) == 0)
        self.dli_fbase = NULL;
    for (size_t i = 0; i < sizeof loader_candidates / sizeof loader_candidates[0]; i++) {
        void *h = dlopen(loader_candidates[i], RTLD_NOW | RTLD_LOCAL);
        if (h == NULL)
            continue;
        void *_Atomic slot = NULL;
        void *probe = sluice_real_resolve_in(h, "clGetPlatformIDs", &slot);
        Dl_info where;
        if (probe != NULL && dladdr(probe, &where) != 0 && where.dli_fbase == self.dli_fbase) {
            dlclose(h); /* that is sluice itself */
            continue;
        }
        loader_path = loader_candidates[i];
        return h;
    }
    return NULL;
}

static void init_once_body(void)
{
    bool off = mode_is_off();
    void *h = open_loader();
    if (h == NULL) {
        sluice_log_error("opencl: cannot open the OpenCL ICD loader libOpenCL.so.1 (Debian package %s): "
                         "%s; every OpenCL call fails",
                         SLUICE_OPENCL_DEB, dlerror());
    } else {
        for (size_t i = 0; i < SLUICE_CL_FN_COUNT; i++) {
            void *_Atomic slot = NULL;
            *api_slot(&loader_backend.api, &sluice_cl_names[i]) =
                sluice_real_resolve_in(h, sluice_cl_names[i].name, &slot);
        }
    }
    __atomic_store_n(&sluice_cl_state, off ? SLUICE_CL_OFF : SLUICE_CL_ON, __ATOMIC_RELEASE);
}

int sluice_cl_init(void)
{
    pthread_once(&init_once, init_once_body);
    return __atomic_load_n(&sluice_cl_state, __ATOMIC_ACQUIRE);
}

const struct sluice_cl_backend *sluice_cl_loader_backend(void)
{
    if (__atomic_load_n(&sluice_cl_state, __ATOMIC_ACQUIRE) == SLUICE_CL_UNSET)
        sluice_cl_init();
    return &loader_backend;
}

const char *sluice_cl_loader_path(void)
{
    return loader_path;
}

/* One backend per real platform: extension entry points are the vendor's own. */
struct platform_backend {
    cl_platform_id real;
    struct sluice_cl_backend be;
    struct platform_backend *next;
};
static struct platform_backend *platform_backends;
static pthread_mutex_t platform_lock = PTHREAD_MUTEX_INITIALIZER;

const struct sluice_cl_backend *sluice_cl_platform_backend(cl_platform_id real_platform)
{
    const struct sluice_cl_backend *loader = sluice_cl_loader_backend();
    if (real_platform == NULL)
        return loader;
    pthread_mutex_lock(&platform_lock);
    struct platform_backend *p;
    for (p = platform_backends; p != NULL; p = p->next)
        if (p->real == real_platform)
            break;
    if (p == NULL && (p = calloc(1, sizeof *p)) != NULL) {
        p->real = real_platform;
        p->be = *loader;
        sluice_cl_pfn_clGetExtensionFunctionAddressForPlatform ext =
            loader->api.clGetExtensionFunctionAddressForPlatform;
        for (size_t i = 0; ext != NULL && i < SLUICE_CL_FN_COUNT; i++) {
            void **slot = api_slot(&p->be.api, &sluice_cl_names[i]);
            if (*slot == NULL)
                *slot = ext(real_platform, sluice_cl_names[i].name);
        }
        p->next = platform_backends;
        platform_backends = p;
    }
    pthread_mutex_unlock(&platform_lock);
    return p ? &p->be : loader;
}

/* Fills a loader-backend slot found later through clGetExtensionFunctionAddress (no platform). */
void sluice_cl_loader_backend_learn(const struct sluice_cl_name *n, void *fn)
{
    void **slot = api_slot(&loader_backend.api, n);
    if (*slot == NULL)
        __atomic_store_n(slot, fn, __ATOMIC_RELEASE);
}

static int name_cmp(const void *key, const void *elem)
{
    return strcmp((const char *)key, ((const struct sluice_cl_name *)elem)->name);
}

const struct sluice_cl_name *sluice_cl_name_find(const char *name)
{
    return bsearch(name, sluice_cl_names, SLUICE_CL_FN_COUNT, sizeof sluice_cl_names[0], name_cmp);
}

const char *sluice_cl_fn_name(sluice_cl_fn_id id)
{
    static const char *const by_id[SLUICE_CL_FN_COUNT] = {
#define X(name) [SLUICE_CL_FN_##name] = #name,
        SLUICE_CL_FUNCTIONS(X)
#undef X
    };
    return (unsigned)id < SLUICE_CL_FN_COUNT ? by_id[id] : "?";
}
