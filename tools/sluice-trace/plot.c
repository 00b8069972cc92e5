/* SPDX-License-Identifier: MIT */
/* See plot.h. The script is found next to the executable (the build folder's bin/ and the
 * installed bindir both hold it); Python is the interpreter CMake found (SLUICE_PYTHON3). */
#include "plot.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SLUICE_PYTHON3
#define SLUICE_PYTHON3 "python3"
#endif

FILE *plot_tmp_csv(char *path, size_t len)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, len, "%s/sluice-trace-XXXXXX.csv", dir && *dir ? dir : "/tmp");
    int fd = mkstemps(path, 4);
    if (fd < 0) {
        fprintf(stderr, "sluice-trace: %s: cannot create a temporary file: %s\n", path, strerror(errno));
        return NULL;
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(path);
    }
    return f;
}

int plot_out_open(struct plot_out *p, bool csv, const char *out)
{
    p->csv = csv;
    p->out = out;
    p->tmp[0] = '\0';
    p->f = !csv ? plot_tmp_csv(p->tmp, sizeof p->tmp) : strcmp(out, "-") == 0 ? stdout : fopen(out, "w");
    if (!p->f) {
        if (csv)
            perror(out);
        return -1;
    }
    return 0;
}

int plot_out_close(struct plot_out *p, const char *what, const char *source, size_t nranks, int status)
{
    if (p->f != stdout && fclose(p->f) != 0) {
        perror(p->csv ? p->out : p->tmp);
        status = 1;
    }
    p->f = NULL;
    if (!p->csv) {
        char title[256];
        snprintf(title, sizeof title, "%s: %zu ranks", source, nranks);
        if (status == 0)
            status = plot_run(what, p->tmp, p->out, title);
        unlink(p->tmp);
    }
    return status;
}

static int script_path(char *buf, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    snprintf(buf, len, "%s/sluice-trace-plot.py", exe);
    return access(buf, R_OK);
}

int plot_run(const char *what, const char *csv, const char *png, const char *title)
{
    char script[PATH_MAX + 32];
    if (script_path(script, sizeof script) != 0) {
        fprintf(stderr, "sluice-trace: sluice-trace-plot.py is not installed beside sluice-trace (%s)\n",
                script);
        return 1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "sluice-trace: cannot start %s: %s\n", SLUICE_PYTHON3, strerror(errno));
        return 1;
    }
    if (pid == 0) {
        execlp(SLUICE_PYTHON3, SLUICE_PYTHON3, script, what, csv, png, title, (char *)NULL);
        fprintf(stderr, "sluice-trace: cannot run %s: %s\n", SLUICE_PYTHON3, strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
