/* SPDX-License-Identifier: MIT */
/* sluice-ckpt recover [--stage DIR] [PATH...]: commits what a crashed job left in the stage
 * folder, through sluice_ckpt_recover() (runtime/ckpt/commit/recover.h). The stage folder defaults
 * to $SLUICE_STAGE_DIR, else /dev/shm/sluice-<uid>, as in the library. */
#include "ckpt/commit/recover.h"
#include "ckpt/commit/stage.h"
#include "ckpt_tool.h"

#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: sluice-ckpt recover [--stage DIR] [--take-open] [--other-hosts] [PATH...]\n"
                 "Commits checkpoint data that a crashed job left staged, each set as a new\n"
                 "version of its container. With PATHs (containers, set keys, member paths or\n"
                 "folders) only the matching sets are recovered.\n"
                 "  -s, --stage DIR  stage folder (default: $SLUICE_STAGE_DIR, else /dev/shm/sluice-<uid>)\n"
                 "  --take-open      also commit members that were still open when their writer\n"
                 "                   died, as they are (they may be torn); by default they are\n"
                 "                   kept aside, named, and the previous version stays\n"
                 "  --other-hosts    also take what processes of other hosts staged (a stage\n"
                 "                   folder shared by nodes); only once their job is gone\n"
                 "One line per recovered set and per problem goes to stderr.\n"
                 "Exit status: 0 all recovered (or nothing to do), 1 some set could not be\n"
                 "committed (its staged data is kept), 2 usage error or no stage folder.\n");
}

int cmd_recover(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, 0, 'h'},
                                         {"stage", required_argument, 0, 's'},
                                         {"take-open", no_argument, 0, 'O'},
                                         {"other-hosts", no_argument, 0, 'H'},
                                         {0, 0, 0, 0}};
    unsigned flags = 0;
    const char *stage = NULL;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":hs:", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return EXIT_OK;
        case 's':
            stage = optarg;
            break;
        case 'O':
            flags |= SLUICE_RECOVER_TAKE_OPEN;
            break;
        case 'H':
            flags |= SLUICE_RECOVER_OTHER_HOSTS;
            break;
        default:
            return tool_bad_option("recover", c, argv);
        }
    }
    char def[PATH_MAX];
    stage = tool_stage_dir(stage, def, sizeof def);
    /* Its report mixes what was done with what went wrong, one line each: stderr, like every
     * other diagnostic of the tool (stdout stays for listings). */
    return sluice_ckpt_recover(stage, argv + optind, argc - optind, flags, stderr);
}
