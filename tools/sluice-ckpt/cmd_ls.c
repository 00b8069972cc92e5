/* SPDX-License-Identifier: MIT */
/* sluice-ckpt ls [PATH...]: one block per container: the set, its version, and a table of
 * members (rank, size, path), then the newer versions this node keeps in its stage folder
 * (docs/REDUNDANCY.md). Reads only the index: fast on any size of checkpoint. */
#include "ckpt_tool.h"

#include "ckpt/commit/stage.h"
#include "ckpt/redundancy/level_record.h"
#include "ckpt/redundancy/red_copy.h"

#include <stdlib.h>

#include <getopt.h>
#include <inttypes.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: sluice-ckpt ls [-r] [PATH...]\n"
                 "Lists each container's set, version and members (rank, size, path).\n"
                 "PATH: a container or a folder of containers (default: the current folder).\n"
                 "  -r, --recursive  also the containers in subfolders (e.g. chk_*/)\n"
                 "  --stage DIR      the stage folder whose node-local versions are shown\n"
                 "                   (default: SLUICE_STAGE_DIR, else /dev/shm/sluice-<uid>)\n");
}

static char stage[PATH_MAX];

/* Versions of the set newer than the container's that this node keeps, and their level. */
static void list_kept(const struct sluice_container *c)
{
    struct sluice_level_version v[64];
    int n = sluice_level_versions(stage, c->meta.set_key, v, 64);
    for (int i = n - 1; i >= 0; i--) {
        if (v[i].version <= c->meta.version)
            continue;
        /* Protected: every node of the job stored its partner's copy (red_copy.h). */
        int level =
            sluice_red_marked(stage, c->meta.set_key, v[i].version) ? SLUICE_LEVEL_PROTECTED : v[i].level;
        printf("  version %" PRIu64 "  level %s  node-local: records of %d of %d ranks here%s\n",
               v[i].version, sluice_level_name(level), v[i].nrecords, v[i].nprocs,
               v[i].nrecords >= v[i].nprocs ? " (complete)" : "");
    }
}

static int list_one(void *ctx, const struct sluice_container *c, const char *rel)
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < c->n_members; i++)
        bytes += c->members[i].size;
    char when[64];
    tool_format_time(c->meta.created_ns, when, sizeof when);
    static char shown[TOOL_SHOWN_MAX], shown_path[TOOL_SHOWN_MAX];
    printf("%s\n  set %s  version %" PRIu64 "  level durable  members %u  bytes %" PRIu64 "  written %s%s\n",
           tool_shown(c->path, shown_path, sizeof shown_path),
           tool_shown(c->meta.set_key, shown, sizeof shown), c->meta.version, c->n_members, bytes, when,
           (c->meta.flags & SLUICE_CONTAINER_F_PARTIAL) ? "  (partial set)" : "");
    if (c->n_members)
        printf("  %6s %14s  %s\n", "RANK", "SIZE", "PATH");
    for (uint32_t i = 0; i < c->n_members; i++)
        printf("  %6d %14" PRIu64 "  %s\n", c->members[i].member_rank, c->members[i].size,
               tool_shown(c->members[i].path, shown, sizeof shown));
    list_kept(c);
    return 0;
}

int cmd_ls(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, 0, 'h'},
                                         {"recursive", no_argument, 0, 'r'},
                                         {"stage", required_argument, 0, 's'},
                                         {0, 0, 0, 0}};
    const char *env = getenv("SLUICE_STAGE_DIR");
    if (env && env[0])
        snprintf(stage, sizeof stage, "%s", env);
    else
        sluice_stage_default_dir(stage, sizeof stage);
    int flags = TOOL_EMPTY_OK;
    opterr = 0;
    int o;
    while ((o = getopt_long(argc, argv, ":hr", opts, NULL)) != -1) {
        if (o == 's') {
            snprintf(stage, sizeof stage, "%s", optarg);
            continue;
        }
        if (o == 'r') {
            flags |= TOOL_RECURSIVE;
            continue;
        }
        if (o == 'h') {
            usage(stdout);
            return EXIT_OK;
        }
        return tool_bad_option("ls", o, argv);
    }
    return tool_for_each_container(argv + optind, argc - optind, flags, list_one, NULL);
}
