/* SPDX-License-Identifier: MIT */
/* Async-signal-safe building blocks for the trace writer and the debug stream: raw system
 * calls (other parts of sluice wrap open/write/close, and the trace must never re-enter
 * them) and number formatting without stdio. */
#ifndef SLUICE_TRACE_RAWIO_H
#define SLUICE_TRACE_RAWIO_H

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline int sluice_raw_open(const char *path, int flags, int mode)
{
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}
static inline int sluice_raw_close(int fd)
{
    return (int)syscall(SYS_close, fd);
}

/* Writes all of buf; returns 0 or -errno. */
static inline int sluice_raw_write_all(int fd, const void *buf, size_t n)
{
    const char *p = (const char *)buf;
    while (n > 0) {
        long w = syscall(SYS_write, fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (w == 0)
            return -EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Appends to a bounded text buffer; the *_put helpers never overrun `cap`. */
struct sluice_textbuf {
    char *p;
    size_t len, cap;
};
static inline void sluice_tb_str(struct sluice_textbuf *b, const char *s)
{
    while (*s && b->len < b->cap)
        b->p[b->len++] = *s++;
}
static inline void sluice_tb_mem(struct sluice_textbuf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n && b->len < b->cap; i++)
        b->p[b->len++] = s[i];
}
static inline void sluice_tb_u64(struct sluice_textbuf *b, uint64_t v)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n > 0 && b->len < b->cap)
        b->p[b->len++] = tmp[--n];
}
static inline void sluice_tb_i64(struct sluice_textbuf *b, int64_t v)
{
    if (v < 0) {
        sluice_tb_str(b, "-");
        sluice_tb_u64(b, (uint64_t)0 - (uint64_t)v);
    } else {
        sluice_tb_u64(b, (uint64_t)v);
    }
}
/* v padded with zeros to `width` digits. */
static inline void sluice_tb_u64w(struct sluice_textbuf *b, uint64_t v, int width)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n < width && n < 24)
        tmp[n++] = '0';
    while (n > 0 && b->len < b->cap)
        b->p[b->len++] = tmp[--n];
}
static inline void sluice_tb_hex(struct sluice_textbuf *b, uint64_t v)
{
    char tmp[16];
    int n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    sluice_tb_str(b, "0x");
    while (n > 0 && b->len < b->cap)
        b->p[b->len++] = tmp[--n];
}
/* NUL-terminates (the last byte is reserved for it). */
static inline const char *sluice_tb_cstr(struct sluice_textbuf *b)
{
    size_t i = b->len < b->cap ? b->len : b->cap - 1;
    b->p[i] = '\0';
    return b->p;
}

#endif
