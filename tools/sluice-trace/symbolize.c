/* See symbolize.h. addr2line runs as a child process (no shell: paths are passed as
 * arguments), once per distinct (module, address); a missing addr2line just means no names. */
#include "symbolize.h"

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

/* Runs `addr2line -f -C -e path addr`; fills func and where ("file:line"). 0 on success. */
static int run_addr2line(const char *path, uint64_t addr, char *func, size_t flen, char *where, size_t wlen)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    char addr_s[32];
    snprintf(addr_s, sizeof addr_s, "0x%llx", (unsigned long long)addr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        freopen("/dev/null", "w", stderr);
        execlp("addr2line", "addr2line", "-f", "-C", "-e", path, addr_s, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE *in = fdopen(fds[0], "r");
    int ok = -1;
    if (in) {
        if (fgets(func, (int)flen, in) && fgets(where, (int)wlen, in)) {
            func[strcspn(func, "\n")] = '\0';
            where[strcspn(where, "\n")] = '\0';
            ok = 0;
        }
        fclose(in);
    } else {
        close(fds[0]);
    }
    int status;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        ok = -1;
    return ok;
}

struct cached {
    char *path;
    uint64_t addr;
    char *text;
};
static struct cached *cache;
static size_t ncache;

void symbolize_frame(const struct sluice_trace_file *f, uint64_t ip, bool use_addr2line, char *buf, size_t len)
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
    for (size_t i = 0; i < ncache; i++)
        if (cache[i].addr == addr && strcmp(cache[i].path, m->path) == 0) {
            snprintf(buf, len, "%s (%s)", cache[i].text, mo);
            return;
        }
    char func[512], where[1024], text[1600];
    if (run_addr2line(m->path, addr, func, sizeof func, where, sizeof where) == 0 && strcmp(func, "??") != 0) {
        const char *w = strcmp(where, "??:0") == 0 || strcmp(where, "??:?") == 0 ? NULL : where;
        if (w)
            snprintf(text, sizeof text, "%s at %s", func, w);
        else
            snprintf(text, sizeof text, "%s", func);
    } else {
        text[0] = '\0';
    }
    struct cached *grown = realloc(cache, sizeof *cache * (ncache + 1));
    if (grown) {
        cache = grown;
        cache[ncache].path = strdup(m->path);
        cache[ncache].addr = addr;
        cache[ncache].text = strdup(text);
        if (cache[ncache].path && cache[ncache].text)
            ncache++;
    }
    if (text[0])
        snprintf(buf, len, "%s (%s)", text, mo);
    else
        snprintf(buf, len, "%s", mo);
}
