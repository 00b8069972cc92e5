/* SPDX-License-Identifier: MIT */
/* File reads and writes that retry what the kernel may cut short: a call interrupted by a
 * signal (EINTR) is made again, and a short transfer goes on from where it stopped. Written once
 * here for the runtime and the tools. The plain forms reach libc through SLUICE_REAL (inside
 * libsluice.so the plain names are sluice's own wrappers); the _via forms take the call to make
 * (the container code's replaceable I/O table). Not async-signal-safe where SLUICE_REAL must
 * first resolve; the trace core's signal-time writes use trace/rawio.h. */
#ifndef SLUICE_COMMON_FULL_IO_H
#define SLUICE_COMMON_FULL_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef ssize_t (*sluice_pread_fn)(int fd, void *buf, size_t n, off_t off);
typedef ssize_t (*sluice_pwrite_fn)(int fd, const void *buf, size_t n, off_t off);

/* One pread of up to n bytes at off, made again on EINTR: the bytes read (0 at the end of the
 * file) or -errno. For loops that read a file to its end in pieces. */
ssize_t sluice_pread_retry(int fd, void *buf, size_t n, uint64_t off);

/* All n bytes at off: 0, -errno, or -EIO where the file ends first (it shrank under us). */
int sluice_full_pread(int fd, void *buf, size_t n, uint64_t off);
int sluice_full_pread_via(sluice_pread_fn fn, int fd, void *buf, size_t n, uint64_t off);

/* All n bytes at off: 0, -errno, or -EIO where a write makes no progress. */
int sluice_full_pwrite(int fd, const void *buf, size_t n, uint64_t off);
int sluice_full_pwrite_via(sluice_pwrite_fn fn, int fd, const void *buf, size_t n, uint64_t off);

/* All n bytes at the file's position (a pipe, stdout): 0, -errno, or -EIO where a write makes
 * no progress. */
int sluice_full_write(int fd, const void *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
