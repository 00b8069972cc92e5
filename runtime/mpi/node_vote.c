/* SPDX-License-Identifier: MIT */
/* See node_vote.h. */
#include "mpi/node_vote.h"

#include <dirent.h>
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

#include "common/fd_guard.h"
#include "common/log.h"
#include "common/pid_alive.h"
#include "common/private_dir.h"
#include "common/real.h"
#include "mpi/claim.h"

#define PAGE 4096
#define LOOK_MS 100 /* how often a wait looks whether the proxy still runs */

/* One vote's shared page: ranks that arrived and ranks that said yes. A yes is counted before
 * its arrival, so that a rank that sees every arrival also sees every yes. */
struct vote_page {
    uint32_t arrived;
    uint32_t yes;
};

bool sluice_node_vote_applies(const struct sluice_launch *l)
{
    return l->kind == SLUICE_LAUNCHER_HYDRA && l->pmi_fd >= 0 && l->size >= 2 && l->local_size == l->size;
}

static bool proxy_gone(int pid)
{
    return pid > 0 && !sluice_pid_running(pid, 0);
}

/* The vote's file: /dev/shm/sluice-<uid>.votes/<start|exit>-<job key>. A fixed place on the
 * node, not under TMPDIR, which a job may set per rank (every rank must find the same file), and
 * beside the stage folder, not in it (its readers list it). */
static int vote_path(enum sluice_node_vote_kind kind, const struct sluice_launch *l, char *path, size_t cap,
                     char *why, size_t whylen)
{
    char key[128];
    if (sluice_claim_job_key(l, key, sizeof key) != 0) {
        snprintf(why, whylen, "the job cannot be named");
        return -1;
    }
    int n = snprintf(path, cap, "/dev/shm/sluice-%u.votes", (unsigned)getuid());
    if (n < 0 || (size_t)n >= cap)
        return -1;
    /* Checked as it is; made (with its parents) only the first time. */
    int rc = sluice_private_dir(path, 0, why, whylen);
    if (rc == -ENOENT)
        rc = sluice_private_dir(path, 1, why, whylen);
    if (rc != 0)
        return -1;
    n = snprintf(path + n, cap - (size_t)n, "/%s-%s", kind == SLUICE_NODE_VOTE_START ? "start" : "exit", key);
    if (n < 0 || strlen(path) + 1 >= cap) {
        snprintf(why, whylen, "its path is too long");
        return -1;
    }
    return 0;
}

/* Removes the pages of jobs that are over (killed during a vote: the last rank never came) from
 * the votes folder of path. Called by the rank that creates a page, once per vote. */
static void sweep_over_jobs(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return;
    *slash = '\0';
    int fd = sluice_fd_guard_openat(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
    DIR *d = fd >= 0 ? SLUICE_REAL(fdopendir)(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            syscall(SYS_close, fd);
        return;
    }
    struct dirent *e;
    while ((e = SLUICE_REAL(readdir)(d)) != NULL) {
        const char *key = strncmp(e->d_name, "start-", 6) == 0  ? e->d_name + 6
                          : strncmp(e->d_name, "exit-", 5) == 0 ? e->d_name + 5
                                                                : NULL;
        if (key && strcmp(e->d_name, slash + 1) != 0 && sluice_claim_job_is_over(dirfd(d), e->d_name))
            syscall(SYS_unlinkat, dirfd(d), e->d_name, 0);
    }
    SLUICE_REAL(closedir)(d);
}

/* The vote's page at path, mapped shared; NULL with the reason in why. */
static struct vote_page *map_page(const char *path, char *why, size_t whylen)
{
    int fd = sluice_fd_guard_openat(AT_FDCWD, path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    struct stat st;
    void *p = MAP_FAILED;
    if (fd < 0)
        snprintf(why, whylen, "%s", strerror(errno));
    else if (syscall(SYS_fstat, fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
        snprintf(why, whylen, "not a regular file of this user");
    /* Growing to the page never shrinks it: a rank that comes second keeps the counts. */
    else if (st.st_size < PAGE && syscall(SYS_ftruncate, fd, (off_t)PAGE) != 0)
        snprintf(why, whylen, "%s", strerror(errno));
    else if ((p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
        snprintf(why, whylen, "%s", strerror(errno));
    if (fd >= 0)
        syscall(SYS_close, fd);
    if (p != MAP_FAILED && st.st_size == 0)
        sweep_over_jobs(path); /* the first rank here (or one of the first) */
    return p == MAP_FAILED ? NULL : p;
}

enum sluice_start_vote sluice_node_vote(enum sluice_node_vote_kind kind, const struct sluice_launch *l,
                                        int launcher_pid, bool yes, void (*all_arrived)(void))
{
    char path[4096], why[512] = "";
    int size = l->size;
    struct vote_page *p = NULL;
    if (vote_path(kind, l, path, sizeof path, why, sizeof why) == 0)
        p = map_page(path, why, sizeof why);
    if (!p) {
        sluice_log_warn("cannot hold the ranks' vote in /dev/shm (%s); sluice goes on as if a rank had "
                        "something to commit",
                        why);
        return SLUICE_VOTE_FAILED;
    }
    uint32_t *arrived = &p->arrived, *said = &p->yes;
    if (yes)
        __atomic_add_fetch(said, 1, __ATOMIC_SEQ_CST);
    uint32_t now = __atomic_add_fetch(arrived, 1, __ATOMIC_SEQ_CST);
    /* Waiters are woken only when the vote is decided: a wake at every arrival would wake every
     * waiting rank at each later arrival, about N^2/2 wake-ups (2,000 at 64 ranks). */
    if (now >= (uint32_t)size || (yes && kind == SLUICE_NODE_VOTE_START))
        syscall(SYS_futex, arrived, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
    /* The last rank to arrive removes the file: everyone else has it mapped, and nobody comes
     * after the last (one vote per rank). */
    if (now == (uint32_t)size)
        syscall(SYS_unlinkat, AT_FDCWD, path, 0);
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
