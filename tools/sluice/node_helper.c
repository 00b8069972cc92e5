/* SPDX-License-Identifier: MIT */
/* `sluice --node-helper VALUE HOST RANKS PIDS FOLDER`: a node's watcher for `sluice --watch-nodes`
 * (node_report_wire.h), started by the node's leader rank (runtime/mpi/node_report.c) with no
 * environment and /dev/null for its streams. It connects to the wrapper and names its node, then
 * forks away from the rank (exit status 0 tells the rank it is in place, 3 that the wrapper could
 * not be reached) into a session of its own, so that the launcher's kill of the node's ranks
 * (hydra kills each rank's process group) does not reach it. It says "end" once every rank of
 * the node has ended and exits; it also exits when the wrapper goes. Only the death of every
 * process of its node (itself included) closes its connection without "end". A rank whose
 * process ends without the mark of its MPI_Finalize in FOLDER (`fin.<rank>`, "-": none) is told
 * to the wrapper as "died RANK PID MS" ("aborted ..." if it marked an MPI_Abort: `abort.<rank>`);
 * ranks found ended in one wake-up, and ranks being killed then, carry one time. */
#include "node_report_wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_ADDRS 16
#define MAX_PIDS 4096
#define CONNECT_MS 3000

static long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Connects to the first of the addresses to answer (all tried at once, CONNECT_MS at most). */
static int connect_any(char *addrs, int port)
{
    struct pollfd p[MAX_ADDRS];
    int n = 0, won = -1;
    for (char *a = strtok(addrs, ","); a && n < MAX_ADDRS; a = strtok(NULL, ",")) {
        struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0 || inet_pton(AF_INET, a, &to.sin_addr) != 1 ||
            (connect(fd, (struct sockaddr *)&to, sizeof to) != 0 && errno != EINPROGRESS)) {
            if (fd >= 0)
                close(fd);
            continue;
        }
        p[n++] = (struct pollfd){.fd = fd, .events = POLLOUT};
    }
    for (long end = now_ms() + CONNECT_MS; won < 0 && now_ms() < end;) {
        if (poll(p, (nfds_t)n, (int)(end - now_ms())) <= 0)
            continue;
        for (int i = 0; i < n && won < 0; i++) {
            int err = 1;
            socklen_t len = sizeof err;
            if (p[i].fd < 0 || !p[i].revents)
                continue;
            if (getsockopt(p[i].fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)
                won = p[i].fd;
            else {
                close(p[i].fd); /* refused, unreachable: poll no more */
                p[i].fd = -1;
            }
        }
    }
    for (int i = 0; i < n; i++)
        if (p[i].fd >= 0 && p[i].fd != won)
            close(p[i].fd);
    return won;
}

static int send_all(int fd, const char *s)
{
    for (size_t len = strlen(s); len > 0;) {
        ssize_t w = send(fd, s, len, MSG_NOSIGNAL);
        if (w < 0 && errno == EAGAIN) {
            poll(&(struct pollfd){.fd = fd, .events = POLLOUT}, 1, 1000);
            continue;
        }
        if (w <= 0)
            return -1;
        s += w;
        len -= (size_t)w;
    }
    return 0;
}

static long wall_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Whether folder holds what.<rank> (no if unsure). */
static int marked(const char *folder, const char *what, int rank)
{
    char path[4096 + 32];
    return snprintf(path, sizeof path, "%s/%s.%d", folder, what, rank) < (int)sizeof path &&
           access(path, F_OK) == 0;
}

/* Rank `rank` (process pid) has ended, seen at wall time at_ms: a death unless it marked its
 * MPI_Finalize in folder, the job's abort if it marked that. */
static void rank_ended(int sock, const char *folder, int rank, int pid, long at_ms)
{
    char line[96];
    if (strcmp(folder, "-") == 0 || marked(folder, "fin", rank))
        return;
    snprintf(line, sizeof line, "%s %d %d %ld\n",
             marked(folder, "abort", rank) ? NODE_REPORT_ABORTED : NODE_REPORT_DIED, rank, pid, at_ms);
    send_all(sock, line);
}

/* Whether process pid is being killed: SIGKILL pending (shared or its own), which stays so
 * while it runs its exit. A killed rank with much memory takes milliseconds to end (its address
 * space torn down first), and the launcher, told by another route, was seen to kill the node's
 * other ranks in that time: the watcher then found a rank the launcher killed ended while the
 * rank killed first still ran its exit, and the wrapper named the wrong one. (Not the state or
 * PF_EXITING: a main thread that called pthread_exit shows both while its process lives on.) */
static bool being_killed(int pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "re");
    bool killed = false;
    while (f && !killed && fgets(line, sizeof line, f)) {
        unsigned long long mask;
        if ((strncmp(line, "SigPnd:", 7) == 0 || strncmp(line, "ShdPnd:", 7) == 0) &&
            sscanf(line + 7, "%llx", &mask) == 1)
            killed = (mask & (1ull << (SIGKILL - 1))) != 0;
    }
    if (f)
        fclose(f);
    return killed;
}

/* Waits until every process in p[1..n] (pidfds; with by_pid, pids[] probed with kill every
 * 200 ms where pidfd_open is missing) has ended, or the wrapper's connection p[0] closes; each
 * end goes to rank_ended. Returns 0 when the ranks ended. */
static int wait_ranks(struct pollfd *p, const int *ranks, const int *pids, int n, int by_pid,
                      const char *folder)
{
    for (int left = n; left > 0;) {
        if (poll(p, by_pid ? 1 : (nfds_t)n + 1, by_pid ? 200 : -1) < 0 && errno != EINTR)
            return -1;
        /* One time for every end this wake-up finds: the watcher cannot tell their order (the
         * killed rank and those the launcher killed next, seen together by a watcher scheduled
         * late), and times read one by one would order them by the loop, not by their deaths. */
        long woke_ms = wall_ms();
        char junk[64];
        ssize_t r = p[0].revents ? recv(p[0].fd, junk, sizeof junk, MSG_DONTWAIT) : 1;
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
            return -1; /* the wrapper is gone */
        int ended = 0;
        for (int pass = 0; pass < 2; pass++)
            for (int i = 1; i <= n; i++) {
                if (p[i].fd < 0)
                    continue;
                bool gone = by_pid ? kill(pids[i - 1], 0) != 0 && errno == ESRCH : p[i].revents != 0;
                /* Second pass, where a rank ended: a rank being killed ends with it. */
                if (!(pass == 0 ? gone : ended > 0 && being_killed(pids[i - 1])))
                    continue;
                if (!by_pid)
                    close(p[i].fd);
                p[i].fd = -1;
                left--;
                ended++;
                rank_ended(p[0].fd, folder, ranks[i - 1], pids[i - 1], woke_ms);
            }
    }
    return 0;
}

int node_helper_main(int argc, char **argv)
{
    if (argc != 5)
        return 2;
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL); /* the rank blocked every signal around the start */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    if (chdir("/") != 0)
        return 3;
    /* VALUE: ADDRESSES:PORT:TOKEN:LAUNCHER */
    char *addrs = argv[0], *port = strchr(addrs, ':'), *token = port ? strchr(port + 1, ':') : NULL;
    char *end = token ? strchr(token + 1, ':') : NULL;
    if (!end)
        return 2;
    *port++ = *token++ = *end = '\0';

    static struct pollfd p[MAX_PIDS + 1];
    static int pids[MAX_PIDS], ranks[MAX_PIDS], all_ranks[MAX_PIDS];
    int n = 0, by_pid = 0, nranks = 0, k = 0;
    char rank_list[NODE_REPORT_LINE_MAX];
    snprintf(rank_list, sizeof rank_list, "%s", argv[2]); /* argv[2] goes to the wrapper whole */
    for (char *s = strtok(rank_list, ","); s && nranks < MAX_PIDS; s = strtok(NULL, ","))
        all_ranks[nranks++] = atoi(s);
    for (char *s = strtok(argv[3], ","); s && k < nranks; s = strtok(NULL, ","), k++) {
        pids[n] = atoi(s); /* the pids come in the ranks' order */
        ranks[n] = all_ranks[k];
        long fd = syscall(SYS_pidfd_open, pids[n], 0);
        if (fd < 0 && errno == ESRCH)
            continue; /* ended already (before the watcher: not known to be a death) */
        by_pid |= fd < 0;
        p[++n] = (struct pollfd){.fd = (int)fd, .events = POLLIN};
    }
    for (int i = 1; by_pid && i <= n; i++)
        if (p[i].fd < 0)
            p[i].fd = 0; /* not polled, but alive: watched with kill(pid, 0) */

    int sock = connect_any(addrs, atoi(port));
    char hello[NODE_REPORT_LINE_MAX];
    int len = snprintf(hello, sizeof hello, "%s %s %s %s\n", NODE_REPORT_HELLO, token, argv[1], argv[2]);
    if (sock < 0 || len < 0 || (size_t)len >= sizeof hello || send_all(sock, hello) != 0)
        return 3;
    pid_t child = fork();
    if (child != 0)
        _exit(child < 0 ? 3 : 0);
    setsid();
    p[0] = (struct pollfd){.fd = sock, .events = POLLIN};
    if (wait_ranks(p, ranks, pids, n, by_pid, argv[4]) == 0)
        send_all(sock, NODE_REPORT_END "\n");
    return 0;
}
