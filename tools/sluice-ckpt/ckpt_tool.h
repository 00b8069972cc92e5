/* SPDX-License-Identifier: MIT */
/* Shared pieces of the sluice-ckpt commands: exit codes, messages, and the expansion of PATH
 * arguments (a container, or a folder of containers) into containers to visit. */
#ifndef SLUICE_TOOLS_SLUICE_CKPT_CKPT_TOOL_H
#define SLUICE_TOOLS_SLUICE_CKPT_CKPT_TOOL_H

#include "ckpt/container/container.h"

#include <stdint.h>
#include <stdio.h>

enum { EXIT_OK = 0, EXIT_BAD_DATA = 1, EXIT_USAGE = 2 };

/* snprintf that says whether it fit: 0, or -1 if the output was cut (a cut path must never be
 * used; a cut message may). */
#define tool_snprintf(buf, len, ...)                                                                         \
    (__extension__({                                                                                         \
        int tool_n_ = snprintf((buf), (len), __VA_ARGS__);                                                   \
        (tool_n_ < 0 || (size_t)tool_n_ >= (size_t)(len)) ? -1 : 0;                                          \
    }))

/* "sluice-ckpt: <message>" on stderr. */
void tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Usage error for `cmd`: message, hint, returns EXIT_USAGE. */
int tool_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The stage folder a command reads: `given` (--stage) if set, else SLUICE_STAGE_DIR, else the
 * library's default, written into def (cap bytes) when that is the one used. */
const char *tool_stage_dir(const char *given, char *def, size_t cap);

/* Usage error for the option getopt_long just rejected ('?' or ':'); returns EXIT_USAGE.
 * Commands set opterr = 0 and use a leading ':' in their optstring. */
int tool_bad_option(const char *cmd, int got, char **argv);

/* Calls fn for each container named by paths (a container file, or every container in a
 * folder, and with TOOL_RECURSIVE in its subfolders too; default "." when npaths == 0). `rel`
 * is the container's folder relative to the PATH it was found under ("" for the PATH itself).
 * Containers that cannot be opened are reported and counted, not passed to fn. A folder
 * without containers is an error unless TOOL_EMPTY_OK. Returns EXIT_OK, or EXIT_BAD_DATA if
 * anything could not be opened or fn returned nonzero for any container. */
enum { TOOL_EMPTY_OK = 1, TOOL_RECURSIVE = 2 };
typedef int (*tool_visit)(void *ctx, const struct sluice_container *c, const char *rel);
int tool_for_each_container(char *const *paths, int npaths, int flags, tool_visit fn, void *ctx);

/* `s` made safe for a listing: control bytes (a newline in a hostile path could forge a line)
 * and backslashes are written as C escapes. Returns s itself when nothing needs escaping, else
 * buf (cut to fit). buf needs 4 bytes per byte of s, plus one. */
#define TOOL_SHOWN_MAX (4 * 4096 + 1)
const char *tool_shown(const char *s, char *buf, size_t len);

/* Human-readable time "2026-11-29T20:35:00.123Z". */
void tool_format_time(int64_t ns, char *buf, size_t len);

int cmd_ls(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_extract(int argc, char **argv);
int cmd_pack(int argc, char **argv);
int cmd_recover(int argc, char **argv);
int cmd_salvage(int argc, char **argv);
int cmd_scavenge(int argc, char **argv);
int cmd_bench(int argc, char **argv);

/* extract of a container holding one global array (cmd_array.c, docs/LAYOUT.md). */
struct tool_array_opts {
    const char *raw;    /* --raw FILE: the array alone */
    const char *h5;     /* --h5 FILE: an HDF5 view of the array inside the container */
    uint32_t ranks;     /* --ranks M: per-rank files of an M-rank decomposition (0: none) */
    const char *grid;   /* --grid PxQxR for them (default: as MPI_Dims_create) */
    const char *outdir; /* -o: where the per-rank files go (default: beside the container) */
    int force;
};
int tool_array_extract(const char *path, const struct tool_array_opts *o);

#endif
