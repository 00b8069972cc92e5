/* SPDX-License-Identifier: MIT */
/* See exit_hooks.h. The table is kept sorted by order as hooks are added. */
#include "common/exit_hooks.h"

static struct {
    int order;
    sluice_exit_hook_fn fn;
} hooks[SLUICE_EXIT_HOOKS_MAX];
static int nhooks;

int sluice_exit_hook_add(int order, sluice_exit_hook_fn fn)
{
    int n = __atomic_load_n(&nhooks, __ATOMIC_ACQUIRE);
    if (n == SLUICE_EXIT_HOOKS_MAX || fn == 0)
        return -1;
    int i = n;
    for (; i > 0 && hooks[i - 1].order > order; i--)
        hooks[i] = hooks[i - 1];
    hooks[i].order = order;
    hooks[i].fn = fn;
    __atomic_store_n(&nhooks, n + 1, __ATOMIC_RELEASE);
    return 0;
}

int sluice_exit_hooks_run(int status)
{
    int n = __atomic_load_n(&nhooks, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        status = hooks[i].fn(status);
    return status;
}
