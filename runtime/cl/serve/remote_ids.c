/* SPDX-License-Identifier: MIT */
/* The table of ids rank 0 chose (remote_ids.h): ids of one rank are dense (rank 0 counts them from
 * 1), so the table is an array indexed by the id's count, grown by doubling. */
#include <CL/cl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cl/serve/remote_ids.h"

struct rid_entry {
    uint64_t real;
    int32_t err; /* the creation's error (real 0), or 0 */
};

static struct rid_entry *table;
static size_t cap;
static pthread_mutex_t ids_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int32_t failed; /* the first failed lookup's error since the last take */

void sluice_rid_bind(uint64_t id, void *handle, int32_t err)
{
    size_t n = (size_t)(id & ~SLUICE_RID_CHOSEN);
    pthread_mutex_lock(&ids_lock);
    if (n >= cap) {
        size_t want = cap ? cap : 256;
        while (want <= n)
            want *= 2;
        struct rid_entry *t = realloc(table, want * sizeof *t);
        if (t != NULL) {
            memset(t + cap, 0, (want - cap) * sizeof *t);
            table = t;
            cap = want;
        }
    }
    if (n < cap)
        table[n] = (struct rid_entry){(uint64_t)(uintptr_t)handle, handle != NULL ? 0 : err};
    pthread_mutex_unlock(&ids_lock);
}

uint64_t sluice_rid_real(uint64_t rid)
{
    if (!sluice_rid_is_chosen(rid))
        return rid;
    size_t n = (size_t)(rid & ~SLUICE_RID_CHOSEN);
    pthread_mutex_lock(&ids_lock);
    struct rid_entry e = n < cap ? table[n] : (struct rid_entry){0, 0};
    pthread_mutex_unlock(&ids_lock);
    if (e.real == 0 && failed == 0)
        failed = e.err != 0 ? e.err : CL_INVALID_MEM_OBJECT; /* unknown: released, or its creation lost */
    return e.real;
}

void sluice_rid_forget(uint64_t id)
{
    if (!sluice_rid_is_chosen(id))
        return;
    size_t n = (size_t)(id & ~SLUICE_RID_CHOSEN);
    pthread_mutex_lock(&ids_lock);
    if (n < cap)
        table[n] = (struct rid_entry){0, 0};
    pthread_mutex_unlock(&ids_lock);
}

int32_t sluice_rid_take_error(void)
{
    int32_t e = failed;
    failed = 0;
    return e;
}
