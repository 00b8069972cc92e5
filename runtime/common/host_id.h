/* SPDX-License-Identifier: MIT */
/* This host's identity, for names that several hosts may create in one shared folder (a stage
 * folder or trace folder on a parallel file system): a process id alone repeats across nodes
 * (each node's PID namespace, containers, pid_max), so such names carry this id too, and a
 * liveness probe by pid (kill 0, /proc) is only made for a writer of this same host. */
#ifndef SLUICE_COMMON_HOST_ID_H
#define SLUICE_COMMON_HOST_ID_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLUICE_HOST_ID_LEN 16 /* hex digits */

/* Writes the id into buf (SLUICE_HOST_ID_LEN + 1 bytes): 64 bits of FNV-1a over the kernel's
 * boot id (differs between machines and boots), the PID namespace (differs between the
 * containers or emulated nodes of one kernel) and the host name. Raw system calls only, no
 * lock: async-signal-safe. */
void sluice_host_id(char *buf);

/* 1 when `id` names this host (an empty id: written before names carried one, taken as this
 * host's, as it was then), else 0. */
int sluice_host_id_is_mine(const char *id);

#ifdef __cplusplus
}
#endif
#endif
