/* SPDX-License-Identifier: MIT */
/* A library a test program loads itself (dlopen), with a native kernel's function: serving ranks,
 * which never run the program's main, do not have it (tests/integration/cl/cl_conf_native_buffers.sh). */
struct plugin_args {
    int *buf; /* a cl_mem handle until the driver puts the buffer's storage there */
    int by;
};

void cl_conf_native_plugin_add(void *p);

void cl_conf_native_plugin_add(void *p)
{
    struct plugin_args *a = p;
    for (int i = 0; i < 1024; i++)
        a->buf[i] += a->by;
}
