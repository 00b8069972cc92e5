/* SPDX-License-Identifier: MIT */
/* See pmi1_wire.h. */
#include "mpi/pmi1_wire.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t); /* vDSO: async-signal-safe */
    return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int sluice_pmi1_send(int fd, const char *buf, size_t len)
{
    size_t off = 0;
    while (off < len) {
        long n = syscall(SYS_sendto, fd, buf + off, len - off, MSG_NOSIGNAL, NULL, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        off += (size_t)n;
    }
    return 0;
}

/* Keeps what fits of an answer's piece in ans. */
static void keep(char *ans, size_t cap, size_t *used, const char *p, size_t n)
{
    if (!ans || cap == 0)
        return;
    size_t room = cap - 1 - *used;
    size_t take = n < room ? n : room;
    memcpy(ans + *used, p, take);
    *used += take;
    ans[*used] = '\0';
}

int sluice_pmi1_call(int fd, const char *req, char *ans, size_t cap, int wait_ms)
{
    if (ans && cap)
        ans[0] = '\0';
    if (sluice_pmi1_send(fd, req, strlen(req)) != 0)
        return -1;
    return sluice_pmi1_answer(fd, ans, cap, wait_ms);
}

int sluice_pmi1_answer(int fd, char *ans, size_t cap, int wait_ms)
{
    size_t used = 0;
    if (ans && cap)
        ans[0] = '\0';
    long deadline = now_ms() + wait_ms;
    for (;;) {
        /* What has arrived, up to the end of the answer's line: all of it is the answer. */
        char buf[256];
        long n = syscall(SYS_recvfrom, fd, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT, NULL, 0);
        if (n > 0) {
            const char *nl = memchr(buf, '\n', (size_t)n);
            size_t take = nl ? (size_t)(nl - buf) + 1 : (size_t)n;
            if (syscall(SYS_recvfrom, fd, buf, take, MSG_DONTWAIT, NULL, 0) != (long)take)
                return -1;
            keep(ans, cap, &used, buf, nl ? take - 1 : take);
            if (nl)
                return 0;
            continue;
        }
        if (n == 0 || (errno != EAGAIN && errno != EINTR))
            return -1;
        long left = wait_ms < 0 ? 60000 : deadline - now_ms();
        if (left <= 0)
            return -2;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        struct timespec ts = {.tv_sec = left / 1000, .tv_nsec = (left % 1000) * 1000000};
        syscall(SYS_ppoll, &p, 1, &ts, NULL, 0);
    }
}
