/* SPDX-License-Identifier: MIT */
/* See node_vote.h. */
#include "mpi/node_vote.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"

#define VOTE_FILE "vote"
#define PAGE 4096
#define LOOK_MS 100 /* how often a wait looks whether the proxy still runs */

/* The shared page: per vote kind, ranks that arrived and ranks that said yes. A yes is counted
 * before its arrival, so that a rank that sees every arrival also sees every yes. */
struct vote_page {
    uint32_t arrived[2];
    uint32_t yes[2];
};

bool sluice_node_vote_applies(const struct sluice_launch *l)
{
    return l->kind == SLUICE_LAUNCHER_HYDRA && l->pmi_fd >= 0 && l->size >= 2 && l->local_size == l->size;
}

static bool proxy_gone(int pid)
{
    return pid > 0 && syscall(SYS_kill, pid, 0) != 0 && errno == ESRCH;
}

/* The job's vote page, mapped shared; NULL (with one line saying why) where it cannot be. */
static struct vote_page *map_page(const char *folder)
{
    char path[4096 + 16];
    int n = snprintf(path, sizeof path, "%s/" VOTE_FILE, folder ? folder : "");
    const char *why = NULL;
    int fd = -1;
    struct stat st;
    if (!folder || n < 0 || (size_t)n >= sizeof path)
        why = "no claims folder of the job";
    else if ((fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
                                0600)) < 0)
        why = strerror(errno);
    else if (syscall(SYS_fstat, fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
        why = "not a regular file of this user";
    /* Growing to the page never shrinks it: a rank that comes second keeps the counts. */
    else if (st.st_size < PAGE && syscall(SYS_ftruncate, fd, (off_t)PAGE) != 0)
        why = strerror(errno);
    void *p = why ? MAP_FAILED : mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (!why && p == MAP_FAILED)
        why = strerror(errno);
    if (fd >= 0)
        syscall(SYS_close, fd);
    if (why) {
        sluice_log_warn("cannot vote through %s (%s); sluice goes on as if a rank had something to commit",
                        folder ? path : "the job's claims folder", why);
        return NULL;
    }
    return p;
}

enum sluice_start_vote sluice_node_vote(enum sluice_node_vote_kind kind, const char *folder, int size,
                                        int launcher_pid, bool yes, void (*all_arrived)(void))
{
    struct vote_page *p = map_page(folder);
    if (!p)
        return SLUICE_VOTE_FAILED;
    uint32_t *arrived = &p->arrived[kind], *said = &p->yes[kind];
    if (yes)
        __atomic_add_fetch(said, 1, __ATOMIC_SEQ_CST);
    uint32_t now = __atomic_add_fetch(arrived, 1, __ATOMIC_SEQ_CST);
    /* Waiters are woken only when the vote is decided: a wake at every arrival would wake every
     * waiting rank N times (64 ranks: 2,000 wake-ups on a node's cores). */
    if (now >= (uint32_t)size || (yes && kind == SLUICE_NODE_VOTE_START))
        syscall(SYS_futex, arrived, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
    enum sluice_start_vote v = SLUICE_VOTE_SOME;
    /* A yes at the start needs no answer; anything else waits for the others. */
    bool wait = !(yes && kind == SLUICE_NODE_VOTE_START);
    for (;;) {
        uint32_t a = __atomic_load_n(arrived, __ATOMIC_SEQ_CST);
        uint32_t y = __atomic_load_n(said, __ATOMIC_SEQ_CST);
        if (!wait || (kind == SLUICE_NODE_VOTE_START && y > 0))
            break;
        if (a >= (uint32_t)size) {
            v = y > 0 ? SLUICE_VOTE_SOME : SLUICE_VOTE_NONE;
            break;
        }
        struct timespec ts = {0, LOOK_MS * 1000000L};
        if (syscall(SYS_futex, arrived, FUTEX_WAIT, a, &ts, NULL, 0) != 0 && errno == ETIMEDOUT &&
            proxy_gone(launcher_pid)) {
            sluice_log_warn("the launcher's proxy (process %d) ended while %u of %d ranks had voted; "
                            "sluice goes on as if a rank had something to commit",
                            launcher_pid, a, size);
            v = SLUICE_VOTE_FAILED;
            break;
        }
    }
    munmap(p, PAGE);
    if (v != SLUICE_VOTE_FAILED && kind == SLUICE_NODE_VOTE_EXIT && all_arrived)
        all_arrived();
    return v;
}
