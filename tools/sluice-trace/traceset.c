/* SPDX-License-Identifier: MIT */
/* See traceset.h. */
#include "traceset.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int add_file(struct trace_set *set, const char *path, FILE *err)
{
    char msg[1024];
    struct sluice_trace_file *f;
    if (sluice_trace_file_read(path, &f, msg, sizeof msg) != 0) {
        fprintf(err, "sluice-trace: %s\n", msg);
        set->unreadable++;
        return -1;
    }
    struct sluice_trace_file **grown = realloc(set->files, sizeof *grown * (set->nfiles + 1));
    if (!grown) {
        sluice_trace_file_free(f);
        return -1;
    }
    set->files = grown;
    set->files[set->nfiles++] = f;
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_dir(struct trace_set *set, const char *dir, FILE *err)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(err, "sluice-trace: %s: cannot open folder: %s\n", dir, strerror(errno));
        set->unreadable++;
        return -1;
    }
    char **names = NULL;
    size_t n = 0, found = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (ends_with(e->d_name, SLUICE_TF_SUFFIX ".tmp")) {
            fprintf(err, "sluice-trace: %s/%s: incomplete trace file (its process died while writing it)\n",
                    dir, e->d_name);
            set->incomplete++;
            continue;
        }
        if (!ends_with(e->d_name, SLUICE_TF_SUFFIX))
            continue;
        char **grown = realloc(names, sizeof *names * (n + 1));
        if (!grown)
            break;
        names = grown;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        names[n] = malloc(len);
        if (!names[n])
            break;
        snprintf(names[n], len, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_name);
    for (size_t i = 0; i < n; i++) {
        if (add_file(set, names[i], err) == 0)
            found++;
        free(names[i]);
    }
    free(names);
    if (n == 0) {
        fprintf(err, "sluice-trace: %s: no *%s files in this folder\n", dir, SLUICE_TF_SUFFIX);
        set->unreadable++;
        return -1;
    }
    return found ? 0 : -1;
}

static int cmp_file(const void *a, const void *b)
{
    const struct sluice_trace_file *x = *(struct sluice_trace_file *const *)a;
    const struct sluice_trace_file *y = *(struct sluice_trace_file *const *)b;
    if (x->header.rank != y->header.rank)
        return x->header.rank < y->header.rank ? -1 : 1;
    if (x->header.start_mono_ns != y->header.start_mono_ns)
        return x->header.start_mono_ns < y->header.start_mono_ns ? -1 : 1;
    return (x->header.pid > y->header.pid) - (x->header.pid < y->header.pid);
}

int trace_set_load(struct trace_set *set, char *const *paths, int npaths, FILE *err)
{
    memset(set, 0, sizeof *set);
    for (int i = 0; i < npaths; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0) {
            fprintf(err, "sluice-trace: %s: %s\n", paths[i], strerror(errno));
            set->unreadable++;
        } else if (S_ISDIR(st.st_mode)) {
            add_dir(set, paths[i], err);
        } else {
            add_file(set, paths[i], err);
        }
    }
    if (set->nfiles == 0)
        return -1;
    qsort(set->files, set->nfiles, sizeof *set->files, cmp_file);
    for (size_t i = 0; i < set->nfiles; i++) {
        int r = set->files[i]->header.rank;
        if (set->nranks == 0 || set->ranks[set->nranks - 1].rank != r) {
            struct trace_rank *grown = realloc(set->ranks, sizeof *grown * (set->nranks + 1));
            if (!grown)
                return -1;
            set->ranks = grown;
            set->ranks[set->nranks++] = (struct trace_rank){.rank = r, .files = &set->files[i]};
        }
        set->ranks[set->nranks - 1].nfiles++;
    }
    return 0;
}

void trace_set_free(struct trace_set *set)
{
    for (size_t i = 0; i < set->nfiles; i++)
        sluice_trace_file_free(set->files[i]);
    free(set->files);
    free(set->ranks);
    memset(set, 0, sizeof *set);
}

double trace_rel_seconds(const struct sluice_trace_file *f, uint64_t t_ns)
{
    return ((double)t_ns - (double)f->header.start_mono_ns) / 1e9;
}

int trace_kind_number(const struct sluice_trace_file *f, const char *name)
{
    for (uint32_t k = 0; k < f->nkinds; k++)
        if (f->kinds[k] && strcmp(f->kinds[k], name) == 0)
            return (int)k;
    return -1;
}

void trace_set_report_missing(const struct trace_set *set, const char *command, FILE *err)
{
    if (set->nfiles == 0)
        return;
    int size = set->files[0]->header.size;
    size_t missing = 0, r = 0;
    char list[256] = "";
    size_t used = 0;
    for (int rank = 0; rank < size; rank++) {
        while (r < set->nranks && set->ranks[r].rank < rank)
            r++;
        if (r < set->nranks && set->ranks[r].rank == rank)
            continue;
        if (missing++ < 16 && used < sizeof list)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%d", used ? ", " : "", rank);
    }
    if (missing)
        fprintf(err,
                "sluice-trace %s: %zu of %d ranks have no trace file (rank%s %s%s): crashed, killed, or "
                "never started; "
                "the output covers the others\n",
                command, missing, size, missing == 1 ? "" : "s", list, missing > 16 ? ", ..." : "");
}

int trace_set_open(struct trace_set *set, char *const *paths, int npaths, const char *command, FILE *err)
{
    if (trace_set_load(set, paths, npaths, err) != 0) {
        trace_set_free(set);
        return -1;
    }
    trace_set_report_missing(set, command, err);
    return 0;
}

void *trace_grow(void *p, size_t *cap, size_t need, size_t size, const char *command)
{
    if (need <= *cap)
        return p;
    size_t n = *cap ? *cap * 2 : 64;
    while (n < need)
        n *= 2;
    void *q = realloc(p, n * size);
    if (q == NULL) {
        fprintf(stderr, "sluice-trace %s: out of memory\n", command);
        exit(1);
    }
    *cap = n;
    return q;
}

int trace_opt_help(int c, void (*usage)(FILE *))
{
    usage(c == 'h' ? stdout : stderr);
    return c == 'h' ? 0 : 2;
}

int trace_opt_int(const char *command, const char *name, const char *arg, long lo, long hi, int *out)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (*end || v < lo || v > hi) {
        fprintf(stderr, "sluice-trace %s: --%s wants %ld..%ld, not '%s'\n", command, name, lo, hi, arg);
        return 2;
    }
    *out = (int)v;
    return 0;
}

bool trace_args_missing(int nleft, int need, const char *command, const char *what, void (*usage)(FILE *))
{
    if (nleft >= need)
        return false;
    fprintf(stderr, "sluice-trace %s: %s\n", command, what);
    usage(stderr);
    return true;
}
