/* SPDX-License-Identifier: MIT */
/* See options.h. */
#include "options.h"

#include <string.h>

/* Short letters where users expect them; everything else is long only. */
static const struct {
    const char *option;
    char letter;
} short_letters[] = {{"trace", 't'}, {"capture", 'c'}, {"debug", 'd'}, {"backtrace", 'b'}};

/* Placeholders for free-form values whose type alone says too little. */
static const struct {
    const char *option;
    const char *metavar;
} metavars[] = {{"debug", "WHERE"},      {"devices", "QUERY"}, {"dsm-servers", "RANKS"},
                {"helper-cpus", "CPUS"}, {"layout", "SPEC"},   {"node-report", "SPEC"}};

static const struct {
    const char *name;
    int has_arg;
    int val;
    const char *metavar;
    const char *help;
} own[] = {
    {"lib", required_argument, OPT_LIB, "PATH",
     "preload this libsluice.so instead of the one installed with the launcher"},
    {"print-env", no_argument, 'n', NULL, "print the variables that would be set, then exit"},
    {"watch-nodes", no_argument, OPT_WATCH_NODES, NULL,
     "run the launcher command that follows (sluice --watch-nodes mpiexec ...) and name, in one line, a node "
     "whose processes all die or the first rank that dies alone; end the launcher if it outlives its ranks "
     "(docs/CLUSTER.md)"},
    {"list-variables", no_argument, OPT_LIST_VARIABLES, NULL,
     "print every variable as a tab-separated line (variable, option, letter, placeholder, default, "
     "accepts, help), then exit"},
    {"version", no_argument, 'V', NULL, "print the version and exit"},
    {"help", no_argument, 'h', NULL, "show this help and exit"},
};
#define NOWN (sizeof own / sizeof own[0])

struct option launcher_longopts[SLUICE_CFG_COUNT + NOWN + 1];
/* '+': stop at the program's name; ':': report a missing value as ':'. */
const char launcher_shortopts[] = "+:t:c:d:b:nVh";

int launcher_short_of(const struct sluice_cfg_desc *d)
{
    for (size_t i = 0; i < sizeof short_letters / sizeof short_letters[0]; i++)
        if (strcmp(short_letters[i].option, d->option) == 0)
            return short_letters[i].letter;
    return 0;
}

const char *launcher_metavar(const struct sluice_cfg_desc *d)
{
    for (size_t i = 0; i < sizeof metavars / sizeof metavars[0]; i++)
        if (strcmp(metavars[i].option, d->option) == 0)
            return metavars[i].metavar;
    switch (d->type) {
    case SLUICE_TYPE_BOOL:
        return "yes|no";
    case SLUICE_TYPE_SIZE:
        return "SIZE";
    case SLUICE_TYPE_UINT:
        return "N";
    case SLUICE_TYPE_PATH:
        return "DIR";
    case SLUICE_TYPE_ENUM:
        return d->accepts;
    case SLUICE_TYPE_PATTERNS:
        return "PATTERNS";
    case SLUICE_TYPE_STRING:
        break;
    }
    return "VALUE";
}

void launcher_options_init(void)
{
    int n = 0;
    for (int i = 0; i < SLUICE_CFG_COUNT; i++) {
        const struct sluice_cfg_desc *d = &sluice_cfg_table[i];
        int letter = launcher_short_of(d);
        launcher_longopts[n++] =
            (struct option){d->option, required_argument, NULL, letter ? letter : OPT_VAR_BASE + i};
    }
    for (size_t i = 0; i < NOWN; i++)
        launcher_longopts[n++] = (struct option){own[i].name, own[i].has_arg, NULL, own[i].val};
    launcher_longopts[n] = (struct option){NULL, 0, NULL, 0};
}

int launcher_nearest_option(const char *name)
{
    int best = -1;
    size_t best_d = (size_t)-1;
    for (int i = 0; launcher_longopts[i].name; i++) {
        size_t d = sluice_name_distance(name, launcher_longopts[i].name);
        if (d < best_d) {
            best_d = d;
            best = i;
        }
    }
    return best_d <= (strlen(name) > 8 ? 3u : 2u) ? best : -1;
}

/* "  -t, --trace DIR" padded to the help column, or on a line of its own when too long. */
static void option_head(FILE *out, int letter, const char *name, const char *metavar)
{
    char head[128];
    if (letter)
        snprintf(head, sizeof head, "  -%c, --%s%s%s", letter, name, metavar ? " " : "",
                 metavar ? metavar : "");
    else
        snprintf(head, sizeof head, "      --%s%s%s", name, metavar ? " " : "", metavar ? metavar : "");
    if (strlen(head) < 32)
        fprintf(out, "%-32s ", head);
    else
        fprintf(out, "%s\n%-32s ", head, "");
}

void launcher_usage(FILE *out, const char *docdir)
{
    fprintf(out, "usage: sluice [options] [--] program [args...]\n"
                 "\n"
                 "Runs program with libsluice.so preloaded. Each option sets the SLUICE_* variable\n"
                 "shown below it; setting the variable yourself works the same way. Values are\n"
                 "checked before the program starts: a bad one stops every rank with exit status 2.\n"
                 "  mpiexec -n 8 sluice --capture 'ckpt.%%r' --trace trace/ -- ./simulation\n"
                 "  srun --mpi=pmi2 -n 8 sluice -c 'ckpt.%%r' -- ./simulation\n"
                 "\n"
                 "options:\n");
    for (int i = 0; i < SLUICE_CFG_COUNT; i++) {
        const struct sluice_cfg_desc *d = &sluice_cfg_table[i];
        option_head(out, launcher_short_of(d), d->option, launcher_metavar(d));
        fprintf(out, "%s\n", d->help);
        if (d->type == SLUICE_TYPE_ENUM)
            fprintf(out, "%-32s %s, default %s\n", "", d->name, d->def);
        else
            fprintf(out, "%-32s %s: %s; default %s\n", "", d->name, d->accepts, *d->def ? d->def : "unset");
    }
    fprintf(out, "\n");
    for (size_t i = 0; i < NOWN; i++) {
        int letter = own[i].val < 256 ? own[i].val : 0;
        option_head(out, letter, own[i].name, own[i].metavar);
        fprintf(out, "%s\n", own[i].help);
    }
    fprintf(out, "\nEvery variable is described in sluice(7) (man 7 sluice)");
    if (docdir)
        fprintf(out, " and in %s/ENV.md", docdir);
    fprintf(out, ".\n");
}

void launcher_list_variables(FILE *out)
{
    for (int i = 0; i < SLUICE_CFG_COUNT; i++) {
        const struct sluice_cfg_desc *d = &sluice_cfg_table[i];
        int letter = launcher_short_of(d);
        fprintf(out, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d->name, d->option,
                letter ? (char[]){(char)letter, 0} : "", launcher_metavar(d), d->def, d->accepts, d->help);
    }
}
