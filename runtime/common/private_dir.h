/* SPDX-License-Identifier: MIT */
/* sluice's private folders (the stage folder, the MPI claim folders): created 0700 and checked
 * on every use, whoever created them, so that another local user can neither read what sluice
 * keeps there nor plant files or links in it (docs/SECURITY.md). Raw system calls only: util
 * code (sluice-ckpt) and the engine (where open/mkdir are sluice's own wrappers) both use it. */
#ifndef SLUICE_COMMON_PRIVATE_DIR_H
#define SLUICE_COMMON_PRIVATE_DIR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Creates `path` (and missing parents) with mode 0700 when `create` and it is absent, then
 * checks the folder itself through a descriptor opened O_DIRECTORY|O_NOFOLLOW: not a symbolic
 * link, a directory, owned by this user, writable by nobody else. Returns 0, or -errno
 * (-EACCES for a folder that fails the check) with one line naming the problem in why. */
int sluice_private_dir(const char *path, int create, char *why, size_t whylen);

/* 64 random bits for the names of files that sluice creates exclusively (O_CREAT|O_EXCL|
 * O_NOFOLLOW) in a folder that others may write: nobody can predict the name to plant it. */
unsigned long long sluice_random_u64(void);

/* This process's umask, read without changing it (/proc/self/status; 022 if unknown). */
unsigned sluice_process_umask(void);

#ifdef __cplusplus
}
#endif
#endif
