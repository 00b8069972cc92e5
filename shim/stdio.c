/* SPDX-License-Identifier: MIT */
/* stdio entry points for checkpoint capture. A captured stream is an ordinary FILE* over the
 * staged descriptor (fdopen), so fwrite/fprintf/fputs/fputc/fflush/fseek/ftell/fread/fgets/
 * fscanf need no wrapper; only the calls that name a path or drop the descriptor are here. */
#include "ckpt/capture/capture.h"
#include "common/export.h"
#include "common/real.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>

#define FOPEN_WRAPPER(name)                                                                                  \
    SLUICE_EXPORT FILE *name(const char *path, const char *mode)                                             \
    {                                                                                                        \
        if (sluice_capture_on()) {                                                                           \
            bool handled;                                                                                    \
            FILE *fp = sluice_capture_fopen(path, mode, &handled);                                           \
            if (handled)                                                                                     \
                return fp;                                                                                   \
        }                                                                                                    \
        char kb[PATH_MAX];                                                                                   \
        return SLUICE_REAL(name)(sluice_capture_kpath(AT_FDCWD, path, kb), mode);                            \
    }
FOPEN_WRAPPER(fopen)
FOPEN_WRAPPER(fopen64)

#define FREOPEN_WRAPPER(name)                                                                                \
    SLUICE_EXPORT FILE *name(const char *path, const char *mode, FILE *stream)                               \
    {                                                                                                        \
        if (sluice_capture_on()) {                                                                           \
            bool handled;                                                                                    \
            FILE *fp = sluice_capture_freopen(path, mode, stream, &handled);                                 \
            if (handled)                                                                                     \
                return fp;                                                                                   \
        }                                                                                                    \
        char kb[PATH_MAX];                                                                                   \
        return SLUICE_REAL(name)(sluice_capture_kpath(AT_FDCWD, path, kb), mode, stream);                    \
    }
FREOPEN_WRAPPER(freopen)
FREOPEN_WRAPPER(freopen64)

/* glibc closes a stream's descriptor internally, never through close(): capture learns of the
 * last close of a captured stream here. */
SLUICE_EXPORT int fclose(FILE *stream)
{
    if (sluice_capture_enabled) {
        int r = sluice_capture_fclose(stream);
        if (r != SLUICE_CAPTURE_PASS)
            return r;
    }
    return SLUICE_REAL(fclose)(stream);
}
