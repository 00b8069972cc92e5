/* SPDX-License-Identifier: MIT */
/* Work that must run when the process leaves through _exit or _Exit, which skip destructors and
 * atexit handlers. A part registers its hook from its constructor; the shim's _exit runs them
 * all, in the order of their `order` (lowest first), without knowing the parts. Registration is
 * for constructors (single-threaded); running reads the table without a lock. */
#ifndef SLUICE_COMMON_EXIT_HOOKS_H
#define SLUICE_COMMON_EXIT_HOOKS_H

#ifdef __cplusplus
extern "C" {
#endif

/* The order of the hooks: checkpoint capture commits what this process staged first (its status
 * may turn 0 into 1), then rank 0 of distributed OpenCL ends its servers. */
enum {
    SLUICE_EXIT_ORDER_CAPTURE = 10,
    SLUICE_EXIT_ORDER_OPENCL = 20,
};

/* A hook gets the status the process is about to exit with and returns the one to exit with. */
typedef int (*sluice_exit_hook_fn)(int status);

/* Adds `fn` at `order`. At most SLUICE_EXIT_HOOKS_MAX hooks; a further one is refused (-1). */
#define SLUICE_EXIT_HOOKS_MAX 8
int sluice_exit_hook_add(int order, sluice_exit_hook_fn fn);

/* Runs every hook in order, each on the status the one before returned; returns the last. */
int sluice_exit_hooks_run(int status);

#ifdef __cplusplus
}
#endif
#endif
