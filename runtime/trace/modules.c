/* SPDX-License-Identifier: MIT */
/* The module map for offline symbolization: every executable mapping of the process with its
 * file, file offset and load bias, read from /proc/self/maps with raw system calls (this runs
 * in signal handlers too; dl_iterate_phdr takes the loader's lock). The bias comes from the
 * ELF header mapped at the file's first mapping: a shared object or PIE (ET_DYN) is biased by
 * its base address, a fixed-address executable (ET_EXEC) is not. */
#include <elf.h>
#include <string.h>

#include "trace/rawio.h"
#include "trace/state.h"

struct maps_state {
    struct sluice_trace_out *o;
    char base_path[4096]; /* file whose offset-0 mapping we saw last */
    uint64_t base;
    bool base_readable;
};

static uint64_t hex(const char **s)
{
    uint64_t v = 0;
    for (;; (*s)++) {
        char c = **s;
        if (c >= '0' && c <= '9')
            v = v * 16 + (uint64_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v = v * 16 + (uint64_t)(c - 'a' + 10);
        else
            return v;
    }
}

static const char *skip_field(const char *s)
{
    while (*s && *s != ' ')
        s++;
    while (*s == ' ')
        s++;
    return s;
}

static uint64_t bias_of(struct maps_state *m, const char *path, uint64_t start, uint64_t offset)
{
    if (strcmp(path, m->base_path) == 0 && m->base_readable) {
        const unsigned char *e = (const unsigned char *)(uintptr_t)m->base;
        if (memcmp(e, ELFMAG, SELFMAG) == 0) {
            uint16_t type;
            memcpy(&type, e + offsetof(Elf64_Ehdr, e_type), sizeof type);
            return type == ET_EXEC ? 0 : m->base;
        }
    }
    return start - offset; /* no ELF header in sight: assume the file is mapped contiguously */
}

/* "start-end perms offset dev inode   path" */
static void one_line(struct maps_state *m, const char *line)
{
    const char *s = line;
    uint64_t start = hex(&s);
    if (*s++ != '-')
        return;
    uint64_t end = hex(&s);
    s = skip_field(s);
    const char *perms = s;
    s = skip_field(s);
    uint64_t offset = hex(&s);
    s = skip_field(s); /* to dev */
    s = skip_field(s); /* to inode */
    s = skip_field(s); /* to the path, if any */
    const char *path = s;
    if (*path == '\0' || strlen(perms) < 4)
        return;
    size_t plen = strlen(path);
    if (offset == 0 && path[0] == '/' && plen < sizeof m->base_path) {
        memcpy(m->base_path, path, plen + 1);
        m->base = start;
        m->base_readable = perms[0] == 'r';
    }
    if (perms[2] != 'x')
        return;
    struct sluice_tf_module rec = {
        .start = start,
        .end = end,
        .offset = offset,
        .bias = path[0] == '/' ? bias_of(m, path, start, offset) : start,
        .path_len = (uint32_t)plen,
    };
    static const char zeros[8];
    sluice_trace_out_bytes(m->o, &rec, sizeof rec);
    sluice_trace_out_bytes(m->o, path, plen);
    if (plen % 8)
        sluice_trace_out_bytes(m->o, zeros, 8 - plen % 8);
}

int sluice_trace_write_modules(struct sluice_trace_out *o)
{
    static struct maps_state m; /* static: signal stacks are small; one writer at a time */
    static char buf[8192], line[4096 + 256];
    memset(&m, 0, sizeof m);
    m.o = o;
    int fd = sluice_raw_open("/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    size_t ll = 0;
    bool overlong = false;
    for (;;) {
        long n = syscall(SYS_read, fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (long i = 0; i < n; i++) {
            if (buf[i] == '\n') {
                line[ll] = '\0';
                if (!overlong)
                    one_line(&m, line);
                ll = 0;
                overlong = false;
            } else if (ll < sizeof line - 1) {
                line[ll++] = buf[i];
            } else {
                overlong = true;
            }
        }
    }
    sluice_raw_close(fd);
    return 0;
}
