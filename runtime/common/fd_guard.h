/* SPDX-License-Identifier: MIT */
/* Descriptors of sluice's own threads, kept out of the program's way.
 *
 * A program may use a descriptor number it believes free: a shell's `exec 3>file` opens the file
 * and dup2s it onto 3; bash first asks fcntl(3, F_GETFD) whether 3 is open and saves it if so; a
 * daemon closes 1 and expects its next open to return 1. Had one of sluice's threads (the commit
 * engine, an I/O lane) just opened a file and got that number, the dup2 would silently make the
 * thread's descriptor the program's file (its next write or close then lands on the program's
 * data, and the program's next write meets EBADF), bash would save and restore a descriptor that
 * is not its own, the daemon's open would get another number. So:
 *   - every descriptor a sluice thread creates is moved at once to a number at or above a floor
 *     (512, or half the descriptor limit if that is lower), far from the numbers programs pick;
 *   - the low number it has for that moment is never seen by the program: the program's open,
 *     close, dup family and fcntl on numbers wait while such a creation is in flight, and a
 *     creation waits while such a call of the program is under way, 100 ms at most (a call
 *     that blocks, an open of a FIFO, must not hold sluice or the program's other threads).
 * All of this goes through SLUICE_REAL (common/real.c hands out the guarded versions of open,
 * open64, openat, openat64, opendir, close, dup, dup2, dup3, fcntl, fcntl64, and for the
 * program's threads fopen, fopen64, freopen and freopen64), so the program's
 * calls through sluice's wrappers and sluice's own calls take part without help; a descriptor
 * created otherwise (a raw system call) is bracketed by sluice_fd_guard_begin/end. A process in
 * which no sluice thread ever ran pays one load per call. What a sluice thread creates inside
 * another library (an MPI socket) is that library's, not guarded. */
#ifndef SLUICE_COMMON_FD_GUARD_H
#define SLUICE_COMMON_FD_GUARD_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The calling thread is one of sluice's own (called first thing by each of them). */
void sluice_fd_guard_thread_enter(void);

/* A creation on the calling thread: between begin and end, the program's dup2 waits; end moves
 * fd (if it is >= 0 and below the floor) above the floor and returns the descriptor to use. On a
 * program thread begin does nothing and end returns fd. */
struct sluice_fd_guard_section {
    bool held;
    bool tell_next; /* the descriptor came from the next library, told of its move */
};
void sluice_fd_guard_begin(struct sluice_fd_guard_section *s);
int sluice_fd_guard_end(struct sluice_fd_guard_section *s, int fd);

/* openat as a raw system call (async-signal-safe), guarded as above. */
int sluice_fd_guard_openat(int dirfd, const char *path, int flags, int mode);

/* The program's side, around one call on a descriptor number: waits for creations in flight,
 * never for another call of the program (a signal handler's call inside one passes too). */
void sluice_fd_guard_program_begin(struct sluice_fd_guard_section *s);
void sluice_fd_guard_program_end(struct sluice_fd_guard_section *s);

/* The guarded version of an fd-creating libc function `name`, or NULL (common/real.c). */
void *sluice_fd_guard_substitute(const char *name);

#ifdef __cplusplus
}
#endif
#endif
