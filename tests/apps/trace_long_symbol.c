/* SPDX-License-Identifier: MIT */
/* A program whose function name is longer than any line buffer a tool might guess (2816 bytes,
 * built by the preprocessor): it opens and writes its per-rank checkpoint from that function,
 * called by main, so that a trace with SLUICE_BACKTRACE names both frames. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define TWICE(x) CAT(x, x)
#define LONG_NAME TWICE(TWICE(TWICE(TWICE(TWICE(TWICE(TWICE(a_function_name_part_)))))))

__attribute__((noinline)) static int LONG_NAME(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644); /* the call the trace names */
    if (fd < 0 || write(fd, "state\n", 6) != 6)
        return 1;
    return close(fd) != 0;
}

int main(void)
{
    const char *rank = getenv("PMI_RANK");
    char path[64];
    snprintf(path, sizeof path, "ckpt.%s", rank ? rank : "0");
    int rc = LONG_NAME(path); /* the caller the trace names */
    printf("wrote %s: %d\n", path, rc);
    return rc;
}
