/* SPDX-License-Identifier: MIT */
/* Reason lines on the debug stream (trace/debug.h): why a call failed, for the subsystem that
 * knows. The events' lines are debug.c's; these share their head ("sluice[rank] +secs pid tid"). */
#include <stdarg.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "trace/debug.h"
#include "trace/rawio.h"
#include "trace/state.h"

static void say(enum sluice_debug_tag tag, const char *func, const char *code, const char *fmt, va_list ap)
{
    char line[1024];
    struct sluice_textbuf b = {line, 0, sizeof line - 1};
    sluice_trace_debug_prefix(&b, sluice_now_ns(), (uint64_t)syscall(SYS_gettid));
    sluice_tb_str(&b, sluice_debug_tag_names[tag]);
    sluice_tb_str(&b, ": ");
    if (func != NULL) {
        sluice_tb_str(&b, func);
        sluice_tb_str(&b, ": ");
    }
    if (b.len < b.cap) {
        int n = vsnprintf(line + b.len, b.cap - b.len, fmt, ap);
        b.len += n < 0 ? 0 : (size_t)n < b.cap - b.len ? (size_t)n : b.cap - b.len - 1;
    }
    if (code != NULL) {
        sluice_tb_str(&b, " -> ");
        sluice_tb_str(&b, code);
    }
    line[b.len++] = '\n';
    sluice_trace_debug_write(line, b.len);
}

void sluice_debug_say(enum sluice_debug_tag tag, const char *fmt, ...)
{
    if (!sluice_debug_on(tag))
        return;
    va_list ap;
    va_start(ap, fmt);
    say(tag, NULL, NULL, fmt, ap);
    va_end(ap);
}

void sluice_debug_reason(enum sluice_debug_tag tag, const char *func, const char *code, const char *fmt, ...)
{
    if (!sluice_debug_on(tag))
        return;
    va_list ap;
    va_start(ap, fmt);
    say(tag, func, code, fmt, ap);
    va_end(ap);
}
