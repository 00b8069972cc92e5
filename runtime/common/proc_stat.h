/* SPDX-License-Identifier: MIT */
/* Fields of a /proc/<pid>/stat line (proc(5)), parsed once for every reader: each reads the
 * file its own way (the real libc, raw system calls, or a tool's plain read). */
#ifndef SLUICE_COMMON_PROC_STAT_H
#define SLUICE_COMMON_PROC_STAT_H

#include <stddef.h>
#include <string.h>

/* The text of field `field` (3 or more, numbered as in proc(5); 22 is the start time in clock
 * ticks since boot) of a NUL-terminated stat line, or NULL. The command name (field 2) may hold
 * spaces and parentheses: fields are counted from its last ')'. */
static inline const char *sluice_proc_stat_field(const char *line, int field)
{
    const char *p = strrchr(line, ')');
    for (int f = 2; p && f < field; f++)
        p = strchr(p + 1, ' ');
    return p ? p + 1 : NULL;
}

#endif
