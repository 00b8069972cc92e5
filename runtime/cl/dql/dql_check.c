/* SPDX-License-Identifier: MIT */
/* Validates SLUICE_DEVICES when the library loads: a query that does not parse stops the
 * program before main (exit 2) with the column and what was expected, instead of failing
 * later, on another rank, when the distributed runtime first needs the device list. */
#include "cl/dql/dql.h"
#include "common/init_order.h"
#include "common/log.h"
#include "config/config.h"

__attribute__((constructor(SLUICE_PRIO_OPENCL))) static void sluice_dql_check(void)
{
    if (!sluice_config.is_set[SLUICE_CFG_DEVICES] || sluice_dql_blank(sluice_config.DEVICES))
        return; /* unset or blank: every device, nothing to check */
    struct sluice_dql_query *q;
    char err[768];
    if (sluice_dql_parse(sluice_config.DEVICES, &q, err, sizeof err) != 0)
        sluice_fatal_config("SLUICE_DEVICES: %s", err);
    sluice_dql_free(q);
}
