/* SPDX-License-Identifier: MIT */
/* See symbolize.h. addr2line runs as a child process (no shell: paths are passed as
 * arguments), once per distinct (module, address); a missing addr2line just means no names. */
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

/* Runs `addr2line -f -i -C -e path addr` and formats its answer as "f at file:line", with
 * "(inlined into g at file:line)" for each enclosing inlined frame. 0 on success. */
static int run_addr2line(const char *path, uint64_t addr, char *text, size_t tlen)
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
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 2);
        execlp("addr2line", "addr2line", "-f", "-i", "-C", "-e", path, addr_s, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE *in = fdopen(fds[0], "r");
    size_t used = 0;
    int pairs = 0;
    text[0] = '\0';
    if (in) {
        char func[512], where[1024];
        while (fgets(func, sizeof func, in) && fgets(where, sizeof where, in)) {
            func[strcspn(func, "\n")] = '\0';
            where[strcspn(where, "\n")] = '\0';
            if (func[0] == '\0' || strcmp(func, "??") == 0)
                continue;
            bool has_line = where[0] != '\0' && strncmp(where, "??", 2) != 0 && strcmp(where, ":?") != 0;
            int n = snprintf(text + used, tlen - used, "%s%s%s%s%s", pairs ? " (inlined into " : "", func,
                             has_line ? " at " : "", has_line ? where : "", pairs ? ")" : "");
            if (n < 0 || (size_t)n >= tlen - used)
                break;
            used += (size_t)n;
            pairs++;
        }
        fclose(in);
    } else {
        close(fds[0]);
    }
    int status;
    waitpid(pid, &status, 0);
    return pairs > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

struct cached {
    char *path;
    uint64_t addr;
    char *text;
};
static struct cached *cache;
static size_t ncache;

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
    for (size_t i = 0; i < ncache; i++)
        if (cache[i].addr == addr && strcmp(cache[i].path, m->path) == 0) {
            if (cache[i].text[0])
                snprintf(buf, len, "%s (%s)", cache[i].text, mo);
            else
                snprintf(buf, len, "%s", mo);
            return;
        }
    char text[1600];
    if (run_addr2line(m->path, addr, text, sizeof text) != 0)
        text[0] = '\0';
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
