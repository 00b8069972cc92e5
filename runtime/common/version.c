/* SPDX-License-Identifier: MIT */
/* sluice_version(): the public way to ask which library is loaded. */
#include "common/export.h"
#include "sluice.h"
#include "sluice_version.h"

SLUICE_EXPORT const char *sluice_version(void)
{
    return SLUICE_VERSION_STRING;
}
