/* SPDX-License-Identifier: MIT */
/* The symbol table (name -> chain base and size) is ordinary shared data of the DSM: 64 bucket
 * chunks at the top of the address space, read and written in scopes like any chunk, so that
 * definitions are coherent across ranks and their homes are spread over the servers. A symbol
 * defined by symbol_put without an address gets one in the symbol data range, from its name. */
#include <string.h>

#include "common/hash.h"
#include "dsm/dsm.h"

#define SYM_NAME 64
#define SYM_BUCKET_BYTES 8192
struct sym_entry {
    char name[SYM_NAME];
    uint64_t base;
    uint64_t size;
};
struct sym_bucket {
    uint64_t count;
    struct sym_entry e[(SYM_BUCKET_BYTES - 8) / sizeof(struct sym_entry)];
};
_Static_assert(sizeof(struct sym_bucket) <= SYM_BUCKET_BYTES, "bucket fits its chunk");
#define SYM_CAPACITY (sizeof(((struct sym_bucket *)0)->e) / sizeof(struct sym_entry))

static struct sluice_dsm_chain *bucket(const char *name, int *err)
{
    unsigned long addr = DSM_SYM_BASE + (unsigned long)(sluice_fnv1a_str(name) % DSM_SYM_BUCKETS);
    size_t size = SYM_BUCKET_BYTES;
    return dsm_chain_make(&addr, &size, 1, SLUICE_DSM_MESI, err);
}

static int check_name(const char *name)
{
    if (!name || !name[0] || strlen(name) >= SYM_NAME)
        return dsm_fail(SLUICE_DSM_EINVAL, "symbol name must be 1 to %d characters", SYM_NAME - 1);
    return 0;
}

int dsm_symbol_define(const char *name, unsigned long base, size_t size)
{
    int rc = check_name(name);
    if (rc)
        return rc;
    struct sluice_dsm_chain *b = bucket(name, &rc);
    if (!b)
        return rc;
    struct sym_bucket *t = dsm_scope_begin(b, MODE_RW, true, &rc);
    if (!t)
        return rc;
    size_t i = 0;
    while (i < t->count && i < SYM_CAPACITY && strcmp(t->e[i].name, name) != 0)
        i++;
    if (i == SYM_CAPACITY) {
        dsm_scope_end(b);
        return dsm_fail(SLUICE_DSM_ENOMEM, "symbol %s: its bucket of the symbol table is full (%zu symbols)",
                        name, (size_t)SYM_CAPACITY);
    }
    memset(&t->e[i], 0, sizeof t->e[i]);
    strcpy(t->e[i].name, name);
    t->e[i].base = base;
    t->e[i].size = size;
    if (i == t->count)
        t->count++;
    return dsm_scope_end(b);
}

int dsm_symbol_find(const char *name, unsigned long *base, size_t *size)
{
    int rc = check_name(name);
    if (rc)
        return rc;
    struct sluice_dsm_chain *b = bucket(name, &rc);
    if (!b)
        return rc;
    const struct sym_bucket *t = dsm_scope_begin(b, MODE_READ, true, &rc);
    if (!t)
        return rc;
    bool found = false;
    for (size_t i = 0; i < t->count && i < SYM_CAPACITY; i++)
        if (strcmp(t->e[i].name, name) == 0) {
            *base = t->e[i].base;
            *size = t->e[i].size;
            found = true;
            break;
        }
    rc = dsm_scope_end(b);
    if (rc)
        return rc;
    return found ? 0 : SLUICE_DSM_ENOENT;
}

unsigned long dsm_symbol_address(const char *name)
{
    /* 2^20 chunk addresses per symbol name inside the reserved symbol data range. */
    return DSM_SYMDATA_BASE + ((unsigned long)(sluice_fnv1a_str(name) & 0xffffffffful) << 20);
}
