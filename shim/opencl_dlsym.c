/* SPDX-License-Identifier: MIT */
/* Programs that dlopen("libOpenCL.so.1") and dlsym() its entry points would bypass the
 * preloaded wrappers (a library handle is searched before LD_PRELOAD's global scope). sluice
 * exports dlsym: when the handle is an OpenCL ICD loader, the caller is not sluice itself and
 * sluice wraps the name, the caller gets sluice's wrapper instead of the loader's function.
 *
 * Everything else must behave exactly as glibc's dlsym, including RTLD_NEXT, which glibc
 * resolves relative to its caller's return address. So dlsym is a tiny assembly stub that asks
 * the C policy below and otherwise *jumps* (not calls) to the real dlsym, leaving the program's
 * return address in place. x86-64 only; elsewhere dlsym is not interposed (docs/OPENCL.md). */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "cl/intercept/names.h"
#include "cl/intercept/wrap.h"
#include "common/real.h"

#if defined(__x86_64__)

extern void (*const sluice_cl_wrappers[SLUICE_CL_FN_COUNT])(void);
typedef void *(*dlsym_fn)(void *, const char *);

/* A sanitizer runtime calls dlsym while it initialises, before instrumented code may run: the
 * path such calls take (every name but cl*, and RTLD_NEXT) is kept uninstrumented. */
#define NOT_INSTRUMENTED __attribute__((no_sanitize_address, no_sanitize_undefined, no_sanitize("thread")))
__attribute__((visibility("hidden"))) dlsym_fn sluice_cl_real_dlsym;

NOT_INSTRUMENTED static dlsym_fn find_real_dlsym(void)
{
    dlsym_fn f = __atomic_load_n(&sluice_cl_real_dlsym, __ATOMIC_ACQUIRE);
    if (f == NULL) {
        f = sluice_real_dlsym_fn();
        __atomic_store_n(&sluice_cl_real_dlsym, f, __ATOMIC_RELEASE);
    }
    return f;
}

NOT_INSTRUMENTED static int is_self(void *addr)
{
    static void *self_base;
    Dl_info di;
    if (self_base == NULL && dladdr((void *)is_self, &di) != 0)
        self_base = di.dli_fbase;
    return dladdr(addr, &di) != 0 && di.dli_fbase == self_base;
}

static int is_opencl_loader(void *handle)
{
    struct link_map *lm = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || lm == NULL || lm->l_name == NULL)
        return 0;
    const char *base = strrchr(lm->l_name, '/');
    base = base ? base + 1 : lm->l_name;
    return strncmp(base, "libOpenCL.so", 12) == 0;
}

/* Returns sluice's wrapper for (handle, name), or NULL to let the real dlsym answer. */
NOT_INSTRUMENTED __attribute__((visibility("hidden"), used)) void *
sluice_cl_dlsym_redirect(void *handle, const char *name, void *caller)
{
    dlsym_fn real = find_real_dlsym();
    if (real == NULL || name == NULL || name[0] != 'c' || name[1] != 'l')
        return NULL;
    if (handle == RTLD_DEFAULT || handle == RTLD_NEXT || is_self(caller))
        return NULL;
    const struct sluice_cl_name *n = sluice_cl_name_find(name);
    if (n == NULL || !is_opencl_loader(handle) || !sluice_cl_on())
        return NULL;
    if (real(handle, name) == NULL)
        return NULL; /* the loader lacks it: so does sluice */
    return (void *)sluice_cl_wrappers[n->id];
}

__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        "    .cfi_startproc\n"
        "    pushq %rdi\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    pushq %rsi\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    subq $8, %rsp\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    movq 24(%rsp), %rdx\n" /* the caller's return address */
        "    call sluice_cl_dlsym_redirect\n"
        "    addq $8, %rsp\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    popq %rsi\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    popq %rdi\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    testq %rax, %rax\n"
        "    jnz 1f\n"
        "    jmpq *sluice_cl_real_dlsym(%rip)\n"
        "1:  ret\n"
        "    .cfi_endproc\n"
        ".size dlsym, .-dlsym\n");

#endif
