/* SPDX-License-Identifier: MIT */
/* The start-up check of tags.def: pure, so that a unit test can make it fail on purpose. */
#include "mpi/tags.h"

#include <stdio.h>

struct tag_range {
    const char *name;
    long first, count;
};

static const struct tag_range ranges[] = {
#define SLUICE_TAG_RANGE(name, first, count, what) {#name, (first), (count)},
#include "mpi/tags.def"
#undef SLUICE_TAG_RANGE
};

int sluice_tags_check(int tag_ub, char *err, size_t errlen)
{
    size_t n = sizeof ranges / sizeof ranges[0];
    for (size_t i = 0; i < n; i++) {
        const struct tag_range *a = &ranges[i];
        if (a->first + a->count - 1 > tag_ub) {
            snprintf(err, errlen, "MPI tag range %s (%ld-%ld) passes this MPI library's MPI_TAG_UB %d",
                     a->name, a->first, a->first + a->count - 1, tag_ub);
            return -1;
        }
        for (size_t j = i + 1; j < n; j++) {
            const struct tag_range *b = &ranges[j];
            if (a->first < b->first + b->count && b->first < a->first + a->count) {
                snprintf(err, errlen, "MPI tag ranges %s and %s overlap", a->name, b->name);
                return -1;
            }
        }
    }
    return 0;
}
