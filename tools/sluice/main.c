/* SPDX-License-Identifier: MIT */
/* sluice: the launcher. Sets LD_PRELOAD and SLUICE_* variables from command-line options, then
 * runs the program:  mpiexec -n 8 sluice --trace out/ --capture 'ckpt.%r' -- ./app
 * Options come from the same table as the variables (runtime/config/vars.def, options.c): each
 * --<option> VALUE sets SLUICE_<ID>=VALUE. Values are validated here, with the library's own
 * parser, so a typo fails before the job starts: every rank exits 2, and only the job's first
 * rank says why (the same launcher line runs on every rank). */
#include "node_report_wire.h"
#include "options.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* Rank 0 of a job, or a process outside any job: the one that reports usage errors. */
static int reports_errors(void)
{
    static const char *const vars[] = {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return strcmp(v, "0") == 0;
    }
    return 1;
}

/* One line on stderr (from the reporting rank only); returns the exit status 2. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    if (!reports_errors())
        return 2;
    va_list ap;
    va_start(ap, fmt);
    fputs("sluice: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n", stderr);
    va_end(ap);
    return 2;
}

/* The launcher's folder, or -1 (also when it does not fit: never a cut path). */
static int exe_dir(char *out, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", out, len);
    if (n <= 0 || (size_t)n >= len)
        return -1;
    out[n] = '\0';
    char *slash = strrchr(out, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    return 0;
}

/* libsluice.so beside the launcher: <bindir>/<relative libdir>/libsluice.so. */
static int default_library(char *out, size_t len)
{
    char dir[PATH_MAX], libdir[PATH_MAX], real[PATH_MAX];
    out[0] = '\0';
    int n =
        exe_dir(dir, sizeof dir) == 0 ? snprintf(libdir, sizeof libdir, "%s/%s", dir, SLUICE_REL_LIBDIR) : -1;
    if (n < 0 || (size_t)n >= sizeof libdir)
        return -1;
    /* The folder without "bin/..", but the file by its name (libsluice.so, not its target). */
    n = snprintf(out, len, "%s/libsluice.so", realpath(libdir, real) ? real : libdir);
    if (n < 0 || (size_t)n >= len)
        return -1;
    return access(out, R_OK);
}

/* The installed documentation folder, if there is one (not in a build tree). */
static const char *installed_docdir(char *out, size_t len)
{
    char dir[PATH_MAX], env[PATH_MAX];
    if (exe_dir(dir, sizeof dir) != 0)
        return NULL;
    int n = snprintf(env, sizeof env, "%s/%s/ENV.md", dir, SLUICE_REL_DOCDIR);
    if (n < 0 || (size_t)n >= sizeof env || access(env, R_OK) != 0 || !realpath(env, out) ||
        strlen(out) >= len)
        return NULL;
    *strrchr(out, '/') = '\0';
    return out;
}

/* The option whose value is `value`: a separate word that is "--" or another option is a
 * forgotten value, never the value itself (`--trace -- ./prog` must not trace into "--"). */
static int missing_value(const char *value)
{
    if (strcmp(value, "--") == 0)
        return 1;
    if (strncmp(value, "--", 2) != 0)
        return 0;
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(value + 2, "="), value + 2);
    for (int i = 0; launcher_longopts[i].name; i++)
        if (strcmp(launcher_longopts[i].name, name) == 0)
            return 1;
    return 0;
}

static const struct sluice_cfg_desc *desc_of(int c)
{
    if (c >= OPT_VAR_BASE && c < OPT_VAR_BASE + SLUICE_CFG_COUNT)
        return &sluice_cfg_table[c - OPT_VAR_BASE];
    for (int i = 0; i < SLUICE_CFG_COUNT; i++)
        if (c < 256 && launcher_short_of(&sluice_cfg_table[i]) == c)
            return &sluice_cfg_table[i];
    return NULL;
}

/* "unknown option --captur (did you mean --capture?)" */
static int unknown_option(const char *word)
{
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(word + 2, "="), word + 2);
    int near = launcher_nearest_option(name);
    if (near >= 0)
        return usage_error("unknown option --%s (did you mean --%s?)", name, launcher_longopts[near].name);
    return usage_error("unknown option --%s (sluice --help lists them)", name);
}

static int describe_option(const struct sluice_cfg_desc *d, char *buf, size_t len)
{
    int letter = launcher_short_of(d);
    if (letter)
        return snprintf(buf, len, "-%c/--%s", letter, d->option);
    return snprintf(buf, len, "--%s", d->option);
}

int main(int argc, char **argv)
{
    /* Not an option users give: a node's rank starts the launcher so (node_helper.c). */
    if (argc >= 2 && strcmp(argv[1], "--node-helper") == 0)
        return node_helper_main(argc - 2, argv + 2);
    launcher_options_init();
    const char *lib = NULL;
    int print_env = 0, watch_nodes = 0;
    opterr = 0;
    for (;;) {
        int before = optind, idx = -1;
        int c = getopt_long(argc, argv, launcher_shortopts, launcher_longopts, &idx);
        if (c == -1)
            break;
        const char *word = argv[before];
        /* getopt_long takes any unambiguous prefix: "--captur" would silently mean "--capture". */
        if (idx >= 0 && strncmp(word, "--", 2) == 0 &&
            (strcspn(word + 2, "=") != strlen(launcher_longopts[idx].name) ||
             strncmp(word + 2, launcher_longopts[idx].name, strlen(launcher_longopts[idx].name)) != 0))
            return unknown_option(word);
        if (c == '?') {
            if (optopt)
                return usage_error("unknown option -%c (sluice --help lists them)", optopt);
            return unknown_option(word);
        }
        const struct sluice_cfg_desc *d = desc_of(c == ':' ? optopt : c);
        char shown[80];
        if (c == ':' || (optarg && optind - before == 2 && missing_value(optarg))) {
            if (!d)
                return usage_error("%s needs a value", word);
            describe_option(d, shown, sizeof shown);
            return usage_error("%s needs a value before the program: %s", shown, d->accepts);
        }
        switch (c) {
        case 'h':
            launcher_usage(stdout, installed_docdir((char[PATH_MAX]){0}, PATH_MAX));
            return 0;
        case 'V':
            printf("sluice %s\n", SLUICE_VERSION);
            return 0;
        case 'n':
            print_env = 1;
            continue;
        case OPT_LIST_VARIABLES:
            launcher_list_variables(stdout);
            return 0;
        case OPT_LIB:
            lib = optarg;
            continue;
        case OPT_WATCH_NODES:
            watch_nodes = 1;
            continue;
        default:
            break;
        }
        if (!d)
            return usage_error("internal error: option %s has no variable", word);
        if (setenv(d->name, optarg, 1) != 0)
            return usage_error("cannot set %s: %s", d->name, strerror(errno));
    }

    /* Validate everything the program will see, exactly as the library will. Unknown SLUICE_*
     * names are left to the library, which warns about them in the program itself. */
    struct sluice_config cfg;
    char err[512];
    if (sluice_config_parse(&cfg, environ, err, sizeof err, NULL, NULL) != 0)
        return usage_error("%s", err);

    /* Around the launcher: the ranks get the options through its environment, and no preload. */
    if (watch_nodes) {
        if (optind >= argc)
            return usage_error(
                "--watch-nodes needs the launcher's command (usage: sluice --watch-nodes [options] "
                "[--] mpiexec ...)");
        return job_watch_main(&argv[optind]);
    }

    char found[PATH_MAX];
    const char *libpath = lib;
    if (!lib) {
        if (default_library(found, sizeof found) != 0)
            return usage_error("cannot find libsluice.so next to the launcher (%s); use --lib PATH",
                               found[0] ? found : "its path is longer than PATH_MAX");
        libpath = found;
    }
    if (access(libpath, R_OK) != 0)
        return usage_error("cannot read %s: %s", libpath, strerror(errno));
    /* Absolute (ranks may chdir before exec), but keep the name: libsluice.so, not its target. */
    char *cwd = libpath[0] != '/' ? getcwd(NULL, 0) : NULL; /* any length */
    if (libpath[0] != '/' && cwd == NULL)
        return usage_error("cannot make %s absolute: the working folder: %s", libpath, strerror(errno));
    size_t alen = (cwd ? strlen(cwd) + 1 : 0) + strlen(libpath) + 1;
    char *abs = malloc(alen);
    if (!abs)
        return 2;
    snprintf(abs, alen, "%s%s%s", cwd ? cwd : "", cwd ? "/" : "", libpath);
    free(cwd);

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
    if (optind >= argc)
        return usage_error("no program given (usage: sluice [options] [--] program [args...])");
    execvp(argv[optind], &argv[optind]);
    int e = errno;
    fprintf(stderr, "sluice: cannot run %s: %s\n", argv[optind], strerror(e));
    return e == ENOENT ? 127 : 126;
}
