/* SPDX-License-Identifier: MIT */
/* This machine's host name, whole: Linux allows 64 bytes (a UTS namespace's `hostname` sets any
 * name up to that), one more than a 64-byte buffer with its terminator holds. */
#ifndef SLUICE_COMMON_HOST_NAME_H
#define SLUICE_COMMON_HOST_NAME_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLUICE_HOST_NAME_MAX 64 /* bytes, terminator excluded (the kernel's __NEW_UTS_LEN) */

/* Writes the host name into buf (SLUICE_HOST_NAME_MAX + 1 bytes at least), "" if unknown. */
void sluice_host_name(char *buf);

#ifdef __cplusplus
}
#endif
#endif
