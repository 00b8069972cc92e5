/* SPDX-License-Identifier: MIT */
/* MPI tags of sluice's private communicator (tags.def lists every range once). */
#ifndef SLUICE_MPI_TAGS_H
#define SLUICE_MPI_TAGS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
#define SLUICE_TAG_RANGE(name, first, count, what)                                                           \
    SLUICE_TAG_##name = (first), SLUICE_TAG_##name##_COUNT = (count),
#include "mpi/tags.def"
#undef SLUICE_TAG_RANGE
};

/* 0 when the ranges are disjoint and all below tag_ub; else -1 with a one-line reason in err. */
int sluice_tags_check(int tag_ub, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
