/* SPDX-License-Identifier: MIT */
/* sluice-ckpt verify PATH...: reads every member and checks its CRC32C. Prints one line per
 * container on stdout ("ok" or how many members are corrupt) and one line per corrupt member
 * on stderr naming it. Exit 0 if everything is intact, 1 otherwise. */
#include "ckpt_tool.h"
#include "progress.h"

#include <getopt.h>
#include <inttypes.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: sluice-ckpt verify [-r] [-q] PATH...\n"
                 "Checks the checksum of every member of each container (a container, or a\n"
                 "folder of containers). Exit status 0 if all are intact, 1 if any member or\n"
                 "container is corrupt or unreadable; each is named on stderr.\n"
                 "  -r, --recursive  also the containers in subfolders\n"
                 "  -q, --quiet      no progress line (shown on a terminal for large containers)\n");
}

static int verify_one(void *ctx, const struct sluice_container *c, const char *rel)
{
    uint32_t bad = 0;
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < c->n_members; i++)
        bytes += c->members[i].size;
    struct tool_progress progress;
    tool_progress_start(&progress, c->path, bytes, *(const int *)ctx);
    for (uint32_t i = 0; i < c->n_members; i++) {
        char msg[8192];
        if (sluice_container_verify_member(c, i, msg, sizeof msg) != 0) {
            tool_error("%s", msg);
            bad++;
        }
        tool_progress_add(&progress, c->members[i].size);
    }
    tool_progress_clear(&progress);
    static char shown[TOOL_SHOWN_MAX];
    const char *name = tool_shown(c->path, shown, sizeof shown);
    if (bad)
        printf("%s: CORRUPT: %u of %u members fail their checksum\n", name, bad, c->n_members);
    else if (c->index_from_copy)
        printf("%s: DAMAGED index or footer, %u members intact (read from the index copy)\n", name,
               c->n_members);
    else
        printf("%s: ok (%u members, %" PRIu64 " bytes)\n", name, c->n_members, bytes);
    return bad != 0 || c->index_from_copy;
}

int cmd_verify(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, 0, 'h'},
                                         {"recursive", no_argument, 0, 'r'},
                                         {"quiet", no_argument, 0, 'q'},
                                         {0, 0, 0, 0}};
    int flags = 0, quiet = 0;
    opterr = 0;
    int o;
    while ((o = getopt_long(argc, argv, ":hrq", opts, NULL)) != -1) {
        if (o == 'r') {
            flags |= TOOL_RECURSIVE;
            continue;
        }
        if (o == 'q') {
            quiet = 1;
            continue;
        }
        if (o == 'h') {
            usage(stdout);
            return EXIT_OK;
        }
        return tool_bad_option("verify", o, argv);
    }
    if (optind >= argc)
        return tool_usage_error("verify", "which container? give a PATH");
    return tool_for_each_container(argv + optind, argc - optind, flags, verify_one, &quiet);
}
