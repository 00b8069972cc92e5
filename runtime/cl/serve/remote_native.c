/* SPDX-License-Identifier: MIT */
/* Native kernels on the serving rank (remote_native.h): the function named by object and offset
 * found among this process's modules (dl_iterate_phdr), and the driver's clEnqueueNativeKernel
 * called with this rank's memory objects. The function runs where a local driver runs it: on the
 * driver's thread, in this rank's process, so it sees its arguments and buffers, not rank 0's
 * globals. */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cl/serve/remote_engine.h"
#include "cl/serve/remote_native.h"
#include "common/real.h"

/* The object's GNU build-id note, read from its loaded PT_NOTE segments (no file access). */
static size_t build_id(const struct dl_phdr_info *info, const uint8_t **id)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        size_t align = ph->p_align == 8 ? 8 : 4;
        const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        size_t left = ph->p_memsz;
        while (left >= sizeof(ElfW(Nhdr))) {
            ElfW(Nhdr) nh;
            memcpy(&nh, p, sizeof nh);
            size_t name = (nh.n_namesz + align - 1) & ~(align - 1);
            size_t desc = (nh.n_descsz + align - 1) & ~(align - 1);
            if (name > left || desc > left - name || sizeof nh > left - name - desc)
                break;
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && memcmp(p + sizeof nh, "GNU", 4) == 0) {
                *id = p + sizeof nh + name;
                return nh.n_descsz;
            }
            p += sizeof nh + name + desc;
            left -= sizeof nh + name + desc;
        }
    }
    return 0;
}

/* The object's file: the main program's dlpi_name is empty. */
static const char *path_of(const struct dl_phdr_info *info)
{
    return info->dlpi_name != NULL && info->dlpi_name[0] != '\0' ? info->dlpi_name : "/proc/self/exe";
}

/* True when the offset from the load bias lies in an executable segment of the object. */
static int executable_at(const struct dl_phdr_info *info, uint64_t offset)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && offset >= ph->p_vaddr &&
            offset - ph->p_vaddr < ph->p_memsz)
            return 1;
    }
    return 0;
}

struct walk {
    uintptr_t addr;              /* identify: the address sought */
    struct sluice_native_fn *fn; /* identify: filled; resolve: the object sought */
    void *found;                 /* resolve: the address here */
    int object_only;             /* resolve: the object is enough (NATIVE_FIND) */
};

/* The object's identity into fn (offset 0); 0 when it has neither a build-id nor a file. */
static int describe(const struct dl_phdr_info *info, struct sluice_native_fn *fn)
{
    memset(fn, 0, sizeof *fn);
    const char *path = path_of(info);
    const char *name = info->dlpi_name != NULL && info->dlpi_name[0] != '\0' ? path : program_invocation_name;
    size_t nl = strlen(name);
    if (nl < sizeof fn->name)
        memcpy(fn->name, name, nl);
    else /* for messages only: a longer path keeps its end, marked as cut */
        snprintf(fn->name, sizeof fn->name, "...%s", name + nl - (sizeof fn->name - 4));
    const uint8_t *id = NULL;
    size_t n = build_id(info, &id);
    if (n > 0 && n <= sizeof fn->build_id) {
        memcpy(fn->build_id, id, n);
        fn->id_len = (uint32_t)n;
    } else {
        struct stat st;
        if (SLUICE_REAL(stat)(path, &st) != 0)
            return 0; /* nothing another process could match */
        fn->dev = st.st_dev;
        fn->ino = st.st_ino;
        fn->size = (uint64_t)st.st_size;
    }
    return 1;
}

static int identify_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct walk *w = arg;
    if (w->addr < info->dlpi_addr || !executable_at(info, w->addr - info->dlpi_addr))
        return 0;
    if (describe(info, w->fn)) {
        w->fn->offset = w->addr - info->dlpi_addr;
        w->found = w->fn;
    }
    return 1;
}

/* The loader lists the main program first. */
static int program_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct walk *w = arg;
    if (describe(info, w->fn))
        w->found = w->fn;
    return 1;
}

int sluice_native_program(struct sluice_native_fn *out)
{
    struct walk w = {0, out, NULL, 0};
    dl_iterate_phdr(program_one, &w);
    return w.found != NULL;
}

int sluice_native_identify(const void *addr, struct sluice_native_fn *out)
{
    struct walk w = {(uintptr_t)addr, out, NULL, 0};
    dl_iterate_phdr(identify_one, &w);
    return w.found != NULL;
}

static int resolve_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct walk *w = arg;
    const struct sluice_native_fn *fn = w->fn;
    const uint8_t *id = NULL;
    size_t n = build_id(info, &id);
    if (fn->id_len > 0) {
        if (n != fn->id_len || memcmp(id, fn->build_id, n) != 0)
            return 0;
    } else {
        struct stat st;
        if (n > 0 || SLUICE_REAL(stat)(path_of(info), &st) != 0 || (uint64_t)st.st_dev != fn->dev ||
            (uint64_t)st.st_ino != fn->ino || (uint64_t)st.st_size != fn->size)
            return 0;
    }
    if (!w->object_only && !executable_at(info, fn->offset))
        return 0;
    w->found = (void *)(info->dlpi_addr + fn->offset);
    return 1;
}

static void *resolve(const struct sluice_native_fn *fn, int object_only)
{
    struct walk w = {0, (struct sluice_native_fn *)fn, NULL, object_only};
    dl_iterate_phdr(resolve_one, &w);
    return w.found;
}

void *sluice_native_resolve(const struct sluice_native_fn *fn)
{
    return resolve(fn, 0);
}

void sluice_remote_native_find(const unsigned char *p, size_t len, struct sluice_remote_msg *out)
{
    struct sluice_native_fn fn;
    if (len != sizeof fn) {
        out->rep.ret = CL_INVALID_VALUE;
        return;
    }
    memcpy(&fn, p, sizeof fn);
    out->rep.ret = resolve(&fn, 1) != NULL ? CL_SUCCESS : CL_INVALID_OPERATION;
}

cl_int sluice_remote_native_cmd(cl_command_queue q, const struct sluice_req_native *a, const unsigned char *p,
                                size_t len, cl_uint nw, const cl_event *wl, cl_event *ev)
{
    size_t cb = (size_t)a->cb_args, nmem = (size_t)a->nmem;
    struct sluice_native_fn fn;
    SLUICE_RETURN_ERROR_ON(len < sizeof fn || nmem > (len - sizeof fn) / sizeof(struct sluice_native_mem) ||
                               cb != len - sizeof fn - nmem * sizeof(struct sluice_native_mem),
                           CL_INVALID_VALUE,
                           "len < sizeof fn || nmem > (len - sizeof fn) / sizeof(struct sluice_native_mem) "
                           "|| cb != len - sizeof fn - nmem * sizeof(struct sluice_native_mem)");
    memcpy(&fn, p, sizeof fn);
    void (*user_func)(void *) = (void (*)(void *))sluice_native_resolve(&fn);
    SLUICE_RETURN_ERROR_ON(user_func == NULL, CL_INVALID_OPERATION,
                           "no operation (NULL) (rank 0 asked first (NATIVE_FIND): the object went away)");
    const unsigned char *mp = p + sizeof fn;
    unsigned char *args = cb > 0 ? malloc(cb) : NULL;
    cl_mem *mems = nmem > 0 ? malloc(nmem * sizeof *mems) : NULL;
    const void **locs = nmem > 0 ? malloc(nmem * sizeof *locs) : NULL;
    cl_int r = CL_SUCCESS;
    if ((cb > 0 && args == NULL) || (nmem > 0 && (mems == NULL || locs == NULL)))
        r = CL_OUT_OF_HOST_MEMORY;
    if (r == CL_SUCCESS && cb > 0)
        memcpy(args, mp + nmem * sizeof(struct sluice_native_mem), cb);
    for (size_t i = 0; r == CL_SUCCESS && i < nmem; i++) {
        struct sluice_native_mem m;
        memcpy(&m, mp + i * sizeof m, sizeof m);
        if (m.loc > cb || cb - m.loc < sizeof(cl_mem)) {
            r = CL_INVALID_VALUE;
            break;
        }
        mems[i] = PTR(cl_mem, m.mem);
        if (mems[i] == NULL) {
            r = sluice_rid_take_error(); /* its creation failed */
            r = r != CL_SUCCESS ? r : CL_INVALID_MEM_OBJECT;
            break;
        }
        locs[i] = args + m.loc;
        memcpy(args + m.loc, &mems[i], sizeof mems[i]); /* this rank's handle, as the program put its own */
    }
    if (r == CL_SUCCESS)
        r = api()->clEnqueueNativeKernel(q, user_func, args, cb, (cl_uint)nmem, mems, locs, nw,
                                         nw ? wl : NULL, ev);
    /* The driver copies the arguments and the memory object list. */
    free(args);
    free(mems);
    free(locs);
    return r;
}
