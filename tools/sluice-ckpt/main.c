/* SPDX-License-Identifier: MIT */
/* sluice-ckpt: the command-line tool for checkpoint containers (docs/FORMAT.md).
 *   sluice-ckpt ls|info|verify|extract|pack|recover|salvage|scavenge ...
 * Exit status: 0 success, 1 bad or unreadable data (named on stderr), 2 usage error.
 * Listings go to stdout; errors and warnings to stderr. */
#include "ckpt_tool.h"
#include "sluice_version.h"

#include <string.h>

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} commands[] = {
    {"ls", cmd_ls, "list sets, members, ranks, sizes and versions"},
    {"info", cmd_info, "show the format version, block size and layout of containers"},
    {"verify", cmd_verify, "check every member's checksum (exit 1 if any is corrupt)"},
    {"extract", cmd_extract, "write the per-rank files back out"},
    {"pack", cmd_pack, "build a container from existing per-rank files"},
    {"recover", cmd_recover, "commit what a crashed job left staged"},
    {"salvage", cmd_salvage, "rewrite a container whose index or members are damaged"},
    {"scavenge", cmd_scavenge, "copy the newest node-local version to the file system (after a job)"},
    {"bench", cmd_bench, "measure checksum and container speed on this machine"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *out)
{
    fprintf(out,
            "usage: sluice-ckpt COMMAND [options] [PATH...]\n\n"
            "PATH is a container (*%s) or a folder of containers.\n\ncommands:\n",
            SLUICE_CONTAINER_SUFFIX);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'sluice-ckpt COMMAND --help' describes each command's options.\n"
                 "Exit status: 0 success, 1 corrupt or unreadable data, 2 usage error.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return tool_usage_error(NULL, "missing command");
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("sluice-ckpt %s (container format %d.%d)\n", SLUICE_VERSION_STRING,
               SLUICE_CONTAINER_FORMAT_MAJOR, SLUICE_CONTAINER_FORMAT_MINOR);
        return EXIT_OK;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    return tool_usage_error(NULL, "unknown command '%s'", argv[1]);
}
