/* SPDX-License-Identifier: MIT */
/* Turning PATH arguments into opened containers, and the messages every command shares. */
#include "ckpt/commit/stage.h"
#include "ckpt_tool.h"
#include "progress.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

void tool_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tool_progress_interrupt(); /* the message on a line of its own */
    fputs("sluice-ckpt: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int tool_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("sluice-ckpt: ", stderr);
    if (cmd)
        fprintf(stderr, "%s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'sluice-ckpt %s%s--help'.\n", cmd ? cmd : "", cmd ? " " : "");
    va_end(ap);
    return EXIT_USAGE;
}

int tool_bad_option(const char *cmd, int got, char **argv)
{
    const char *arg = argv[optind - 1];
    if (got == ':')
        return tool_usage_error(cmd, "option '%s' needs a value", arg);
    if (optopt && optopt != '?')
        return tool_usage_error(cmd, "unknown option '-%c'", optopt);
    return tool_usage_error(cmd, "unknown option '%s'", arg);
}

const char *tool_stage_dir(const char *given, char *def, size_t cap)
{
    if (given)
        return given;
    const char *env = getenv("SLUICE_STAGE_DIR");
    if (env && *env)
        return env;
    sluice_stage_default_dir(def, cap);
    return def;
}

const char *tool_shown(const char *s, char *buf, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    for (; *p; p++)
        if (*p < 0x20 || *p == 0x7f || *p == '\\')
            break;
    if (!*p)
        return s;
    size_t o = 0;
    for (p = (const unsigned char *)s; *p && o + 5 < len; p++) {
        if (*p == '\\') {
            buf[o++] = '\\';
            buf[o++] = '\\';
        } else if (*p == '\n') {
            buf[o++] = '\\';
            buf[o++] = 'n';
        } else if (*p < 0x20 || *p == 0x7f) {
            o += (size_t)snprintf(buf + o, len - o, "\\x%02x", *p);
        } else {
            buf[o++] = (char)*p;
        }
    }
    buf[o] = 0;
    return buf;
}

void tool_format_time(int64_t ns, char *buf, size_t len)
{
    time_t s = (time_t)(ns / 1000000000);
    struct tm tm;
    if (ns < 0 || !gmtime_r(&s, &tm)) {
        (void)tool_snprintf(buf, len, "%lld ns", (long long)ns);
        return;
    }
    char day[32];
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    (void)tool_snprintf(buf, len, "%s.%03dZ", day, (int)((ns / 1000000) % 1000));
}

struct scan_ctx {
    tool_visit fn;
    void *ctx;
    int status;
    int seen;
    const char *rel; /* folder of the containers being visited, relative to the PATH given */
};

static int on_container(void *vctx, const char *path, const struct sluice_container *c, int rc,
                        const char *msg)
{
    struct scan_ctx *s = vctx;
    s->seen++;
    if (!c) {
        tool_error("%s", msg[0] ? msg : strerror(-rc));
        s->status = EXIT_BAD_DATA;
        return 0;
    }
    if (c->index_from_copy)
        tool_error("%s; its members are read from the index copy (`sluice-ckpt salvage` writes a repaired "
                   "version)",
                   c->damage);
    if (s->fn(s->ctx, c, s->rel) != 0)
        s->status = EXIT_BAD_DATA;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Containers of dir, then (recursive) of its subfolders in name order. Hidden folders (a stage
 * folder, say) and symbolic links are not entered. */
static void scan_tree(struct scan_ctx *s, const char *dir, const char *rel, int recursive)
{
    s->rel = rel;
    int rc = sluice_container_scan_dir(dir, on_container, s);
    if (rc < 0) {
        tool_error("%s: %s", dir, strerror(-rc));
        s->status = EXIT_BAD_DATA;
        return;
    }
    if (!recursive)
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    char **subs = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        struct stat st;
        char path[PATH_MAX];
        if (de->d_name[0] == '.' || tool_snprintf(path, sizeof path, "%s/%s", dir, de->d_name) != 0 ||
            lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **grown = realloc(subs, cap * sizeof *grown);
            if (!grown)
                break;
            subs = grown;
        }
        if ((subs[n] = strdup(de->d_name)) != NULL)
            n++;
    }
    closedir(d);
    if (n)
        qsort(subs, n, sizeof *subs, by_name);
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX], sub[PATH_MAX];
        if (tool_snprintf(path, sizeof path, "%s/%s", dir, subs[i]) == 0 &&
            tool_snprintf(sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", subs[i]) == 0)
            scan_tree(s, path, sub, recursive);
        free(subs[i]);
    }
    free(subs);
}

int tool_for_each_container(char *const *paths, int npaths, int flags, tool_visit fn, void *ctx)
{
    static char *const here[] = {"."};
    if (npaths == 0) {
        paths = here;
        npaths = 1;
    }
    struct scan_ctx s = {.fn = fn, .ctx = ctx, .status = EXIT_OK, .rel = ""};
    for (int i = 0; i < npaths; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0) {
            tool_error("%s: %s", paths[i], strerror(errno));
            s.status = EXIT_BAD_DATA;
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            int before = s.seen;
            scan_tree(&s, paths[i], "", flags & TOOL_RECURSIVE);
            if (s.seen == before && !(flags & TOOL_EMPTY_OK)) {
                tool_error("%s: no containers (*%s) in this folder%s", paths[i], SLUICE_CONTAINER_SUFFIX,
                           (flags & TOOL_RECURSIVE) ? " or below" : "");
                s.status = EXIT_BAD_DATA;
            }
            continue;
        }
        char msg[8192] = "";
        struct sluice_container *c = NULL;
        int rc = sluice_container_open(paths[i], &c, msg, sizeof msg);
        s.rel = "";
        on_container(&s, paths[i], c, rc, msg);
        sluice_container_close(c);
    }
    return s.status;
}
