/* SPDX-License-Identifier: MIT */
/* sluice-ckpt extract of a container that holds one global array (docs/LAYOUT.md):
 *   --raw FILE        the global array alone, in canonical order;
 *   --ranks M [--grid PxQxR]  the per-rank files of an M-rank decomposition (header of rank 0
 *                     and the rank's block), named as the program names them;
 *   --h5 FILE         an HDF5 view: one dataset, /array, whose storage is external: the array
 *                     region of the container itself (absolute path), no copy.
 * The array's bytes are checked first: every member's checksum (so a damaged container never
 * yields a plausible-looking file). */
#include "ckpt_tool.h"

#include "ckpt/container/container_array.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef SLUICE_HAVE_HDF5
#include <hdf5.h>
#endif

static int pread_all(int fd, void *buf, uint64_t len, uint64_t off)
{
    unsigned char *p = buf;
    while (len) {
        ssize_t n = pread(fd, p, len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        p += n;
        len -= (uint64_t)n;
        off += (uint64_t)n;
    }
    return 0;
}

static int write_all(int fd, const void *buf, uint64_t len)
{
    const unsigned char *p = buf;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -errno;
        p += n;
        len -= (uint64_t)n;
    }
    return 0;
}

/* Writes path from the container's bytes: a temporary name, then rename. */
struct piece {
    uint64_t off, len;
};

static int write_file(const struct sluice_container *c, const char *path, const struct piece *pc, uint64_t n,
                      int force)
{
    struct stat st;
    if (!force && stat(path, &st) == 0) {
        tool_error("%s exists (use --force to overwrite)", path);
        return -EEXIST;
    }
    char tmp[PATH_MAX];
    if (tool_snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()))
        return -ENAMETOOLONG;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0) {
        tool_error("%s: %s", tmp, strerror(errno));
        return -errno;
    }
    size_t cap = 1 << 20;
    unsigned char *buf = malloc(cap);
    int rc = buf ? 0 : -ENOMEM;
    for (uint64_t i = 0; rc == 0 && i < n; i++)
        for (uint64_t done = 0; rc == 0 && done < pc[i].len;) {
            uint64_t k = pc[i].len - done < cap ? pc[i].len - done : cap;
            rc = pread_all(c->fd, buf, k, pc[i].off + done);
            if (rc == 0)
                rc = write_all(fd, buf, k);
            done += k;
        }
    free(buf);
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -errno;
    if (rc) {
        unlink(tmp);
        tool_error("%s: %s", path, strerror(-rc));
    }
    return rc;
}

/* The per-rank name of rank r: the set key with every %r written r, under outdir if given. */
static int rank_path(const struct sluice_container *c, const char *outdir, uint32_t r, char *out, size_t cap)
{
    char name[PATH_MAX];
    size_t at = 0;
    for (const char *k = c->meta.set_key; *k && at + 16 < sizeof name; k++) {
        if (k[0] == '%' && k[1] == 'r') {
            at += (size_t)snprintf(name + at, sizeof name - at, "%u", r);
            k++;
        } else {
            name[at++] = *k;
        }
    }
    name[at] = 0;
    if (!outdir)
        return tool_snprintf(out, cap, "%s", name);
    const char *base = strrchr(name, '/');
    return tool_snprintf(out, cap, "%s/%s", outdir, base ? base + 1 : name);
}

static int per_rank(const struct sluice_container *c, const struct sluice_array *a,
                    const struct tool_array_opts *o)
{
    struct sluice_array want = *a;
    uint32_t grid[SLUICE_ARRAY_DIMS_MAX];
    char err[256];
    memset(want.grid, 0, sizeof want.grid);
    if (o->grid) {
        int nd = 1;
        for (const char *p = o->grid; *p; p++)
            nd += *p == 'x';
        if (nd != a->ndims) {
            tool_error("--grid %s: the array has %d dimensions", o->grid, a->ndims);
            return -EINVAL;
        }
        char *end = NULL;
        const char *p = o->grid;
        for (int d = 0; d < nd; d++) {
            unsigned long v = strtoul(p, &end, 10);
            if (end == p || v == 0 || v > UINT32_MAX || (*end && *end != 'x')) {
                tool_error("--grid %s: want counts such as 2x2x2", o->grid);
                return -EINVAL;
            }
            want.grid[d] = (uint32_t)v;
            p = *end ? end + 1 : end;
        }
    }
    if (sluice_array_grid(&want, o->ranks, grid, err, sizeof err) != 0) {
        tool_error("--ranks %u: %s", o->ranks, err);
        return -EINVAL;
    }
    int bad = 0;
    for (uint32_t r = 0; r < o->ranks; r++) {
        struct sluice_array_block b;
        sluice_array_block(a, grid, r, &b);
        struct piece *pc = malloc((b.nrows + 1) * sizeof *pc);
        if (!pc)
            return -ENOMEM;
        uint64_t n = 0;
        if (a->header)
            pc[n++] = (struct piece){a->header_offset, a->header};
        for (uint64_t k = 0; k < b.nrows; k++)
            pc[n++] = (struct piece){a->array_offset + sluice_array_row_offset(a, &b, k), b.row_len};
        char path[PATH_MAX];
        bad |=
            rank_path(c, o->outdir, r, path, sizeof path) != 0 || write_file(c, path, pc, n, o->force) != 0;
        free(pc);
    }
    return bad ? -EIO : 0;
}

#ifdef SLUICE_HAVE_HDF5
static hid_t h5_type(const struct sluice_array *a)
{
    switch (a->dtype[0]) {
    case 'f':
        return a->elem == 4 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
    case 'i':
        return a->elem == 1   ? H5T_STD_I8LE
               : a->elem == 2 ? H5T_STD_I16LE
               : a->elem == 4 ? H5T_STD_I32LE
                              : H5T_STD_I64LE;
    case 'u':
        return a->elem == 1   ? H5T_STD_U8LE
               : a->elem == 2 ? H5T_STD_U16LE
               : a->elem == 4 ? H5T_STD_U32LE
                              : H5T_STD_U64LE;
    default:
        return -1;
    }
}

static int h5_view(const struct sluice_container *c, const struct sluice_array *a, const char *out)
{
    char abs[PATH_MAX];
    if (!realpath(c->path, abs)) {
        tool_error("%s: %s", c->path, strerror(errno));
        return -errno;
    }
    hsize_t dims[SLUICE_ARRAY_DIMS_MAX];
    for (int d = 0; d < a->ndims; d++) /* HDF5 is row-major: a Fortran array lists its dimensions reversed */
        dims[d] = a->fortran ? a->shape[a->ndims - 1 - d] : a->shape[d];
    hid_t type = a->dtype[0] ? H5Tcopy(h5_type(a)) : H5Tcreate(H5T_OPAQUE, a->elem);
    hid_t file = H5Fcreate(out, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t space = H5Screate_simple(a->ndims, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    int rc = file < 0 || space < 0 || dcpl < 0 || type < 0 ? -EIO : 0;
    if (rc == 0 && H5Pset_external(dcpl, abs, (off_t)a->array_offset, (hsize_t)sluice_array_bytes(a)) < 0)
        rc = -EIO;
    hid_t ds = rc == 0 ? H5Dcreate2(file, "array", type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT) : -1;
    if (ds < 0)
        rc = -EIO;
    else
        H5Dclose(ds);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (space >= 0)
        H5Sclose(space);
    if (type >= 0)
        H5Tclose(type);
    if (file >= 0 && H5Fclose(file) < 0)
        rc = -EIO;
    if (rc)
        tool_error("%s: the HDF5 library could not write the view", out);
    return rc;
}
#else
static int h5_view(const struct sluice_container *c, const struct sluice_array *a, const char *out)
{
    (void)c;
    (void)a;
    tool_error("%s: this sluice-ckpt was built without HDF5 (install libhdf5-dev and rebuild)", out);
    return -ENOTSUP;
}
#endif

int tool_array_extract(const char *path, const struct tool_array_opts *o)
{
    struct sluice_container *c = NULL;
    char err[8192];
    if (sluice_container_open(path, &c, err, sizeof err) != 0) {
        tool_error("%s", err);
        return EXIT_BAD_DATA;
    }
    struct sluice_array a;
    int status = EXIT_OK;
    if (!c->meta.array_record[0] || sluice_array_parse(c->meta.array_record, &a, err, sizeof err) != 0) {
        tool_error("%s: not a global array (its set has no SLUICE_LAYOUT record)", path);
        status = EXIT_BAD_DATA;
        goto out;
    }
    for (uint32_t i = 0; i < c->n_members; i++)
        if (sluice_container_verify_member(c, i, err, sizeof err) != 0) {
            tool_error("%s", err);
            status = EXIT_BAD_DATA;
            goto out;
        }
    struct piece whole = {a.array_offset, sluice_array_bytes(&a)};
    if (o->raw && write_file(c, o->raw, &whole, 1, o->force) != 0)
        status = EXIT_BAD_DATA;
    if (o->ranks && per_rank(c, &a, o) != 0)
        status = EXIT_BAD_DATA;
    if (o->h5 && h5_view(c, &a, o->h5) != 0)
        status = EXIT_BAD_DATA;
out:
    sluice_container_close(c);
    return status;
}
