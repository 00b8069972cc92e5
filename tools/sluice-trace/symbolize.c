/* SPDX-License-Identifier: MIT */
/* See symbolize.h. addr2line runs as a child process (no shell: paths are passed as
 * arguments), once per module for every address of it (symbolize_batch), or for one address not
 * asked for before; a missing addr2line just means no names. */
#include "symbolize.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

void symbolize_module_offset(const struct sluice_trace_file *f, uint64_t ip, char *buf, size_t len)
{
    const struct sluice_trace_rmodule *m = sluice_trace_file_module(f, ip);
    if (m)
        snprintf(buf, len, "%s+0x%llx", base_name(m->path), (unsigned long long)(ip - m->m.bias));
    else
        snprintf(buf, len, "0x%llx", (unsigned long long)ip);
}

/* Names by (module path, address), kept sorted for lookups. */
struct cached {
    char *path;
    uint64_t addr;
    char *text;
};
static struct cached *cache;
static size_t ncache, cache_cap;

static int cached_cmp(const char *path, uint64_t addr, const struct cached *c)
{
    int r = strcmp(path, c->path);
    return r ? r : (addr > c->addr) - (addr < c->addr);
}

/* Index where (path, addr) is or would go. */
static size_t cache_find(const char *path, uint64_t addr, bool *found)
{
    size_t lo = 0, hi = ncache;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = cached_cmp(path, addr, &cache[mid]);
        if (r == 0) {
            *found = true;
            return mid;
        }
        if (r < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    *found = false;
    return lo;
}

static void cache_put(const char *path, uint64_t addr, const char *text)
{
    bool found;
    size_t at = cache_find(path, addr, &found);
    if (found)
        return;
    if (ncache == cache_cap) {
        size_t cap = cache_cap ? cache_cap * 2 : 256;
        struct cached *grown = realloc(cache, sizeof *cache * cap);
        if (!grown)
            return;
        cache = grown;
        cache_cap = cap;
    }
    struct cached c = {strdup(path), addr, strdup(text)};
    if (!c.path || !c.text) {
        free(c.path);
        free(c.text);
        return;
    }
    memmove(cache + at + 1, cache + at, sizeof *cache * (ncache - at));
    cache[at] = c;
    ncache++;
}

/* Appends "f at file:line" (or " (inlined into ...)") to text. */
static void append_frame(char *text, size_t tlen, int *pairs, const char *func, const char *where)
{
    if (func[0] == '\0' || strcmp(func, "??") == 0)
        return;
    bool has_line = where[0] != '\0' && strncmp(where, "??", 2) != 0 && strcmp(where, ":?") != 0;
    size_t used = strlen(text);
    int n = snprintf(text + used, tlen - used, "%s%s%s%s%s", *pairs ? " (inlined into " : "", func,
                     has_line ? " at " : "", has_line ? where : "", *pairs ? ")" : "");
    if (n > 0 && (size_t)n < tlen - used)
        (*pairs)++;
    else
        text[used] = '\0';
}

static int by_addr(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* One addr2line for every address of one module: the addresses go in through a temporary file
 * (no pipe to deadlock on), the answers come back in blocks that start with the address (-a). */
static void symbolize_module(const char *path, uint64_t *addrs, size_t n)
{
    qsort(addrs, n, sizeof *addrs, by_addr);
    FILE *in = tmpfile();
    if (!in)
        return;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || addrs[i] != addrs[i - 1])
            fprintf(in, "0x%llx\n", (unsigned long long)addrs[i]);
    fflush(in);
    rewind(in);
    int fds[2];
    if (pipe(fds) != 0) {
        fclose(in);
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fileno(in), 0);
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 2);
        execlp("addr2line", "addr2line", "-a", "-f", "-i", "-C", "-e", path, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    fclose(in);
    if (pid < 0) {
        close(fds[0]);
        return;
    }
    FILE *out = fdopen(fds[0], "r");
    /* Whole lines, however long (a C++ template's demangled name can pass any guess): a line read
     * in pieces would put the rest of a name where its file:line belongs, and every later pair
     * would be off by one. */
    char *line = NULL, func[1024] = "", text[1600] = "";
    size_t line_cap = 0;
    uint64_t cur = 0;
    bool have = false, want_where = false;
    int pairs = 0;
    while (out && getline(&line, &line_cap, out) >= 0) {
        line[strcspn(line, "\n")] = '\0';
        char *end;
        if (!want_where && strncmp(line, "0x", 2) == 0 && (strtoull(line, &end, 16), *end == '\0')) {
            if (have)
                cache_put(path, cur, text);
            cur = strtoull(line, NULL, 16);
            have = true;
            text[0] = '\0';
            pairs = 0;
        } else if (!want_where) {
            snprintf(func, sizeof func, "%.1000s%s", line, strlen(line) > 1000 ? "..." : "");
            want_where = true;
        } else {
            append_frame(text, sizeof text, &pairs, func, line);
            want_where = false;
        }
    }
    free(line);
    if (have)
        cache_put(path, cur, text);
    if (out)
        fclose(out);
    else
        close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
}

struct pending {
    const char *path;
    uint64_t addr;
};

static int by_path(const void *a, const void *b)
{
    return strcmp(((const struct pending *)a)->path, ((const struct pending *)b)->path);
}

void symbolize_batch(const struct trace_set *set)
{
    struct pending *p = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < set->nfiles; i++) {
        const struct sluice_trace_file *f = set->files[i];
        for (size_t c = 0; c < f->ncallsites; c++)
            for (uint32_t k = 0; k < f->callsites[c].depth; k++) {
                uint64_t ip = f->callsites[c].frames[k];
                const struct sluice_trace_rmodule *m = sluice_trace_file_module(f, ip);
                if (!m || m->path[0] != '/')
                    continue;
                if (n == cap) {
                    cap = cap ? cap * 2 : 1024;
                    struct pending *g = realloc(p, sizeof *p * cap);
                    if (!g) {
                        free(p);
                        return;
                    }
                    p = g;
                }
                p[n++] = (struct pending){m->path, ip - m->m.bias - 1};
            }
    }
    qsort(p, n, sizeof *p, by_path);
    uint64_t *addrs = malloc(sizeof *addrs * (n ? n : 1));
    for (size_t i = 0; addrs && i < n;) {
        size_t j = i, k = 0;
        while (j < n && strcmp(p[j].path, p[i].path) == 0)
            addrs[k++] = p[j++].addr;
        symbolize_module(p[i].path, addrs, k);
        i = j;
    }
    free(addrs);
    free(p);
}

void symbolize_frame(const struct sluice_trace_file *f, uint64_t ip, bool use_addr2line, char *buf,
                     size_t len)
{
    char mo[512];
    symbolize_module_offset(f, ip, mo, sizeof mo);
    const struct sluice_trace_rmodule *m = sluice_trace_file_module(f, ip);
    if (!use_addr2line || !m || m->path[0] != '/') {
        snprintf(buf, len, "%s", mo);
        return;
    }
    /* A return address points after the call: look up ip-1 to name the calling line. */
    uint64_t addr = ip - m->m.bias - 1;
    bool found;
    size_t at = cache_find(m->path, addr, &found);
    if (!found) {
        symbolize_module(m->path, &addr, 1);
        at = cache_find(m->path, addr, &found);
    }
    if (found && cache[at].text[0])
        snprintf(buf, len, "%s (%s)", cache[at].text, mo);
    else
        snprintf(buf, len, "%s", mo);
}
