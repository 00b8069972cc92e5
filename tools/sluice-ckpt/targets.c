/* Turning PATH arguments into opened containers, and the messages every command shares. */
#include "ckpt_tool.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

void tool_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
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

void tool_format_time(int64_t ns, char *buf, size_t len)
{
    time_t s = (time_t)(ns / 1000000000);
    struct tm tm;
    if (ns < 0 || !gmtime_r(&s, &tm)) {
        snprintf(buf, len, "%lld ns", (long long)ns);
        return;
    }
    char day[32];
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%03dZ", day, (int)((ns / 1000000) % 1000));
}

struct scan_ctx {
    tool_visit fn;
    void *ctx;
    int status;
    int seen;
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
    if (s->fn(s->ctx, c) != 0)
        s->status = EXIT_BAD_DATA;
    return 0;
}

int tool_for_each_container(char *const *paths, int npaths, int empty_ok, tool_visit fn,
                            void *ctx)
{
    static char *const here[] = {"."};
    if (npaths == 0) {
        paths = here;
        npaths = 1;
    }
    struct scan_ctx s = {.fn = fn, .ctx = ctx, .status = EXIT_OK};
    for (int i = 0; i < npaths; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0) {
            tool_error("%s: %s", paths[i], strerror(errno));
            s.status = EXIT_BAD_DATA;
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            int before = s.seen;
            int rc = sluice_container_scan_dir(paths[i], on_container, &s);
            if (rc < 0) {
                tool_error("%s: %s", paths[i], strerror(-rc));
                s.status = EXIT_BAD_DATA;
            } else if (s.seen == before && !empty_ok) {
                tool_error("%s: no containers (*%s) in this folder", paths[i],
                           SLUICE_CONTAINER_SUFFIX);
                s.status = EXIT_BAD_DATA;
            }
            continue;
        }
        char msg[8192] = "";
        struct sluice_container *c = NULL;
        int rc = sluice_container_open(paths[i], &c, msg, sizeof msg);
        on_container(&s, paths[i], c, rc, msg);
        sluice_container_close(c);
    }
    return s.status;
}
