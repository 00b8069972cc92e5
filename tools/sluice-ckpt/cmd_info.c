/* SPDX-License-Identifier: MIT */
/* sluice-ckpt info PATH...: everything the header, index and footer say, and where each part
 * lies in the file: for checking a writer's layout (alignment, extents) by eye. A truncated or
 * corrupt container gives one clear error line and exit status 1. */
#include "ckpt_tool.h"

#include <getopt.h>
#include <inttypes.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: sluice-ckpt info [--members] [-r] PATH...\n"
                 "Shows format version, set, version, writer, block size and the layout (header,\n"
                 "member data extents, index, footer offsets) of each container.\n"
                 "  -m, --members    also list every member's extents\n"
                 "  -r, --recursive  also the containers in subfolders\n");
}

static int info_one(void *ctx, const struct sluice_container *c, const char *rel)
{
    int show_members = *(int *)ctx;
    uint64_t bytes = 0, data_lo = UINT64_MAX, data_hi = 0, n_ext = 0, unaligned = 0;
    for (uint32_t i = 0; i < c->n_members; i++) {
        const struct sluice_member *m = &c->members[i];
        bytes += m->size;
        for (uint32_t e = 0; e < m->n_extents; e++) {
            const struct sluice_extent *x = &m->extents[e];
            n_ext++;
            if (x->file_offset < data_lo)
                data_lo = x->file_offset;
            if (x->file_offset + x->length > data_hi)
                data_hi = x->file_offset + x->length;
            /* A member's first extent starts a block; later ones continue it. */
            if (e == 0 && x->file_offset % c->meta.block_size)
                unaligned++;
        }
    }
    char when[64];
    tool_format_time(c->meta.created_ns, when, sizeof when);
    static char shown[TOOL_SHOWN_MAX], shown2[TOOL_SHOWN_MAX];
    printf("container   %s\n", tool_shown(c->path, shown, sizeof shown));
    printf("format      %u.%u\n", c->format_major, c->format_minor);
    printf("set         %s\n", tool_shown(c->meta.set_key, shown, sizeof shown));
    printf("version     %" PRIu64 "\n", c->meta.version);
    printf("flags       0x%x%s\n", c->meta.flags,
           (c->meta.flags & SLUICE_CONTAINER_F_PARTIAL) ? " (partial set)" : "");
    printf("created     %s\n", when);
    printf("writer      host %s, pid %u, %u processes, %s\n",
           c->meta.writer_host[0] ? tool_shown(c->meta.writer_host, shown, sizeof shown) : "?",
           c->meta.writer_pid, c->meta.writer_nprocs,
           c->meta.writer_software[0] ? tool_shown(c->meta.writer_software, shown2, sizeof shown2) : "?");
    printf("block size  %u\n", c->meta.block_size);
    /* Chunk checksums (format 1.3): a reader of part of a member verifies only what it reads. */
    uint32_t chunked = 0, chunk_size = 0, mixed = 0;
    for (uint32_t i = 0; i < c->n_members; i++) {
        const struct sluice_member *m = &c->members[i];
        if (!m->chunk_size)
            continue;
        mixed |= chunked && m->chunk_size != chunk_size;
        chunk_size = m->chunk_size;
        chunked++;
    }
    if (chunked)
        printf("checksum    crc32c per member; per chunk of %s%u bytes in %u of %u members\n",
               mixed ? "up to " : "", chunk_size, chunked, c->n_members);
    else
        printf("checksum    crc32c per member\n");
    if (c->meta.array_record[0])
        printf("array       %s (docs/LAYOUT.md)\n", c->meta.array_record);
    printf("members     %u (%" PRIu64 " bytes)\n", c->n_members, bytes);
    printf("file size   %" PRIu64 "\n", c->file_size);
    printf("layout\n");
    printf("  header    %12" PRIu64 " .. %-12" PRIu64 " %" PRIu64 " bytes\n", (uint64_t)0, c->header_size,
           c->header_size);
    if (n_ext)
        printf("  data      %12" PRIu64 " .. %-12" PRIu64 " %" PRIu64 " extents, member starts "
               "%s to %u\n",
               data_lo, data_hi, n_ext, unaligned ? "NOT all aligned" : "aligned", c->meta.block_size);
    else
        printf("  data      (none)\n");
    printf("  index     %12" PRIu64 " .. %-12" PRIu64 " %" PRIu64 " bytes, crc32c %08x%s\n", c->index_offset,
           c->index_offset + c->index_length, c->index_length, c->index_crc32c,
           c->index_from_copy     ? " (the copy: the index proper is damaged)"
           : c->format_minor >= 1 ? " (a copy precedes it)"
                                  : "");
    printf("  footer    %12" PRIu64 " .. %-12" PRIu64 " %u bytes\n",
           c->file_size - SLUICE_CONTAINER_FOOTER_SIZE, c->file_size, SLUICE_CONTAINER_FOOTER_SIZE);
    if (show_members) {
        for (uint32_t i = 0; i < c->n_members; i++) {
            const struct sluice_member *m = &c->members[i];
            char chunks[48] = "";
            if (m->chunk_size)
                snprintf(chunks, sizeof chunks, "  chunks %u x %u", m->n_chunks, m->chunk_size);
            printf("member      rank %d  size %" PRIu64 "  crc32c %08x%s  writer %d  %s\n", m->member_rank,
                   m->size, m->crc32c, chunks, m->writer_rank, tool_shown(m->path, shown, sizeof shown));
            for (uint32_t e = 0; e < m->n_extents; e++)
                printf("  extent    logical %" PRIu64 " +%" PRIu64 " at %" PRIu64 "\n", m->extents[e].logical,
                       m->extents[e].length, m->extents[e].file_offset);
        }
    }
    return 0;
}

int cmd_info(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, 0, 'h'},
                                         {"members", no_argument, 0, 'm'},
                                         {"recursive", no_argument, 0, 'r'},
                                         {0, 0, 0, 0}};
    int flags = 0;
    opterr = 0;
    int o, members = 0;
    while ((o = getopt_long(argc, argv, ":hmr", opts, NULL)) != -1) {
        if (o == 'r') {
            flags |= TOOL_RECURSIVE;
            continue;
        }
        if (o == 'h') {
            usage(stdout);
            return EXIT_OK;
        }
        if (o == 'm') {
            members = 1;
            continue;
        }
        return tool_bad_option("info", o, argv);
    }
    if (optind >= argc)
        return tool_usage_error("info", "which container? give a PATH");
    return tool_for_each_container(argv + optind, argc - optind, flags, info_one, &members);
}
