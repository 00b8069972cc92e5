/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice) that may end before its first OpenCL call.
 * `cl_early_end`: prints the number of devices of the first platform.
 * `cl_early_end crash RANK`: on launcher rank RANK (launcher_env.h) a constructor of
 * the program crashes (SIGSEGV, a write through a null pointer) before main; other ranks print
 * as above. */
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher_env.h"

/* glibc passes main's arguments to constructors. */
__attribute__((constructor)) static void crash_early(int argc, char **argv)
{
    const char *rank = launcher_rank_string();
    if (argc == 3 && strcmp(argv[1], "crash") == 0 && rank && strcmp(argv[2], rank) == 0)
        *(volatile int *)NULL = 1;
}

int main(void)
{
    cl_platform_id platform = NULL;
    cl_uint np = 0, nd = 0;
    if (clGetPlatformIDs(1, &platform, &np) != CL_SUCCESS || np == 0) {
        fprintf(stderr, "cl_early_end: no OpenCL platform\n");
        return 4;
    }
    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
    printf("devices: %u\n", nd);
    return 0;
}
