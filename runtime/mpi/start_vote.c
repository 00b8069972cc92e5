/* SPDX-License-Identifier: MIT */
/* See start_vote.h. PMI-1 exchanges of MPICH's hydra: `init`, `get_maxes`, `get_my_kvsname` (once per
 * process, in one write: the exit vote reuses the start vote's answers), `put` (only a rank other than 0
 * that starts MPI; every such rank puts the same key, which hydra accepts), `barrier_in`, `get`
 * (answered rc=-1 where no rank put the key), and `finalize` where no rank starts MPI. Requests that
 * need no answer before the next go out together: hydra's proxy answers them in order
 * (pmi1_wire.h). */
#include "mpi/start_vote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "mpi/pmi1_wire.h"

#define ANSWER_MS 30000 /* hydra's proxy answers everything but the barrier at once */
#define START_KEY "sluice_start_mpi"
#define EXIT_KEY "sluice_exit_busy"

/* The value of name=VALUE in a PMI-1 answer line (up to the next space), or "" if absent. */
static void field(const char *line, const char *name, char *out, size_t cap)
{
    out[0] = '\0';
    size_t nl = strlen(name);
    for (const char *p = line; (p = strstr(p, name)) != NULL; p += nl) {
        if ((p != line && p[-1] != ' ') || p[nl] != '=')
            continue;
        const char *v = p + nl + 1;
        size_t n = strcspn(v, " ");
        if (n >= cap)
            n = cap - 1;
        memcpy(out, v, n);
        out[n] = '\0';
        return;
    }
}

static void warn_unanswered(const char *what, int rc)
{
    sluice_log_warn("the launcher did not answer PMI's %s (%s); sluice goes on as if a rank had "
                    "something to commit",
                    what, rc == -2 ? "30 s without an answer" : "socket failed");
}

/* Sends one or more request lines in one write. */
static int send_reqs(int fd, const char *reqs)
{
    if (sluice_pmi1_send(fd, reqs, strlen(reqs)) == 0)
        return 0;
    warn_unanswered(reqs + strspn(reqs, "cmd="), -1);
    return -1;
}

/* The answer to the next request sent (what: its name, for the warning). */
static int answer(int fd, const char *what, char *ans, size_t cap, int wait_ms)
{
    int rc = sluice_pmi1_answer(fd, ans, cap, wait_ms);
    if (rc != 0)
        warn_unanswered(what, rc);
    return rc;
}

/* What one vote is: its key, and whether a process that finds no key tells the launcher it is
 * done with PMI (the start vote: it leaves without MPI; at exit MPI's own finalize does that). */
struct vote_kind {
    const char *key;
    bool finalize_if_none;
    void (*all_arrived)(void); /* NULL, or called after the first barrier */
};

/* PMI-1 get: its rc (0: found) into rc and, if value is not NULL, the value. */
static int get(int fd, const char *kvs, const char *key, char *ans, size_t cap, char *req, char *rc,
               size_t rcap, char *value, size_t vcap)
{
    snprintf(req, cap, "cmd=get kvsname=%s key=%s\n", kvs, key);
    if (send_reqs(fd, req) != 0 || answer(fd, "get", ans, cap, ANSWER_MS) != 0)
        return -1;
    field(ans, "rc", rc, rcap);
    if (value)
        field(ans, "value", value, vcap);
    return 0;
}

/* Enters PMI's barrier, after a put of key=value where key is not NULL: one write, the put
 * answered at once, the barrier once every rank of the job has entered it. */
static int put_and_barrier(int fd, const char *kvs, const char *key, const char *value, char *ans, size_t cap,
                           char *req)
{
    int n = key ? snprintf(req, cap, "cmd=put kvsname=%s key=%s value=%s\n", kvs, key, value) : 0;
    snprintf(req + n, cap - (size_t)n, "cmd=barrier_in\n");
    if (send_reqs(fd, req) != 0 || (key && answer(fd, "put", ans, cap, ANSWER_MS) != 0))
        return -1;
    return answer(fd, "barrier_in", ans, cap, -1);
}

/* One vote in the job's key-value space kvs; ans and req hold cap bytes (handshake). in_barrier:
 * this rank's first barrier_in went out with its greeting (it puts nothing), only its answer is
 * to be read. Only rank 0 reads the key, so only other ranks that vote yes put it. */
static enum sluice_start_vote vote(int fd, int rank, const struct vote_kind *k, bool yes, bool in_barrier,
                                   char *ans, size_t cap, const char *kvs, char *req)
{
    char rc[16];
    const char *put_key = yes && rank != 0 ? k->key : NULL;
    if (in_barrier ? answer(fd, "barrier_in", ans, cap, -1) != 0
                   : put_and_barrier(fd, kvs, put_key, "1", ans, cap, req) != 0)
        return SLUICE_VOTE_FAILED;
    if (k->all_arrived)
        k->all_arrived();
    /* Rank 0 reads the key (unless it votes yes itself) and puts the tally; after a second barrier
     * every other rank that voted no reads the tally, which its node's proxy then holds: a key nobody put is
     * asked of mpiexec by each proxy once per get, N gets in a row at one process (0.5 s of
     * `mpiexec -n 64 true`). */
    char tally_key[64], value[16];
    snprintf(tally_key, sizeof tally_key, "%s_tally", k->key);
    bool any = yes;
    if (rank == 0 && !yes) {
        if (get(fd, kvs, k->key, ans, cap, req, rc, sizeof rc, NULL, 0) != 0)
            return SLUICE_VOTE_FAILED;
        any = strcmp(rc, "0") == 0;
    }
    if (put_and_barrier(fd, kvs, rank == 0 ? tally_key : NULL, any ? "1" : "0", ans, cap, req) != 0)
        return SLUICE_VOTE_FAILED;
    if (rank != 0 && !yes) { /* a yes needs no tally */
        if (get(fd, kvs, tally_key, ans, cap, req, rc, sizeof rc, value, sizeof value) != 0 ||
            strcmp(rc, "0") != 0)
            return SLUICE_VOTE_FAILED;
        any = strcmp(value, "0") != 0;
    }
    if (any)
        return SLUICE_VOTE_SOME;
    if (!k->finalize_if_none)
        return SLUICE_VOTE_NONE;
    /* No rank starts MPI: the launcher must count this process as finished with PMI, or it ends
     * the job when the socket closes. */
    if (send_reqs(fd, "cmd=finalize\n") != 0 || answer(fd, "finalize", ans, cap, ANSWER_MS) != 0)
        return SLUICE_VOTE_FAILED;
    return SLUICE_VOTE_NONE;
}

/* What the launcher told this process at its first vote: the name of the job's key-value space
 * and the answer buffer's size that its maxes call for, the same for every process of the job (a
 * forked child's too). The exit vote reuses them. Votes are never concurrent (the start vote
 * holds the roles' lock; the exit vote comes after MPI started). Answers hold a kvsname and a
 * value whose lengths the launcher decides: PMI-1's get_maxes says them (hydra: 256 and 1024); a
 * name cut by a fixed buffer would be another job's. */
static struct {
    size_t cap;
    char *kvs;
} known;

/* PMI's init, get_maxes and get_my_kvsname in one write, and barrier_in after them where
 * with_barrier (its answer is left to read): the node's proxy, one process that serves every rank
 * of its node in turn, answers them in order from one read, where each was a round trip. 0, -1
 * (no answer), -3 (answered, but maxes or kvsname unusable). */
static int greet(int fd, bool with_barrier)
{
    static const char hello[] = "cmd=init pmi_version=1 pmi_subversion=1\ncmd=get_maxes\n"
                                "cmd=get_my_kvsname\ncmd=barrier_in\n";
    size_t len = sizeof hello - 1 - (with_barrier ? 0 : strlen("cmd=barrier_in\n"));
    if (sluice_pmi1_send(fd, hello, len) != 0) {
        warn_unanswered("init", -1);
        return -1;
    }
    char first[512], num[32];
    if (answer(fd, "init", first, sizeof first, ANSWER_MS) != 0 ||
        answer(fd, "get_maxes", first, sizeof first, ANSWER_MS) != 0)
        return -1;
    field(first, "kvsname_max", num, sizeof num);
    long kmax = strtol(num, NULL, 10);
    field(first, "vallen_max", num, sizeof num);
    long vmax = strtol(num, NULL, 10);
    bool sane = kmax > 0 && kmax <= (1 << 20) && vmax > 0 && vmax <= (1 << 20);
    size_t kcap = sane ? (size_t)kmax + 2 : 0, cap = sane ? (size_t)kmax + (size_t)vmax + 256 : 512;
    char *ans = malloc(cap), *kvs = sane ? malloc(kcap) : NULL;
    /* The kvsname's answer is read even where it cannot be used, so that nothing of the greeting
     * is left on the socket for MPI's own PMI client. */
    int rc = ans && answer(fd, "get_my_kvsname", ans, cap, ANSWER_MS) == 0 && kvs ? 0 : -1;
    if (rc == 0) {
        field(ans, "kvsname", kvs, kcap);
        if (!kvs[0] || strlen(kvs) >= kcap - 1)
            rc = -1; /* empty, or longer than get_maxes said: never a cut name */
    }
    free(ans);
    if (rc != 0) {
        free(kvs);
        return ans ? -3 : -1;
    }
    known.cap = cap;
    known.kvs = kvs;
    return 0;
}

static enum sluice_start_vote pmi_vote(int fd, int rank, const struct vote_kind *k, bool yes)
{
    /* A rank that puts the key needs the kvsname first; any other enters the barrier with its
     * greeting. */
    bool in_barrier = false;
    if (!known.kvs) {
        in_barrier = !(yes && rank != 0);
        int g = greet(fd, in_barrier);
        if (g == -3 && in_barrier)
            answer(fd, "barrier_in", NULL, 0, -1); /* nothing of it left for MPI's PMI client */
        if (g != 0)
            return SLUICE_VOTE_FAILED;
    }
    char *ans = malloc(known.cap), *req = malloc(known.cap);
    enum sluice_start_vote v =
        ans && req ? vote(fd, rank, k, yes, in_barrier, ans, known.cap, known.kvs, req) : SLUICE_VOTE_FAILED;
    free(ans);
    free(req);
    return v;
}

enum sluice_start_vote sluice_start_vote(int fd, int rank, bool start)
{
    static const struct vote_kind k = {START_KEY, true, NULL};
    return pmi_vote(fd, rank, &k, start);
}

enum sluice_start_vote sluice_exit_vote(int fd, int rank, bool busy, void (*all_arrived)(void))
{
    const struct vote_kind k = {EXIT_KEY, false, all_arrived};
    return pmi_vote(fd, rank, &k, busy);
}
