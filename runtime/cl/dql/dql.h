/* SPDX-License-Identifier: MIT */
/* DQL, libWater's device query language: which devices a distributed OpenCL program sees and
 * in which order (SLUICE_DEVICES). Pure code: the runtime fills one descriptor per device from
 * clGetDeviceInfo on each rank, gathers them on rank 0, and asks the evaluator which ones to
 * show. Grammar, attributes and error messages: docs/DQL.md.
 *
 *   struct sluice_dql_query *q;
 *   char err[512];
 *   if (sluice_dql_parse("SELECT TOP 2 WHERE type = gpu ORDER BY clock DESC", &q, err, sizeof err))
 *       ... err holds "column N: ..." ...
 *   size_t out[n], count;
 *   sluice_dql_select(q, devices, n, out, &count);   // out[0..count) index into devices
 *   sluice_dql_free(q);
 */
#ifndef SLUICE_CL_DQL_DQL_H
#define SLUICE_CL_DQL_DQL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Longest text attribute kept, terminating NUL included: a longer value is kept cut and marked
 * (struct sluice_dql_device's `cut`), and a query that reads it is refused (sluice_dql_reads_cut). */
#define SLUICE_DQL_STR_MAX 256
/* Deepest nesting of parentheses and NOT a query may use. */
#define SLUICE_DQL_MAX_DEPTH 32
/* Longest query accepted, in bytes. */
#define SLUICE_DQL_MAX_LENGTH 4096

/* cl_device_type bits, repeated so that this header needs no OpenCL headers (dql_attrs.c
 * checks they agree with CL/cl.h). */
#define SLUICE_DQL_TYPE_DEFAULT (1u << 0)
#define SLUICE_DQL_TYPE_CPU (1u << 1)
#define SLUICE_DQL_TYPE_GPU (1u << 2)
#define SLUICE_DQL_TYPE_ACCELERATOR (1u << 3)
#define SLUICE_DQL_TYPE_CUSTOM (1u << 4)

/* One device as the query sees it: plain data, so that ranks can send it to rank 0 as bytes.
 * Fields come from dql_attrs.def; text fields are NUL-terminated. */
#define SLUICE_DQL_FIELD_STR(id) char id[SLUICE_DQL_STR_MAX];
#define SLUICE_DQL_FIELD_NUM(id) uint64_t id;
#define SLUICE_DQL_FIELD_SIZE(id) uint64_t id;
#define SLUICE_DQL_FIELD_BOOL(id) bool id;
#define SLUICE_DQL_FIELD_TYPE(id) uint64_t id;
#define SLUICE_DQL_FIELD_COMPUTED(id)
struct sluice_dql_device {
#define SLUICE_DQL_ATTR(id, alias, kind, source, meaning) SLUICE_DQL_FIELD_##kind(id)
#include "cl/dql/dql_attrs.def"
#undef SLUICE_DQL_ATTR
    uint32_t cut; /* bit (1 << attribute id) per text attribute longer than its field */
};

typedef enum {
#define SLUICE_DQL_ATTR(id, alias, kind, source, meaning) SLUICE_DQL_ATTR_##id,
#include "cl/dql/dql_attrs.def"
#undef SLUICE_DQL_ATTR
    SLUICE_DQL_ATTR_COUNT
} sluice_dql_attr_id;

typedef enum {
    SLUICE_DQL_KIND_STR,
    SLUICE_DQL_KIND_NUM,
    SLUICE_DQL_KIND_SIZE,
    SLUICE_DQL_KIND_BOOL,
    SLUICE_DQL_KIND_TYPE,
    SLUICE_DQL_KIND_COMPUTED
} sluice_dql_kind;

struct sluice_dql_attr_desc {
    const char *name;
    const char *alias; /* "" when none */
    sluice_dql_kind kind;
    size_t offset; /* of the field in struct sluice_dql_device; unused for COMPUTED */
    const char *source;
    const char *meaning;
};
extern const struct sluice_dql_attr_desc sluice_dql_attrs[SLUICE_DQL_ATTR_COUNT];

/* The attribute called `name` (or its alias), case-insensitive over `len` bytes; -1 if none. */
int sluice_dql_attr_lookup(const char *name, size_t len);

struct sluice_dql_query; /* opaque: the parsed query (AST) */

/* Parses `text`. On success stores a new query in *out and returns 0. On error returns -1 and
 * writes one line into err: "column C: <what was expected or what is wrong>" (C is 1-based, in
 * bytes); the caller prefixes the source, e.g. "SLUICE_DEVICES: ". Never reads past the NUL. */
int sluice_dql_parse(const char *text, struct sluice_dql_query **out, char *err, size_t errlen);

void sluice_dql_free(struct sluice_dql_query *q);

/* Whether SLUICE_DEVICES leaves the choice to the default (NULL, empty or only whitespace):
 * the runtime then shows every device, as SELECT ALL would. */
bool sluice_dql_blank(const char *text);

/* Selects devices: orders `devs` by (node, index), keeps those on the FROM NODE list that
 * satisfy WHERE, sorts them stably by ORDER BY, then applies ALL / TOP k / POS i. Writes the
 * indices (into devs) of the selected devices, in order, into out (room for ndevs entries)
 * and their number into *count. Returns 0, or -1 when out of memory. */
int sluice_dql_select(const struct sluice_dql_query *q, const struct sluice_dql_device *devs, size_t ndevs,
                      size_t *out, size_t *count);

/* The first device (index into devs) one of whose text attributes that the query reads, in WHERE
 * or ORDER BY, was longer than its field, with that attribute in *attr; ndevs when none is. The
 * answer on a cut value could be wrong, so such a query is refused. */
size_t sluice_dql_reads_cut(const struct sluice_dql_query *q, const struct sluice_dql_device *devs,
                            size_t ndevs, int *attr);

/* Whether one device satisfies the WHERE clause alone (`pos` is its default-order position). */
bool sluice_dql_match(const struct sluice_dql_query *q, const struct sluice_dql_device *dev, size_t pos);

/* Writes the query back in canonical form (keywords upper case, every AND/OR group in
 * parentheses, strings quoted, sizes in bytes). Returns the length it needed, like snprintf. */
size_t sluice_dql_format(const struct sluice_dql_query *q, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
