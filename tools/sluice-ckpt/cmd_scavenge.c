/* SPDX-License-Identifier: MIT */
/* sluice-ckpt scavenge [--stage DIR] [--node | --finish] [--wait S] SETKEY...: the newest
 * node-local version of each set that was never drained, copied to the file system as its
 * container's next version (runtime/ckpt/redundancy/scavenge.h, docs/REDUNDANCY.md). One
 * process per node, started by any launcher (mpiexec -ppn 1, srun --ntasks-per-node=1): each
 * copies its node's part beside the container, and the launcher's rank 0 waits for the parts of
 * all and finishes. No MPI: the launcher's rank and size come from its environment. */
#include "ckpt/commit/stage.h"
#include "ckpt/redundancy/scavenge.h"
#include "ckpt_tool.h"
#include "common/host_name.h"
#include "mpi/launcher.h"

#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: sluice-ckpt scavenge [--stage DIR] [--node | --finish] [--wait S] SETKEY...\n"
                 "Copies the newest node-local version of each set (SLUICE_DRAIN_EVERY above 1) that\n"
                 "was not drained to the file system, complete over the nodes that answer, as its\n"
                 "container's next version (never over a newer one; run twice, the second finds\n"
                 "nothing to do). SETKEY is the set's capture pattern with %%r for the rank (as in\n"
                 "SLUICE_CAPTURE). Run one process per node of the job that wrote it, by a launcher:\n"
                 "  mpiexec -n 2 -ppn 1 -hosts N1,N2 sluice-ckpt scavenge /scratch/run/ckpt.%%r\n"
                 "  srun -N 2 --ntasks-per-node=1 sluice-ckpt scavenge /scratch/run/ckpt.%%r\n"
                 "each copies its node's part beside the container; the launcher's rank 0 waits for\n"
                 "every process's part and writes the version. Without a launcher (one node), both.\n"
                 "  -s, --stage DIR  stage folder (default: $SLUICE_STAGE_DIR, else /dev/shm/sluice-<uid>)\n"
                 "  --node           the node step only (a per-node epilog)\n"
                 "  --finish         the finishing step only, over the parts there are (once, anywhere)\n"
                 "  --wait S         how long rank 0 waits for the other parts (default 60 s)\n"
                 "One line per set (and per problem) on stderr. Exit status: 0 written or nothing to\n"
                 "do, 1 a newer version exists but none is complete over the parts (named), or a\n"
                 "write failed, 2 usage error.\n");
}

static const char *env_get(const char *name, void *ctx)
{
    (void)ctx;
    return getenv(name);
}

/* Waits (at most wait_s) until key's scavenge folder holds `want` parts. */
static void wait_parts(const char *key, int want, double wait_s)
{
    struct timespec step = {0, 50000000};
    for (double waited = 0; sluice_scavenge_parts(key) < want && waited < wait_s; waited += 0.05)
        nanosleep(&step, NULL);
    int have = sluice_scavenge_parts(key);
    if (have < want)
        fprintf(stderr,
                "sluice-ckpt scavenge: %s: %d of %d processes' parts after %.0f s; finishing with those\n",
                key, have, want, wait_s);
}

int cmd_scavenge(int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, 0, 'h'},   {"stage", required_argument, 0, 's'}, {"node", no_argument, 0, 'n'},
        {"finish", no_argument, 0, 'f'}, {"wait", required_argument, 0, 'w'},  {0, 0, 0, 0}};
    const char *stage = NULL;
    int node_only = 0, finish_only = 0, c;
    double wait_s = 60;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":hs:", opts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'h':
            usage(stdout);
            return EXIT_OK;
        case 's':
            stage = optarg;
            break;
        case 'n':
            node_only = 1;
            break;
        case 'f':
            finish_only = 1;
            break;
        case 'w':
            wait_s = strtod(optarg, &end);
            if (end == optarg || *end || !(wait_s >= 0 && wait_s <= 86400))
                return tool_usage_error("scavenge", "--wait wants seconds (0 to 86400), not '%s'", optarg);
            break;
        default:
            return tool_bad_option("scavenge", c, argv);
        }
    }
    if (node_only && finish_only)
        return tool_usage_error("scavenge", "--node and --finish are two steps of one scavenge: give one");
    if (optind >= argc)
        return tool_usage_error("scavenge",
                                "no set key given (the capture pattern, e.g. '/scratch/run/ckpt.%%r')");
    for (int i = optind; i < argc; i++)
        if (!strstr(argv[i], "%r") || argv[i][0] != '/')
            return tool_usage_error("scavenge", "'%s' is no set key: an absolute path with %%r for the rank",
                                    argv[i]);
    char def[PATH_MAX];
    stage = tool_stage_dir(stage, def, sizeof def);
    struct sluice_launch l;
    char warn[256] = "", host[SLUICE_HOST_NAME_MAX + 1], name[SLUICE_HOST_NAME_MAX + 32];
    sluice_launch_detect(env_get, NULL, &l, warn, sizeof warn);
    sluice_host_name(host);
    snprintf(name, sizeof name, "%s-%d", host[0] ? host : "host", l.rank);
    int status = EXIT_OK;
    for (int i = optind; i < argc; i++) {
        if (!finish_only && sluice_scavenge_node(stage, argv[i], name, stderr) != 0)
            status = EXIT_BAD_DATA;
        if (node_only || (!finish_only && l.rank != 0))
            continue;
        if (!finish_only)
            wait_parts(argv[i], l.size > 0 ? l.size : 1, wait_s);
        if (sluice_scavenge_finish(argv[i], stderr) != 0)
            status = EXIT_BAD_DATA;
    }
    return status;
}
