/* SPDX-License-Identifier: MIT */
#include "common/info_string.h"

#include <stdlib.h>
#include <string.h>

char *sluice_info_string(sluice_info_ask_fn ask, const void *ctx, int32_t *err)
{
    size_t len = 0;
    int32_t rc = ask(ctx, 0, NULL, &len);
    char *s = rc == 0 ? malloc(len + 1) : NULL; /* +1: a terminator even if the answer lacks one */
    if (rc == 0 && s == NULL)
        rc = SLUICE_INFO_NO_MEMORY;
    if (rc == 0 && len > 0)
        rc = ask(ctx, len, s, NULL);
    if (rc != 0) {
        free(s);
        if (err != NULL)
            *err = rc;
        return NULL;
    }
    s[len] = '\0';
    if (err != NULL)
        *err = 0;
    return s;
}
