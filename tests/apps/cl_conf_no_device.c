/* SPDX-License-Identifier: MIT */
/* Sample OpenCL program (knows nothing of sluice): what a program sees of a platform with no
 * device of the type it asks for. `cl_conf_no_device [gpu|all]`: the platform count and code,
 * then clGetDeviceIDs and clCreateContextFromType for that type. Exit status 0 when a device
 * was found, 3 when none (the program's own decision). */
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    cl_device_type type = argc > 1 && strcmp(argv[1], "gpu") == 0 ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_ALL;
    cl_platform_id platform = NULL;
    cl_uint np = 0, nd = 12345;
    cl_int rc = clGetPlatformIDs(1, &platform, &np);
    printf("clGetPlatformIDs: %d, %u platform(s)\n", rc, np);
    if (rc != CL_SUCCESS)
        return 4;
    cl_device_id dev = NULL;
    rc = clGetDeviceIDs(platform, type, 1, &dev, &nd);
    printf("clGetDeviceIDs: %d", rc);
    if (rc == CL_SUCCESS)
        printf(", %u device(s)", nd);
    printf("\n");
    cl_context_properties props[3] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
    cl_int err = 12345;
    cl_context ctx = clCreateContextFromType(props, type, NULL, NULL, &err);
    printf("clCreateContextFromType: %d\n", err); /* PoCL 3.1 returns a context even then */
    if (ctx != NULL && err == CL_SUCCESS)
        clReleaseContext(ctx);
    return rc == CL_SUCCESS ? 0 : 3;
}
