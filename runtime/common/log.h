/* SPDX-License-Identifier: MIT */
/* Messages from sluice to the user: one line each, prefixed "sluice[rank]:", written to
 * fd 2 only if fd 2 is open (coreutils close stderr at exit), never to stdout. */
#ifndef SLUICE_COMMON_LOG_H
#define SLUICE_COMMON_LOG_H

#ifdef __cplusplus
extern "C" {
#endif

void sluice_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sluice_log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints the line and ends the process with status 2 without running exit handlers:
 * used for bad configuration, before main. */
void sluice_fatal_config(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Prints the line and ends the process with `status` (exit handlers skipped). */
void sluice_fatal(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/* Writes exactly `len` bytes to fd 2 if it is open; async-signal-safe. */
void sluice_log_raw(const char *msg, unsigned long len);

#ifdef __cplusplus
}
#endif
#endif
