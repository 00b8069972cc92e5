/* SPDX-License-Identifier: MIT */
/* Which CPUs each thread of this process may run on, after real OpenCL work: a buffer of every
 * device is written and read back (checked), then one line per thread of /proc/self/task,
 * "thread <name> cpus <Cpus_allowed_list>", the main thread first. For the test of
 * SLUICE_HELPER_CPUS (tests/integration/cl/dist_helper_cpus.sh): the program's own threads must
 * keep the launcher's binding whatever sluice does with its own. --pin-thread CPU first starts a
 * thread of the program bound to that CPU alone (as a hybrid program binds its OpenMP threads),
 * named "pinned", which waits until the end. Exit status 1 on a wrong byte. */
#define _GNU_SOURCE /* CPU_SET, pthread_attr_setaffinity_np, pthread_setname_np */
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "cl_test_util.h"

#define SIZE ((size_t)1 << 20)

static void show_thread(const char *tid)
{
    char path[128], name[64] = "?", line[256], cpus[256] = "?";
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", tid);
    FILE *f = fopen(path, "r");
    if (f != NULL) {
        if (fgets(name, sizeof name, f) != NULL)
            name[strcspn(name, "\n")] = '\0';
        fclose(f);
    }
    snprintf(path, sizeof path, "/proc/self/task/%s/status", tid);
    if ((f = fopen(path, "r")) != NULL) {
        while (fgets(line, sizeof line, f) != NULL)
            if (sscanf(line, "Cpus_allowed_list: %255s", cpus) == 1)
                break;
        fclose(f);
    }
    printf("thread %s cpus %s\n", name, cpus);
}

static pthread_mutex_t end_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t end_cond = PTHREAD_COND_INITIALIZER;
static int ending;

static void *pinned_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&end_lock);
    while (!ending)
        pthread_cond_wait(&end_cond, &end_lock);
    pthread_mutex_unlock(&end_lock);
    return NULL;
}

/* A thread of the program bound to `cpu` alone, started before any OpenCL call. */
static pthread_t start_pinned(int cpu)
{
    pthread_t t;
    pthread_attr_t a;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((size_t)cpu, &set);
    pthread_attr_init(&a);
    if (pthread_attr_setaffinity_np(&a, sizeof set, &set) != 0 ||
        pthread_create(&t, &a, pinned_main, NULL) != 0) {
        fprintf(stderr, "cannot start a thread bound to CPU %d\n", cpu);
        exit(1);
    }
    pthread_attr_destroy(&a);
    pthread_setname_np(t, "pinned");
    return t;
}

int main(int argc, char **argv)
{
    int pin = argc == 3 && strcmp(argv[1], "--pin-thread") == 0 ? atoi(argv[2]) : -1;
    pthread_t pinned = pin >= 0 ? start_pinned(pin) : 0;
    cl_platform_id platform;
    cl_device_id dev[16];
    cl_uint nd = 0;
    first_platform_devices(&platform, 16, dev, &nd);
    cl_command_queue q[16];
    cl_context ctx = context_with_queues(nd, dev, q);
    unsigned char *in = malloc(SIZE), *out = malloc(SIZE);
    for (size_t i = 0; i < SIZE; i++)
        in[i] = (unsigned char)(i * 7 + 3);
    for (cl_uint d = 0; d < nd; d++) {
        cl_int err;
        cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, SIZE, NULL, &err);
        CHECK(err);
        CHECK(clEnqueueWriteBuffer(q[d], b, CL_TRUE, 0, SIZE, in, 0, NULL, NULL));
        memset(out, 0, SIZE);
        CHECK(clEnqueueReadBuffer(q[d], b, CL_TRUE, 0, SIZE, out, 0, NULL, NULL));
        if (memcmp(in, out, SIZE) != 0) {
            fprintf(stderr, "device %u: the buffer read back differs\n", d);
            return 1;
        }
        CHECK(clReleaseMemObject(b));
    }
    printf("devices %u, %zu bytes each written and read back\n", nd, SIZE);
    char self[32];
    snprintf(self, sizeof self, "%d", (int)getpid());
    show_thread(self);
    DIR *dir = opendir("/proc/self/task");
    struct dirent *e;
    while (dir != NULL && (e = readdir(dir)) != NULL)
        if (e->d_name[0] != '.' && strcmp(e->d_name, self) != 0)
            show_thread(e->d_name);
    if (dir != NULL)
        closedir(dir);
    release_queues_context(ctx, nd, q);
    if (pin >= 0) {
        pthread_mutex_lock(&end_lock);
        ending = 1;
        pthread_cond_signal(&end_cond);
        pthread_mutex_unlock(&end_lock);
        pthread_join(pinned, NULL);
    }
    free(in);
    free(out);
    return 0;
}
