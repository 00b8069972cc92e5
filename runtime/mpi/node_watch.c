/* SPDX-License-Identifier: MIT */
/* See node_watch.h. Sockets go through raw system calls: sluice's own wrappers of sendto and
 * recvfrom must not be entered by the runtime. */
#include "mpi/node_watch.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/fd_guard.h"
#include "common/host_id.h"
#include "common/host_name.h"
#include "common/init_order.h"
#include "common/log.h"
#include "config/config.h"
#include "mpi/launcher_watch.h"
#include "mpi/node_report.h"
#include "mpi/roles.h"
#include "mpi/wait_help.h"
#include "threads/helper_threads.h"

#define MAX_ADDRS 4       /* IPv4 addresses a leader is reached at (its interfaces) */
#define MAGIC 0x736c6e77u /* "slnw" */
#define NAMES_MAX 512     /* the line's list of lost nodes and ranks */

struct member {       /* one rank's record, gathered from every rank */
    uint64_t token;   /* rank 0's names the job: datagrams of another job are ignored */
    uint64_t timeout; /* rank 0's SLUICE_NODE_TIMEOUT holds for every rank */
    int32_t pid;
    uint16_t port; /* the leader's UDP port (network order); 0 for other ranks */
    uint16_t naddr;
    uint32_t addr[MAX_ADDRS]; /* network order */
    char host_id[SLUICE_HOST_ID_LEN + 1];
    char host[SLUICE_HOST_NAME_MAX + 1];
};

struct beat {
    uint32_t magic;
    uint32_t node; /* the sender's node index */
    uint64_t token;
    uint32_t bye; /* its node leaves: no loss is reported for it from now on */
};

static struct {
    struct member *all;  /* by rank */
    int size, nodes, me; /* me: this leader's node index */
    int *node_of;        /* rank -> node index (nodes numbered by their lowest rank) */
    int *leader;         /* node -> its lowest rank */
    long *heard_ms;      /* node -> when last heard from; 0: never */
    bool *left;          /* node -> said bye */
    long interval_ms, timeout_ms;
    int fd, owner_pid;
    int wake_fd;        /* eventfd: leave() ends the watch's 100 ms poll at once */
    int rank, self_pid; /* this process's rank and pid, for its finalize mark */
    atomic_bool stop;
    pthread_t thread;
    bool running;
} W = {.fd = -1, .wake_fd = -1};

static long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* This host's IPv4 addresses other than loopback, up to MAX_ADDRS. */
static uint16_t my_addrs(uint32_t *out)
{
    struct ifaddrs *list = NULL, *i;
    uint16_t n = 0;
    if (getifaddrs(&list) != 0)
        return 0;
    for (i = list; i && n < MAX_ADDRS; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_UP) &&
            !(i->ifa_flags & IFF_LOOPBACK))
            out[n++] = ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr.s_addr;
    freeifaddrs(list);
    return n;
}

/* A UDP socket on every address, any port; its port (network order) in *port. -1 if none. */
static int open_socket(uint16_t *port)
{
    int fd = (int)syscall(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t len = sizeof a;
    if (fd < 0)
        return -1;
    if (syscall(SYS_bind, fd, &a, sizeof a) != 0 || syscall(SYS_getsockname, fd, &a, &len) != 0) {
        syscall(SYS_close, fd);
        return -1;
    }
    *port = a.sin_port;
    return fd;
}

static void send_beats(uint32_t bye)
{
    struct beat b = {.magic = MAGIC, .node = (uint32_t)W.me, .token = W.all[0].token, .bye = bye};
    for (int n = 0; n < W.nodes; n++) {
        const struct member *m = &W.all[W.leader[n]];
        if (n == W.me || W.left[n])
            continue;
        for (int k = 0; k < m->naddr; k++) {
            struct sockaddr_in to = {
                .sin_family = AF_INET, .sin_port = m->port, .sin_addr.s_addr = m->addr[k]};
            syscall(SYS_sendto, W.fd, &b, sizeof b, MSG_DONTWAIT | MSG_NOSIGNAL, &to, sizeof to);
        }
    }
}

static void read_beats(void)
{
    struct beat b;
    while (syscall(SYS_recvfrom, W.fd, &b, sizeof b, MSG_DONTWAIT, NULL, NULL) == (long)sizeof b)
        if (b.magic == MAGIC && b.token == W.all[0].token && b.node < (uint32_t)W.nodes) {
            W.heard_ms[b.node] = now_ms();
            if (b.bye)
                W.left[b.node] = true;
        }
}

/* "node node2 (ranks 2,5)" for every lost node, into buf. */
static void name_lost(const bool *lost, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int n = 0; n < W.nodes && at < len; n++) {
        if (!lost[n])
            continue;
        at += (size_t)snprintf(buf + at, len - at, "%snode %s (ranks ", at ? ", " : "",
                               W.all[W.leader[n]].host);
        const char *sep = "";
        for (int r = 0; r < W.size && at < len; r++)
            if (W.node_of[r] == n) {
                at += (size_t)snprintf(buf + at, len - at, "%s%d", sep, r);
                sep = ",";
            }
        if (at < len)
            at += (size_t)snprintf(buf + at, len - at, ")");
    }
}

static void *abort_main(void *arg)
{
    (void)arg;
    sluice_fd_guard_thread_enter();
    sluice_node_report_aborting(); /* this line says what happened, not a rank's death */
    PMPI_Abort(MPI_COMM_WORLD, 1); /* the launcher ends every rank; may never return (cut off) */
    return NULL;
}

/* Ends this node's ranks: the job did not end although a node was lost long ago. */
static void end_my_node(void)
{
    for (int r = 0; r < W.size; r++)
        if (W.node_of[r] == W.me && W.all[r].pid != W.owner_pid)
            syscall(SYS_kill, W.all[r].pid, SIGKILL);
    syscall(SYS_kill, W.owner_pid, SIGKILL);
}

/* Called once a node is lost in this leader's view: the lowest node still heard says so and
 * aborts the job. Returns when this node's ranks must end if the job still runs. */
static long on_loss(const bool *lost, long silent_ms)
{
    int reporter = -1;
    for (int n = 0; n < W.nodes && reporter < 0; n++)
        if (!lost[n] && !W.left[n])
            reporter = n;
    if (reporter == W.me) {
        char names[NAMES_MAX];
        name_lost(lost, names, sizeof names);
        sluice_log_error(
            "%s lost: nothing heard from it for %.1f s (SLUICE_NODE_TIMEOUT=%ld); ending the job", names,
            silent_ms / 1000.0, W.timeout_ms / 1000);
        sluice_launcher_drain_output();
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &a, abort_main, NULL) != 0)
            end_my_node();
        pthread_attr_destroy(&a);
    }
    return now_ms() + W.timeout_ms;
}

/* Node n never answered since the watch started: datagrams between the nodes may be filtered
 * (a firewall that lets MPI's TCP through). It is not watched (a job is never ended because UDP
 * is blocked); the first such node gets one line. Returns true once the line was printed. */
static bool never_heard(int n, bool warned)
{
    W.left[n] = true;
    if (!warned)
        sluice_log_warn("no datagram from node %s's sluice in %ld s (is UDP between the nodes filtered?): "
                        "if it is lost, it will not be named",
                        W.all[W.leader[n]].host, W.timeout_ms / 1000);
    return true;
}

static void *watch_main(void *arg)
{
    (void)arg;
    sluice_helper_thread_enter("sluice-nodes");
    bool *lost = calloc((size_t)W.nodes, sizeof *lost);
    long next_beat = 0, end_at = 0, start = now_ms();
    bool warned = false;
    while (lost && !atomic_load(&W.stop)) {
        long now = now_ms();
        if (now >= next_beat) {
            send_beats(0);
            next_beat = now + W.interval_ms;
        }
        struct pollfd p[2] = {{.fd = W.fd, .events = POLLIN}, {.fd = W.wake_fd, .events = POLLIN}};
        struct timespec t = {.tv_sec = 0, .tv_nsec = 100 * 1000000L};
        syscall(SYS_ppoll, p, W.wake_fd >= 0 ? 2 : 1, &t, NULL, 8);
        read_beats();
        now = now_ms();
        if (end_at) {
            if (now >= end_at)
                end_my_node();
            continue;
        }
        long silent = 0;
        bool any = false;
        for (int n = 0; n < W.nodes; n++) {
            if (n != W.me && !W.left[n] && W.heard_ms[n] == 0 && now - start >= W.timeout_ms)
                warned = never_heard(n, warned);
            lost[n] = n != W.me && !W.left[n] && W.heard_ms[n] != 0 && now - W.heard_ms[n] >= W.timeout_ms;
            if (lost[n] && now - W.heard_ms[n] > silent)
                silent = now - W.heard_ms[n];
            any |= lost[n];
        }
        if (any)
            end_at = on_loss(lost, silent);
    }
    free(lost);
    sluice_helper_thread_leave();
    return NULL;
}

/* At the first finalize hook of this process: its node leaves; the others stop watching it.
 * The watch is woken rather than left to its poll's timeout: the join would otherwise add up to
 * 100 ms (13.5 ms measured) to the leader's MPI_Finalize, after its checkpoint was durable. */
static void leave(void)
{
    if (!W.running || (int)getpid() != W.owner_pid)
        return;
    atomic_store(&W.stop, true);
    if (W.wake_fd >= 0) {
        uint64_t one = 1;
        syscall(SYS_write, W.wake_fd, &one, sizeof one);
    }
    pthread_join(W.thread, NULL);
    W.running = false;
    if (W.wake_fd >= 0)
        syscall(SYS_close, W.wake_fd);
    W.wake_fd = -1;
    send_beats(1);
}

/* Node indices by lowest rank; leaders. Returns false if out of memory. */
static bool map_nodes(void)
{
    W.node_of = malloc((size_t)W.size * sizeof *W.node_of);
    W.leader = malloc((size_t)W.size * sizeof *W.leader);
    if (!W.node_of || !W.leader)
        return false;
    W.nodes = 0;
    for (int r = 0; r < W.size; r++) {
        int n = 0;
        while (n < W.nodes && strcmp(W.all[W.leader[n]].host_id, W.all[r].host_id) != 0)
            n++;
        if (n == W.nodes)
            W.leader[W.nodes++] = r;
        W.node_of[r] = n;
    }
    return true;
}

/* A node leader names its node, its ranks and their processes to sluice --watch-nodes. */
static void report_node(int rank)
{
    int n = 0, *ranks = malloc((size_t)W.size * sizeof *ranks), *pids = malloc((size_t)W.size * sizeof *pids);
    for (int r = 0; ranks && pids && r < W.size; r++)
        if (W.node_of[r] == W.node_of[rank]) {
            ranks[n] = r;
            pids[n++] = W.all[r].pid;
        }
    if (ranks && pids)
        sluice_node_report_start(W.all[rank].host, ranks, pids, n);
    free(ranks);
    free(pids);
}

/* Every rank at its MPI_Finalize, under sluice --watch-nodes: the node's watcher must not take
 * this rank's end for a death. */
static void mark_finalized(void)
{
    if ((int)getpid() == (int)W.self_pid)
        sluice_node_report_finalized(W.rank);
}

/* Nothing to watch from this process: what start() gathered goes. */
static void forget(void)
{
    if (W.fd >= 0)
        syscall(SYS_close, W.fd);
    W.fd = -1;
    free(W.all);
    free(W.node_of);
    free(W.leader);
    W.all = NULL;
    W.node_of = W.leader = NULL;
}

/* Collective, once, when sluice's communicator is made: every rank takes the same branches (all
 * decide from the same gathered records). */
static void start(MPI_Comm comm)
{
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &W.size);
    W.self_pid = (int)getpid();
    struct member mine = {.timeout = sluice_config.NODE_TIMEOUT, .pid = (int32_t)getpid()};
    sluice_host_id(mine.host_id);
    sluice_host_name(mine.host);
    if (getrandom(&mine.token, sizeof mine.token, GRND_NONBLOCK) != (ssize_t)sizeof mine.token)
        mine.token = (uint64_t)now_ms() ^ ((uint64_t)getpid() << 32);
    W.all = calloc((size_t)W.size, sizeof *W.all);
    int ok = W.all != NULL;
    sluice_quiet_allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok)
        return;
    sluice_quiet_allgather(&mine, sizeof mine, MPI_BYTE, W.all, sizeof mine, MPI_BYTE, comm);
    ok = map_nodes();
    if (ok && W.nodes > 1 && W.leader[W.node_of[rank]] == rank)
        report_node(rank);
    if (ok && W.nodes > 1 && sluice_node_report_on()) {
        W.rank = rank;
        sluice_mpi_on_finalize(mark_finalized);
    }
    bool on = W.all[0].timeout > 0 && W.nodes > 1;
    if (on && ok && W.leader[W.node_of[rank]] == rank) {
        mine.naddr = my_addrs(mine.addr);
        W.fd = mine.naddr ? open_socket(&mine.port) : -1;
        ok = W.fd >= 0;
    }
    sluice_quiet_allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!on || !ok) {
        if (on && rank == 0)
            sluice_log_warn("a lost node will not be named: a node leader has no IPv4 address or UDP socket");
        forget();
        return;
    }
    sluice_quiet_allgather(&mine, sizeof mine, MPI_BYTE, W.all, sizeof mine, MPI_BYTE, comm);
    if (W.fd < 0) {
        forget(); /* not a leader: the leader speaks for the node */
        return;
    }
    W.me = W.node_of[rank];
    W.owner_pid = (int)getpid();
    W.timeout_ms = (long)W.all[0].timeout * 1000;
    W.interval_ms = W.timeout_ms / 5;
    W.heard_ms = calloc((size_t)W.nodes, sizeof *W.heard_ms);
    W.left = calloc((size_t)W.nodes, sizeof *W.left);
    W.wake_fd = (int)syscall(SYS_eventfd2, 0, EFD_CLOEXEC | EFD_NONBLOCK); /* -1: the poll's timeout */
    if (W.heard_ms && W.left && pthread_create(&W.thread, NULL, watch_main, NULL) == 0) {
        W.running = true;
        sluice_mpi_on_finalize(leave);
    } else if (W.wake_fd >= 0) {
        syscall(SYS_close, W.wake_fd);
        W.wake_fd = -1;
    }
}

__attribute__((constructor(SLUICE_PRIO_MPI))) static void node_watch_load(void)
{
    if (sluice_launch_size() > 1)
        sluice_mpi_on_comm(start);
}
