/* SPDX-License-Identifier: MIT */
/* The DQL attribute table (expanded from dql_attrs.def) and name lookup. */
#include "cl/dql/dql.h"
#include "cl/dql/dql_internal.h"

#include <CL/cl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

_Static_assert(SLUICE_DQL_TYPE_DEFAULT == CL_DEVICE_TYPE_DEFAULT, "device type bits");
_Static_assert(SLUICE_DQL_TYPE_CPU == CL_DEVICE_TYPE_CPU, "device type bits");
_Static_assert(SLUICE_DQL_TYPE_GPU == CL_DEVICE_TYPE_GPU, "device type bits");
_Static_assert(SLUICE_DQL_TYPE_ACCELERATOR == CL_DEVICE_TYPE_ACCELERATOR, "device type bits");
_Static_assert(SLUICE_DQL_TYPE_CUSTOM == CL_DEVICE_TYPE_CUSTOM, "device type bits");

#define DQL_OFFSET_STR(id) offsetof(struct sluice_dql_device, id)
#define DQL_OFFSET_NUM(id) offsetof(struct sluice_dql_device, id)
#define DQL_OFFSET_SIZE(id) offsetof(struct sluice_dql_device, id)
#define DQL_OFFSET_BOOL(id) offsetof(struct sluice_dql_device, id)
#define DQL_OFFSET_TYPE(id) offsetof(struct sluice_dql_device, id)
#define DQL_OFFSET_COMPUTED(id) 0

_Static_assert(SLUICE_DQL_ATTR_COUNT <= 32, "struct sluice_dql_device's cut has a bit per attribute");

const struct sluice_dql_attr_desc sluice_dql_attrs[SLUICE_DQL_ATTR_COUNT] = {
#define SLUICE_DQL_ATTR(id, alias, kind, source, meaning)                                                    \
    {#id, alias, SLUICE_DQL_KIND_##kind, DQL_OFFSET_##kind(id), source, meaning},
#include "cl/dql/dql_attrs.def"
#undef SLUICE_DQL_ATTR
};

bool dql_word_is(const char *s, size_t len, const char *word)
{
    return strlen(word) == len && strncasecmp(s, word, len) == 0;
}

int sluice_dql_attr_lookup(const char *name, size_t len)
{
    for (int i = 0; i < SLUICE_DQL_ATTR_COUNT; i++) {
        if (dql_word_is(name, len, sluice_dql_attrs[i].name) ||
            (sluice_dql_attrs[i].alias[0] && dql_word_is(name, len, sluice_dql_attrs[i].alias)))
            return i;
    }
    return -1;
}

void dql_error_at(char *err, size_t errlen, size_t pos, const char *fmt, ...)
{
    if (err == NULL || errlen == 0)
        return;
    int n = snprintf(err, errlen, "column %zu: ", pos + 1);
    if (n < 0 || (size_t)n >= errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
}
