/* SPDX-License-Identifier: MIT */
/* `sluice --watch-nodes LAUNCHER ARGS...` (docs/CLUSTER.md, "When a node fails"): runs the
 * launcher command (mpiexec ...) as its child and listens on a TCP port for the watchers of the
 * job's nodes (node_helper.c, node_report_wire.h). A watcher's connection that closes without
 * "end" is a node whose processes all died: one line names it and its ranks, at once. The
 * launcher's output, signals (those sent by another process; a terminal's reach the launcher
 * itself) and exit status pass through unchanged. Once the launcher ends, the wrapper waits at
 * most END_GRACE_MS for the watchers' last words (a node's death and the launcher's end come
 * within milliseconds of each other), then exits as the launcher did. */
#include "node_report_wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define END_GRACE_MS 2000
/* A launcher still running this long after a node was lost or a rank died, once every node
 * still connected has said its ranks ended, is ended by the wrapper (SIGTERM, then SIGKILL
 * KILL_AFTER_MS later): Open MPI's mpirun, having killed every process of the job, was seen
 * waiting for a lost node's daemon without end. hydra ends such a job within 3 s. */
#define LAUNCHER_GRACE_MS 10000
#define KILL_AFTER_MS 2000
#define MAX_CONNS 4096

struct conn {
    int fd;
    size_t len;
    int named, ended; /* said its first line; said "end" */
    char buf[NODE_REPORT_LINE_MAX];
};

static pid_t launcher;
static char token[33];

static long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Signals another process sends the wrapper go to the launcher. */
static void forward(int sig, siginfo_t *info, void *ctx)
{
    (void)ctx;
    if (launcher > 0 && info->si_code <= 0)
        kill(launcher, sig);
}

/* "a,b,c": this host's IPv4 addresses but loopback (loopback alone if none), into out. */
static void my_addrs(char *out, size_t len)
{
    struct ifaddrs *list = NULL;
    size_t at = 0;
    out[0] = '\0';
    if (getifaddrs(&list) == 0)
        for (struct ifaddrs *i = list; i; i = i->ifa_next) {
            char a[INET_ADDRSTRLEN];
            if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
                (i->ifa_flags & IFF_LOOPBACK) ||
                !inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, a, sizeof a) ||
                at + strlen(a) + 2 > len)
                continue;
            at += (size_t)snprintf(out + at, len - at, "%s%s", at ? "," : "", a);
        }
    freeifaddrs(list);
    if (!at)
        snprintf(out, len, "127.0.0.1");
}

/* The listening socket; SLUICE_NODE_REPORT names it for the ranks. -1 (and a line) on failure. */
static int listen_and_publish(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t alen = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 1024) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &alen) != 0) {
        fprintf(stderr, "sluice: --watch-nodes: cannot listen on a TCP port: %s\n", strerror(errno));
        return -1;
    }
    unsigned char r[16];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
        fprintf(stderr, "sluice: --watch-nodes: no random token: %s\n", strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < sizeof r; i++)
        snprintf(token + 2 * i, 3, "%02x", r[i]);
    char addrs[1024], self[PATH_MAX], value[sizeof addrs + PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "sluice: --watch-nodes: cannot find its own program: %s\n", strerror(errno));
        return -1;
    }
    self[n] = '\0';
    my_addrs(addrs, sizeof addrs);
    snprintf(value, sizeof value, "%s:%u:%s:%s", addrs, ntohs(a.sin_port), token, self);
    setenv("SLUICE_NODE_REPORT", value, 1);
    return fd;
}

/* The line for a node whose watcher's connection closed without "end". */
static void report_lost(const struct conn *c)
{
    char host[256] = "?", ranks[NODE_REPORT_LINE_MAX] = "?";
    sscanf(c->buf + strlen(NODE_REPORT_HELLO) + 1 + strlen(token) + 1, "%255s %8191s", host, ranks);
    fprintf(stderr,
            "sluice: node %s (ranks %s) lost: its processes all ended at once, sluice's watcher there too; "
            "the launcher ends the job\n",
            host, ranks);
}

/* The first rank of the job that ended before its MPI_Finalize while its node's watcher lived
 * (killed alone, the OOM killer's pick): the launcher then ends the job and every other rank,
 * whose ends are reported too. The earliest reported within DEATH_SETTLE_MS of the first is
 * named, unless a node was lost or a rank aborted the job meanwhile (their lines say what
 * happened; the deaths follow). */
#define DEATH_SETTLE_MS 300
/* Ranks a watcher found ended in one wake-up carry one time: which of them ended first is not
 * known (a watcher scheduled late sees the killed rank and those the launcher killed after it
 * together), and all of them are named. */
#define DEATH_TIES 8
static struct {
    int n; /* ranks tied at the earliest time */
    int rank[DEATH_TIES], pid[DEATH_TIES];
    char host[DEATH_TIES][256];
    long at_ms;    /* the watcher's wall clock at the death */
    long print_by; /* when to print (monotonic); 0: nothing pending */
    int printed;
} first_death;
static int node_lost;
static int job_aborted; /* a rank called MPI_Abort: MPI's and the caller's lines say why */

static void host_of(const struct conn *c, char *host, size_t len)
{
    char h[256] = "?";
    sscanf(c->buf + strlen(NODE_REPORT_HELLO) + 1 + strlen(token) + 1, "%255s", h);
    snprintf(host, len, "%s", h);
}

/* "RANK PID MS" from c's watcher. */
static void note_death(const struct conn *c, const char *words)
{
    int rank, pid;
    long at;
    if (first_death.printed || sscanf(words, "%d %d %ld", &rank, &pid, &at) != 3)
        return;
    if (first_death.print_by && at > first_death.at_ms)
        return;
    if (!first_death.print_by)
        first_death.print_by = now_ms() + DEATH_SETTLE_MS;
    if (!first_death.n || at < first_death.at_ms)
        first_death.n = 0; /* earlier than every one noted: it alone so far */
    first_death.at_ms = at;
    if (first_death.n == DEATH_TIES)
        return;
    first_death.rank[first_death.n] = rank;
    first_death.pid[first_death.n] = pid;
    host_of(c, first_death.host[first_death.n], sizeof first_death.host[0]);
    first_death.n++;
}

/* Prints the first death's line once it is due (or `now` when the wrapper ends). */
static void report_death(int now)
{
    if (!first_death.print_by || first_death.printed || (!now && now_ms() < first_death.print_by))
        return;
    first_death.printed = 1;
    if (node_lost || job_aborted)
        return;
    if (first_death.n == 1) {
        fprintf(stderr,
                "sluice: rank %d (pid %d on node %s) ended before MPI_Finalize, the job's first rank to do "
                "so while its node lived on; the launcher ends the job\n",
                first_death.rank[0], first_death.pid[0], first_death.host[0]);
        return;
    }
    char who[DEATH_TIES * 300] = "";
    for (int i = 0; i < first_death.n; i++)
        snprintf(who + strlen(who), sizeof who - strlen(who), "%srank %d (pid %d on node %s)",
                 i == 0                   ? ""
                 : i + 1 == first_death.n ? " and "
                                          : ", ",
                 first_death.rank[i], first_death.pid[i], first_death.host[i]);
    fprintf(stderr,
            "sluice: %s ended before MPI_Finalize at the same moment as sluice's watcher saw them, the job's "
            "first ranks to do so while their nodes lived on (which of them first is not known); the "
            "launcher ends the job\n",
            who);
}

/* Reads what c sent. Returns -1 once the connection is done with (closed, or not a watcher of
 * this wrapper's job): the caller closes it. */
static int read_conn(struct conn *c)
{
    for (;;) {
        char *nl;
        while ((nl = memchr(c->buf + c->named, '\n', c->len - (size_t)c->named)) != NULL) {
            if (!c->named) {
                *nl = '\0';
                size_t h = strlen(NODE_REPORT_HELLO);
                if (strncmp(c->buf, NODE_REPORT_HELLO " ", h + 1) != 0 ||
                    strncmp(c->buf + h + 1, token, 32) != 0)
                    return -1;                     /* not ours */
                c->named = (int)(nl - c->buf) + 1; /* the first line stays at the start of buf */
            } else {
                char *line = c->buf + c->named;
                *nl = '\0';
                if (strcmp(line, NODE_REPORT_END) == 0)
                    c->ended = 1;
                else if (strncmp(line, NODE_REPORT_DIED " ", strlen(NODE_REPORT_DIED) + 1) == 0)
                    note_death(c, line + strlen(NODE_REPORT_DIED) + 1);
                else if (strncmp(line, NODE_REPORT_ABORTED " ", strlen(NODE_REPORT_ABORTED) + 1) == 0)
                    job_aborted = 1;
                size_t rest = c->len - (size_t)(nl + 1 - c->buf); /* later lines are dropped once read */
                memmove(line, nl + 1, rest);
                c->len = (size_t)c->named + rest;
            }
        }
        if (c->len == sizeof c->buf)
            return -1;
        ssize_t r = recv(c->fd, c->buf + c->len, sizeof c->buf - c->len, MSG_DONTWAIT);
        if (r > 0) {
            c->len += (size_t)r;
            continue;
        }
        if (r < 0 && (errno == EAGAIN || errno == EINTR))
            return 0;
        if (c->named && !c->ended) {
            report_lost(c);
            node_lost = 1;
        }
        return -1;
    }
}

/* After a loss, once every connected node has said its ranks ended: the launcher gets
 * LAUNCHER_GRACE_MS to end by itself (*stop_at: when), then one line, SIGTERM, and SIGKILL
 * KILL_AFTER_MS later. Nodes that never connected, or whose link is cut, are not waited for. */
static void bound_launcher(struct conn **conns, int n, long *stop_at, long *killed_at)
{
    if (!node_lost && !first_death.print_by)
        return;
    int open = 0;
    for (int i = 0; i < n; i++)
        open += conns[i]->named && !conns[i]->ended;
    long now = now_ms();
    if (!*stop_at) {
        if (open == 0)
            *stop_at = now + LAUNCHER_GRACE_MS;
        return;
    }
    if (now < *stop_at)
        return;
    if (!*killed_at) {
        fprintf(stderr,
                "sluice: every rank of the job has ended, but the launcher (pid %d) still runs %d s "
                "after; ending it\n",
                (int)launcher, LAUNCHER_GRACE_MS / 1000);
        kill(launcher, SIGTERM);
        *killed_at = now;
    } else if (now - *killed_at >= KILL_AFTER_MS && *killed_at > 0) {
        kill(launcher, SIGKILL);
        *killed_at = -1; /* once */
    }
}

static pid_t start_launcher(char **cmd)
{
    pid_t pid = fork();
    if (pid == 0) {
        execvp(cmd[0], cmd);
        int e = errno;
        fprintf(stderr, "sluice: cannot run %s: %s\n", cmd[0], strerror(e));
        _exit(e == ENOENT ? 127 : 126);
    }
    if (pid < 0)
        fprintf(stderr, "sluice: --watch-nodes: cannot start %s: %s\n", cmd[0], strerror(errno));
    return pid;
}

/* The launcher's wait status as this process's own end. */
static int exit_as(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    int sig = WTERMSIG(status);
    signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
    return 128 + sig;
}

int job_watch_main(char **cmd)
{
    int lfd = listen_and_publish();
    if (lfd < 0)
        return 2;
    launcher = start_launcher(cmd);
    if (launcher < 0)
        return 126;
    static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
    struct sigaction sa = {.sa_sigaction = forward, .sa_flags = SA_SIGINFO | SA_RESTART};
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
        sigaction(forwarded[i], &sa, NULL);
    int pidfd = (int)syscall(SYS_pidfd_open, launcher, 0); /* -1: polled every 100 ms */

    static struct pollfd p[MAX_CONNS + 2];
    static struct conn *conns[MAX_CONNS];
    int n = 0, status = 0, done = 0;
    long end_by = 0, stop_at = 0, killed_at = 0;
    while (!done || (n > 0 && now_ms() < end_by)) {
        p[0] = (struct pollfd){.fd = done ? -1 : lfd, .events = POLLIN};
        p[1] = (struct pollfd){.fd = done ? -1 : pidfd, .events = POLLIN};
        for (int i = 0; i < n; i++)
            p[i + 2] = (struct pollfd){.fd = conns[i]->fd, .events = POLLIN};
        int timeout = done ? (int)(end_by - now_ms()) : pidfd < 0 || stop_at ? 100 : -1;
        if (first_death.print_by && !first_death.printed) {
            int due = (int)(first_death.print_by - now_ms());
            timeout = timeout < 0 || due < timeout ? (due > 0 ? due : 0) : timeout;
        }
        if (poll(p, (nfds_t)n + 2, timeout < 0 && done ? 0 : timeout) < 0 && errno != EINTR)
            break;
        for (int i = n - 1; i >= 0; i--)
            if (p[i + 2].revents && read_conn(conns[i]) < 0) {
                close(conns[i]->fd);
                free(conns[i]);
                conns[i] = conns[--n];
            }
        report_death(0);
        if (!done)
            bound_launcher(conns, n, &stop_at, &killed_at);
        int fd;
        while (!done && (fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
            struct conn *c = n < MAX_CONNS ? calloc(1, sizeof *c) : NULL;
            if (!c) {
                close(fd);
                continue;
            }
            c->fd = fd;
            conns[n++] = c;
        }
        if (!done && waitpid(launcher, &status, WNOHANG) == launcher) {
            done = 1;
            end_by = now_ms() + END_GRACE_MS;
        }
        for (int i = n - 1; done && i >= 0; i--)
            if (conns[i]->ended || !conns[i]->named) { /* said all it had to say */
                close(conns[i]->fd);
                free(conns[i]);
                conns[i] = conns[--n];
            }
    }
    report_death(1);
    return exit_as(status);
}
