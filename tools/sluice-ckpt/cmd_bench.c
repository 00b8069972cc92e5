/* SPDX-License-Identifier: MIT */
/* sluice-ckpt bench [--size SIZE] [--dir DIR] [--members N]: measures, on this machine, what
 * the container code costs: CRC32C (hardware and portable paths, hole extension), writing and
 * validating a large index, and writing and verifying bulk member data in DIR. Prints a table;
 * like `xxhsum -b`, it is for seeing figures, never a pass/fail check. */
#include "ckpt_tool.h"
#include "common/private_dir.h"
#include "config/config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: sluice-ckpt bench [--size SIZE] [--members N] [--dir DIR]\n"
                 "Measures CRC32C speed, index write/validation for N small members, and bulk\n"
                 "write/verify of 4 members of SIZE/4 bytes each in DIR; prints a table.\n"
                 "  -s, --size SIZE    bulk data (default 1G)\n"
                 "  -n, --members N    members in the index test (default 100000)\n"
                 "  -d, --dir DIR      where the test containers go (default /dev/shm, else /tmp)\n");
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void row(const char *what, double value, const char *unit)
{
    printf("  %-58s %10.3f %s\n", what, value, unit);
}

static int bulk(const char *dir, unsigned char *buf, uint64_t part, uint32_t members)
{
    char path[PATH_MAX], err[8192], names[64][64];
    struct sluice_container_source src[64];
    if (tool_snprintf(path, sizeof path, "%s/.sluice-bench-%016llx.sluice", dir, sluice_random_u64()) != 0) {
        tool_error("%s: path too long", dir);
        return 1;
    }
    for (uint32_t i = 0; i < members; i++) {
        (void)tool_snprintf(names[i], sizeof names[i], "/bench/ckpt.%u", i);
        src[i] = (struct sluice_container_source){.path = names[i],
                                                  .member_rank = (int32_t)i,
                                                  .writer_rank = -1,
                                                  .fd = -1,
                                                  .buf = buf,
                                                  .size = part};
    }
    struct sluice_container_meta meta = {.set_key = "/bench/ckpt.%r", .block_size = 4096, .version = 1};
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        tool_error("%s: %s", path, strerror(errno));
        return 1;
    }
    double t = now();
    int rc = sluice_container_write(fd, &meta, src, members, err, sizeof err);
    double w = now() - t;
    close(fd);
    struct sluice_container *c = NULL;
    if (rc == 0)
        rc = sluice_container_open(path, &c, err, sizeof err);
    double v = 0;
    if (rc == 0) {
        t = now();
        for (uint32_t i = 0; i < members && rc == 0; i++)
            rc = sluice_container_verify_member(c, i, err, sizeof err);
        v = now() - t;
    }
    sluice_container_close(c);
    unlink(path);
    if (rc != 0) {
        tool_error("%s", err);
        return 1;
    }
    double gb = (double)part * members / 1e9;
    char label[128];
    (void)tool_snprintf(label, sizeof label, "write %u members x %" PRIu64 " MiB into %s", members,
                        part >> 20, dir);
    row(label, gb / w, "GB/s");
    row("verify them (page cache)", gb / v, "GB/s");
    return 0;
}

int cmd_bench(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, 0, 'h'},
                                         {"size", required_argument, 0, 's'},
                                         {"members", required_argument, 0, 'n'},
                                         {"dir", required_argument, 0, 'd'},
                                         {0, 0, 0, 0}};
    uint64_t size = 1ull << 30, nmembers = 100000;
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    int o;
    opterr = 0;
    while ((o = getopt_long(argc, argv, ":hs:n:d:", opts, NULL)) != -1) {
        switch (o) {
        case 'h':
            usage(stdout);
            return EXIT_OK;
        case 's':
            if (sluice_parse_size(optarg, &size) != 0 || size < (4u << 20) || size > (64ull << 30))
                return tool_usage_error("bench", "size '%s': from 4M to 64G", optarg);
            break;
        case 'n':
            if (sluice_parse_uint(optarg, &nmembers) != 0 || nmembers < 1 || nmembers > 10000000)
                return tool_usage_error("bench", "members '%s': from 1 to 10000000", optarg);
            break;
        case 'd':
            dir = optarg;
            break;
        default:
            return tool_bad_option("bench", o, argv);
        }
    }
    if (optind < argc)
        return tool_usage_error("bench", "unexpected argument '%s'", argv[optind]);

    uint64_t part = (size / 4) & ~(uint64_t)4095;
    size_t crc_len = part < (256u << 20) ? (size_t)part : (256u << 20);
    unsigned char *buf = malloc((size_t)part);
    if (!buf) {
        tool_error("cannot allocate %" PRIu64 " bytes", part);
        return EXIT_BAD_DATA;
    }
    for (uint64_t i = 0; i < part; i++)
        buf[i] = (unsigned char)((i * 2654435761u) >> 13);
    printf("sluice-ckpt bench: %s CRC32C, %ld online CPUs\n",
           sluice_crc32c_hw_available() ? "SSE4.2" : "no hardware", sysconf(_SC_NPROCESSORS_ONLN));
    volatile uint32_t sink = 0;
    double t = now();
    sink ^= sluice_crc32c_update(0, buf, crc_len);
    row("crc32c, as used (hardware when available)", (double)crc_len / (now() - t) / 1e9, "GB/s");
    t = now();
    sink ^= sluice_crc32c_update_sw(0, buf, crc_len);
    row("crc32c, portable slicing-by-8", (double)crc_len / (now() - t) / 1e9, "GB/s");
    t = now();
    for (int i = 0; i < 100000; i++)
        sink ^= sluice_crc32c_zeros((uint32_t)i, 1ull << 40);
    row("crc32c of a 1 TiB hole", (now() - t) / 100000 * 1e9, "ns");

    /* Index: many small members, written and then opened+validated. */
    int status = EXIT_OK;
    char path[PATH_MAX], err[8192];
    struct sluice_container_source *src = calloc((size_t)nmembers, sizeof *src);
    char *names = malloc((size_t)nmembers * 48);
    int fd = -1;
    if (tool_snprintf(path, sizeof path, "%s/.sluice-bench-index-%016llx.sluice", dir, sluice_random_u64()) !=
        0)
        errno = ENAMETOOLONG;
    else
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (!src || !names || fd < 0) {
        tool_error("%s: %s", path, fd < 0 ? strerror(errno) : "out of memory");
        status = EXIT_BAD_DATA;
    } else {
        for (uint64_t i = 0; i < nmembers; i++) {
            (void)tool_snprintf(names + i * 48, 48, "/bench/ckpt.%" PRIu64, i);
            src[i] = (struct sluice_container_source){.path = names + i * 48,
                                                      .member_rank = (int32_t)i,
                                                      .writer_rank = -1,
                                                      .fd = -1,
                                                      .buf = buf,
                                                      .size = i % 100};
        }
        struct sluice_container_meta meta = {.set_key = "/bench/ckpt.%r", .block_size = 512, .version = 1};
        t = now();
        int rc = sluice_container_write(fd, &meta, src, (uint32_t)nmembers, err, sizeof err);
        double w = now() - t;
        struct sluice_container *c = NULL;
        t = now();
        if (rc == 0)
            rc = sluice_container_open(path, &c, err, sizeof err);
        double op = now() - t;
        if (rc != 0) {
            tool_error("%s", err);
            status = EXIT_BAD_DATA;
        } else {
            char label[128];
            (void)tool_snprintf(label, sizeof label,
                                "write %" PRIu64 " small members (index %" PRIu64 " bytes)", nmembers,
                                c->index_length);
            row(label, w, "s");
            row("open and validate that container", op, "s");
        }
        sluice_container_close(c);
    }
    if (fd >= 0) {
        close(fd);
        unlink(path);
    }
    free(src);
    free(names);
    if (status == EXIT_OK)
        status = bulk(dir, buf, part, 4) ? EXIT_BAD_DATA : EXIT_OK;
    free(buf);
    if (sink == 0xdeadbeef) /* keeps the checksums from being optimised away */
        fputc(' ', stderr);
    return status;
}
