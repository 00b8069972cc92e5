/* SPDX-License-Identifier: MIT */
/* CPU lists as Linux writes them ("0-3,8,10-11": /sys/devices/system/cpu/online, taskset -c,
 * Cpus_allowed_list), to and from cpu_set_t. */
#ifndef SLUICE_COMMON_CPULIST_H
#define SLUICE_COMMON_CPULIST_H

#include <sched.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Parses `s` into *set. Returns 0, or -1 with a one-line reason in err (CPUs from 0 to
 * CPU_SETSIZE - 1, ranges low-high, entries separated by commas, at least one CPU). */
int sluice_cpulist_parse(const char *s, cpu_set_t *set, char *err, size_t errlen);

/* Writes *set as a list ("" for the empty set), truncated to fit `len` bytes. */
void sluice_cpulist_format(const cpu_set_t *set, char *buf, size_t len);

/* The first 64 CPUs of *set as a bit mask (CPU i is bit i): for trace events. */
unsigned long long sluice_cpulist_mask64(const cpu_set_t *set);

#ifdef __cplusplus
}
#endif
#endif
