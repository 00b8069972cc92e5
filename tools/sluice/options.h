/* SPDX-License-Identifier: MIT */
/* The launcher's options: one per SLUICE_* variable (runtime/config/vars.def, the one list),
 * plus the launcher's own. Built into a getopt_long table; --help, the man page and the bash
 * completion are all generated from it. */
#ifndef SLUICE_TOOLS_SLUICE_OPTIONS_H
#define SLUICE_TOOLS_SLUICE_OPTIONS_H

#include "config/config.h"

#include <getopt.h>
#include <stdio.h>

/* Launcher-only options: getopt_long values above any character. */
enum {
    OPT_LIB = 256,
    OPT_LIST_VARIABLES,
    OPT_WATCH_NODES,
    OPT_VAR_BASE = 512 /* + index into sluice_cfg_table */
};

/* getopt_long's tables: long options (NULL-terminated) and the short option string. */
extern struct option launcher_longopts[];
extern const char launcher_shortopts[];
void launcher_options_init(void);

/* The short letter of a variable's option, or 0. */
int launcher_short_of(const struct sluice_cfg_desc *d);
/* The placeholder shown after an option: DIR, SIZE, N, the enum's choices, ... */
const char *launcher_metavar(const struct sluice_cfg_desc *d);
/* Index of the long option nearest to `name` (a typo), or -1. */
int launcher_nearest_option(const char *name);

void launcher_usage(FILE *out, const char *docdir);
/* Tab-separated: variable, option, short letter, placeholder, default, accepts, help. */
void launcher_list_variables(FILE *out);

#endif
