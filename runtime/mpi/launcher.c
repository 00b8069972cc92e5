/* SPDX-License-Identifier: MIT */
/* See launcher.h. The order of checks matters: hydra or Open MPI started inside a Slurm
 * allocation also sees SLURM_* variables (those of the batch step), so the MPI launchers'
 * own variables win, and Slurm counts only inside an srun step (SLURM_STEP_ID set): a
 * program run directly in a batch script sees SLURM_PROCID=0 and SLURM_NTASKS=N but is
 * alone. */
#include "mpi/launcher.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

const char *sluice_launcher_name(sluice_launcher_kind kind)
{
    switch (kind) {
    case SLUICE_LAUNCHER_HYDRA:
        return "hydra";
    case SLUICE_LAUNCHER_OMPI:
        return "openmpi";
    case SLUICE_LAUNCHER_PMIX:
        return "pmix";
    case SLUICE_LAUNCHER_SLURM:
        return "slurm";
    case SLUICE_LAUNCHER_NONE:
        break;
    }
    return "none";
}

/* A non-negative decimal int, the whole string. */
static bool parse_int(const char *s, int *out)
{
    if (s == NULL || *s < '0' || *s > '9')
        return false;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v > 0x7fffffffL)
        return false;
    *out = (int)v;
    return true;
}

/* Copies `prefix` + `id` (+ "." + `id2` if not NULL) into out, replacing anything but
 * [A-Za-z0-9._-] so that the key is one path component. The id is the launcher's (Open MPI's
 * PMIX_NAMESPACE holds mpirun's host name, up to 64 bytes, and its pid): one longer than the key
 * keeps its head and ends with "_" and 16 hex digits of a hash of the whole, so that two jobs
 * whose ids differ only past the cut still get different keys. */
static void make_key(char *out, size_t len, const char *prefix, const char *id, const char *id2)
{
    int n = snprintf(out, len, "%s%s%s%s", prefix, id, id2 ? "." : "", id2 ? id2 : "");
    if (n >= 0 && (size_t)n >= len && len > 18) {
        uint64_t h = sluice_fnv1a(sluice_fnv1a_str(id), id2 ? id2 : "", id2 ? strlen(id2) : 0);
        snprintf(out + len - 18, 18, "_%016llx", (unsigned long long)h);
    }
    for (char *p = out; *p; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                  c == '-' || c == '_';
        if (!ok)
            *p = '_';
    }
}

struct ctx {
    const char *(*get)(const char *, void *);
    void *arg;
    char *warn;
    unsigned long warnlen;
};

static const char *env(struct ctx *c, const char *name)
{
    const char *v = c->get(name, c->arg);
    return (v && *v) ? v : NULL;
}

static void warn_bad(struct ctx *c, const char *name, const char *value, const char *why)
{
    if (c->warn && c->warnlen && c->warn[0] == '\0')
        snprintf(c->warn, c->warnlen, "ignoring %s=%.64s%s (%s)", name, value,
                 strlen(value) > 64 ? "..." : "", why); /* the value's head, marked: the reason always fits */
}

/* rank from rank_var, size from the first of size_vars that is set; false if unusable. */
static bool read_rank_size(struct ctx *c, const char *rank_var, const char *const *size_vars, int *rank,
                           int *size)
{
    const char *r = env(c, rank_var);
    if (r == NULL)
        return false;
    if (!parse_int(r, rank)) {
        warn_bad(c, rank_var, r, "not a non-negative integer");
        return false;
    }
    *size = 0;
    for (; *size_vars; size_vars++) {
        const char *s = env(c, *size_vars);
        if (s == NULL)
            continue;
        if (!parse_int(s, size) || *size == 0) {
            warn_bad(c, *size_vars, s, "not a positive integer");
            return false;
        }
        if (*rank >= *size) {
            warn_bad(c, rank_var, r, "rank is not below the job size");
            return false;
        }
        break;
    }
    return true;
}

void sluice_launch_detect(const char *(*get)(const char *name, void *ctx), void *arg,
                          struct sluice_launch *out, char *warn, unsigned long warnlen)
{
    struct ctx c = {get, arg, warn, warnlen};
    if (warn && warnlen)
        warn[0] = '\0';
    memset(out, 0, sizeof *out);
    out->kind = SLUICE_LAUNCHER_NONE;
    out->rank = 0;
    out->size = 1;
    out->pmi_fd = -1;

    int rank, size;
    static const char *const hydra_size[] = {"PMI_SIZE", NULL};
    if (read_rank_size(&c, "PMI_RANK", hydra_size, &rank, &size) && size > 0) {
        out->kind = SLUICE_LAUNCHER_HYDRA;
        out->rank = rank;
        out->size = size;
        int fd;
        const char *s = env(&c, "PMI_FD");
        if (s && parse_int(s, &fd))
            out->pmi_fd = fd;
        else if ((s = env(&c, "PMI_PORT")) != NULL)
            make_key(out->job, sizeof out->job, "pmiport-", s, NULL);
        /* Set by hydra's proxy for every process it starts; read by no MPI library. A value
         * that is no count, or above the job's size, is left unknown. */
        int local;
        s = env(&c, "MPI_LOCALNRANKS");
        if (s && parse_int(s, &local) && local <= size)
            out->local_size = local;
        return;
    }

    static const char *const ompi_size[] = {"OMPI_COMM_WORLD_SIZE", NULL};
    if (read_rank_size(&c, "OMPI_COMM_WORLD_RANK", ompi_size, &rank, &size) && size > 0) {
        out->kind = SLUICE_LAUNCHER_OMPI;
        out->rank = rank;
        out->size = size;
        /* Open MPI's PMIx server folder ends in "pid.<N>", N being the local daemon
         * (mpirun or orted): alive exactly as long as the job on this node. */
        const char *dir = env(&c, "PMIX_SERVER_TMPDIR");
        const char *p = dir ? strstr(dir, "/pid.") : NULL;
        int pid;
        if (p && parse_int(p + 5, &pid) && pid > 0)
            out->anchor_pid = pid;
        const char *id = env(&c, "OMPI_MCA_ess_base_jobid");
        if (id)
            make_key(out->job, sizeof out->job, "ompi-", id, NULL);
        else if ((id = env(&c, "PMIX_NAMESPACE")) != NULL)
            make_key(out->job, sizeof out->job, "pmix-", id, NULL);
        return;
    }

    static const char *const pmix_size[] = {"OMPI_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS",
                                            NULL};
    if (read_rank_size(&c, "PMIX_RANK", pmix_size, &rank, &size)) {
        out->kind = SLUICE_LAUNCHER_PMIX;
        out->rank = rank;
        out->size = size;
        const char *ns = env(&c, "PMIX_NAMESPACE");
        if (ns)
            make_key(out->job, sizeof out->job, "pmix-", ns, NULL);
        return;
    }

    static const char *const slurm_size[] = {"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "SLURM_NPROCS", NULL};
    const char *step = env(&c, "SLURM_STEP_ID");
    if (step && read_rank_size(&c, "SLURM_PROCID", slurm_size, &rank, &size) && size > 0) {
        out->kind = SLUICE_LAUNCHER_SLURM;
        out->rank = rank;
        out->size = size;
        const char *job = env(&c, "SLURM_JOB_ID");
        make_key(out->job, sizeof out->job, "slurm-", job ? job : "nojob", step);
        return;
    }
}

bool sluice_launch_without_pmi(const char *(*get)(const char *name, void *ctx), void *arg,
                               const struct sluice_launch *l, char *msg, unsigned long msglen)
{
    struct ctx c = {get, arg, NULL, 0};
    if (l->kind != SLUICE_LAUNCHER_SLURM || l->size < 2)
        return false;
    /* a plugin that sets SLURM_MPI_TYPE but no variable sluice knows: leave it to MPI */
    const char *type = env(&c, "SLURM_MPI_TYPE");
    if (type && strcmp(type, "none") != 0)
        return false;
    if (msg && msglen)
        snprintf(msg, msglen,
                 "srun started %d tasks without an MPI plugin (%s): each task's MPI would be a job of "
                 "one rank, so the ranks cannot work together; launch with `srun --mpi=pmi2` (or the "
                 "plugin `srun --mpi=list` shows, e.g. pmix)",
                 l->size, type ? "SLURM_MPI_TYPE=none" : "no PMI variables");
    return true;
}
