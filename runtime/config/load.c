/* SPDX-License-Identifier: MIT */
/* Reads the configuration once, before main, and stops a misconfigured program at once
 * (exit 2) rather than letting it run without what the user asked for. */
#include "common/init_order.h"
#include "common/log.h"
#include "config/config.h"

extern char **environ;

static void warn_line(const char *line, void *ctx)
{
    (void)ctx;
    sluice_log_warn("%s", line);
}

__attribute__((constructor(SLUICE_PRIO_CONFIG))) static void sluice_config_load(void)
{
    char err[512];
    if (sluice_config_parse(&sluice_config, environ, err, sizeof err, warn_line, NULL) != 0)
        sluice_fatal_config("%s", err);
}
