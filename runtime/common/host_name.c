/* SPDX-License-Identifier: MIT */
#include "common/host_name.h"

#include <string.h>
#include <sys/utsname.h>

_Static_assert(sizeof((struct utsname *)0)->nodename == SLUICE_HOST_NAME_MAX + 1, "the kernel's limit");

void sluice_host_name(char *buf)
{
    struct utsname u;
    buf[0] = '\0';
    if (uname(&u) == 0) {
        size_t n = strnlen(u.nodename, SLUICE_HOST_NAME_MAX);
        memcpy(buf, u.nodename, n);
        buf[n] = '\0';
    }
}
