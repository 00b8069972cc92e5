/* SPDX-License-Identifier: MIT */
/* sluice: the launcher. Sets LD_PRELOAD and SLUICE_* variables from command-line options, then
 * runs the program:  mpiexec -n 8 sluice --trace out/ --capture 'ckpt.%r' -- ./app
 * Options come from the same table as the variables (runtime/config/vars.def): each
 * --<option> VALUE sets SLUICE_<ID>=VALUE. Values are validated here, with the library's own
 * parser, so a typo fails before the job starts. */
#include "config/config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static void usage(FILE *out)
{
    fprintf(out, "usage: sluice [options] -- program [args...]\n"
                 "\n"
                 "Runs program with libsluice.so preloaded. Each option sets the environment variable\n"
                 "shown beside it; setting the variable yourself works the same way (docs/ENV.md).\n"
                 "\n"
                 "options:\n");
    for (int i = 0; i < SLUICE_CFG_COUNT; i++) {
        const struct sluice_cfg_desc *d = &sluice_cfg_table[i];
        char opt[64];
        snprintf(opt, sizeof opt, "--%s VALUE", d->option);
        fprintf(out, "  %-28s %s\n  %-28s   variable %s, default '%s'\n  %-28s   accepts %s\n", opt, d->help,
                "", d->name, d->def, "", d->accepts);
    }
    fprintf(out, "  %-28s %s\n  %-28s %s\n  %-28s %s\n  %-28s %s\n", "--lib PATH",
            "preload this libsluice.so instead of the one installed with the launcher", "--print-env",
            "print the variables that would be set, then exit", "--version", "print the version and exit",
            "-h, --help", "show this help");
}

/* libsluice.so beside the launcher: <bindir>/<relative libdir>/libsluice.so. */
static int default_library(char *out, size_t len)
{
    char exe[PATH_MAX / 2];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    snprintf(out, len, "%s/%s/libsluice.so", exe, SLUICE_REL_LIBDIR);
    return access(out, R_OK);
}

static const struct sluice_cfg_desc *find_option(const char *name)
{
    for (int i = 0; i < SLUICE_CFG_COUNT; i++)
        if (strcmp(sluice_cfg_table[i].option, name) == 0)
            return &sluice_cfg_table[i];
    return NULL;
}

static void warn_line(const char *line, void *ctx)
{
    (void)ctx;
    fprintf(stderr, "sluice: warning: %s\n", line);
}

int main(int argc, char **argv)
{
    const char *lib = NULL;
    int print_env = 0;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "--version") == 0) {
            printf("sluice %s\n", SLUICE_VERSION);
            return 0;
        }
        if (strcmp(a, "--print-env") == 0) {
            print_env = 1;
            continue;
        }
        if (strncmp(a, "--", 2) != 0) {
            break; /* the program starts here (the "--" is optional when unambiguous) */
        }
        char name[64];
        const char *value = NULL;
        const char *eq = strchr(a + 2, '=');
        if (eq) {
            snprintf(name, sizeof name, "%.*s", (int)(eq - (a + 2)), a + 2);
            value = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", a + 2);
        }
        if (strcmp(name, "lib") == 0) {
            if (!value && i + 1 < argc)
                value = argv[++i];
            if (!value) {
                fprintf(stderr, "sluice: --lib needs a path\n");
                return 2;
            }
            lib = value;
            continue;
        }
        const struct sluice_cfg_desc *d = find_option(name);
        if (!d) {
            fprintf(stderr, "sluice: unknown option --%s (see sluice --help)\n", name);
            return 2;
        }
        if (!value && i + 1 < argc)
            value = argv[++i];
        if (!value) {
            fprintf(stderr, "sluice: --%s needs a value (%s)\n", name, d->accepts);
            return 2;
        }
        if (setenv(d->name, value, 1) != 0) {
            fprintf(stderr, "sluice: cannot set %s: %s\n", d->name, strerror(errno));
            return 2;
        }
    }

    /* Validate everything the program will see, exactly as the library will. */
    struct sluice_config cfg;
    char err[512];
    if (sluice_config_parse(&cfg, environ, err, sizeof err, warn_line, NULL) != 0) {
        fprintf(stderr, "sluice: %s\n", err);
        return 2;
    }

    char libpath[PATH_MAX];
    if (lib) {
        snprintf(libpath, sizeof libpath, "%s", lib);
    } else if (default_library(libpath, sizeof libpath) != 0) {
        fprintf(stderr, "sluice: cannot find libsluice.so next to the launcher (%s); use --lib PATH\n",
                libpath);
        return 2;
    }
    if (access(libpath, R_OK) != 0) {
        fprintf(stderr, "sluice: cannot read %s: %s\n", libpath, strerror(errno));
        return 2;
    }
    /* Absolute (ranks may chdir before exec), but keep the name: libsluice.so, not its target. */
    char abs[PATH_MAX], cwd[PATH_MAX / 2];
    if (libpath[0] != '/' && getcwd(cwd, sizeof cwd) != NULL)
        snprintf(abs, sizeof abs, "%s/%.*s", cwd, (int)(sizeof abs / 2 - 2), libpath);
    else
        snprintf(abs, sizeof abs, "%s", libpath);

    const char *old = getenv("LD_PRELOAD");
    size_t need = strlen(abs) + (old ? strlen(old) + 1 : 0) + 1;
    char *preload = malloc(need);
    if (!preload)
        return 2;
    snprintf(preload, need, "%s%s%s", abs, (old && *old) ? ":" : "", (old && *old) ? old : "");
    setenv("LD_PRELOAD", preload, 1);

    if (print_env) {
        printf("LD_PRELOAD=%s\n", preload);
        for (char **e = environ; *e; e++)
            if (strncmp(*e, "SLUICE_", 7) == 0)
                printf("%s\n", *e);
        return 0;
    }
    if (i >= argc) {
        fprintf(stderr, "sluice: no program given\n");
        usage(stderr);
        return 2;
    }
    execvp(argv[i], &argv[i]);
    fprintf(stderr, "sluice: cannot run %s: %s\n", argv[i], strerror(errno));
    return errno == ENOENT ? 127 : 126;
}
