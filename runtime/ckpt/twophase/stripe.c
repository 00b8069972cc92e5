/* SPDX-License-Identifier: MIT */
/* Stripe unit detection (stripe.h): SLUICE_STRIPING_UNIT, Lustre's layout xattr, or 1 MiB. */
#include "ckpt/twophase/stripe.h"
#include "common/real.h"

#include <errno.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/xattr.h>

#define LOV_USER_MAGIC_V1 0x0BD10BD0u
#define LOV_USER_MAGIC_V3 0x0BD30BD0u
#define LOV_USER_MAGIC_COMP_V1 0x0BD60BD0u
/* lov_user_md_v1/v3: magic, pattern, 16-byte object id, then the stripe size. */
#define LOV_STRIPE_SIZE_AT 24
#define LOV_MIN_SIZE 32
/* lov_comp_md_v1: a 32-byte header, then 48-byte entries whose lcme_offset (at byte 24 of the
 * entry) locates the component's lov_user_md from the start of the attribute. */
#define COMP_HEADER_SIZE 32
#define COMP_ENTRY_SIZE 48
#define COMP_ENTRY_OFFSET_AT 24

const char *sluice_stripe_source_name(enum sluice_stripe_source s)
{
    switch (s) {
    case SLUICE_STRIPE_FROM_ENV:
        return "SLUICE_STRIPING_UNIT";
    case SLUICE_STRIPE_FROM_LUSTRE:
        return "lustre layout";
    default:
        return "default";
    }
}

/* Lustre stores its layouts little-endian; every machine we run on is too, but say so. */
static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int plain_layout(const unsigned char *p, size_t len, uint64_t *unit)
{
    if (len < LOV_MIN_SIZE)
        return -EINVAL;
    uint32_t magic = le32(p);
    if (magic != LOV_USER_MAGIC_V1 && magic != LOV_USER_MAGIC_V3)
        return -EINVAL;
    uint32_t size = le32(p + LOV_STRIPE_SIZE_AT);
    if (size == 0)
        return -EINVAL;
    *unit = size;
    return 0;
}

int sluice_stripe_from_lov(const void *value, size_t len, uint64_t *unit)
{
    const unsigned char *p = value;
    if (!p || !unit || len < 4)
        return -EINVAL;
    if (le32(p) != LOV_USER_MAGIC_COMP_V1)
        return plain_layout(p, len, unit);
    /* Composite (progressive file layout): the first component covers the start of the file,
     * where a container's header and first domains live. */
    if (len < COMP_HEADER_SIZE + COMP_ENTRY_SIZE)
        return -EINVAL;
    uint32_t off = le32(p + COMP_HEADER_SIZE + COMP_ENTRY_OFFSET_AT);
    if (off >= len)
        return -EINVAL;
    return plain_layout(p + off, len - off, unit);
}

uint64_t sluice_stripe_clamp(uint64_t unit, uint64_t block)
{
    if (block == 0)
        block = 1;
    if (unit < block)
        unit = block;
    uint64_t r = (unit + block - 1) / block * block;
    return r < unit ? unit / block * block : r; /* overflow: round down instead */
}

static int lustre_unit(const char *dir, uint64_t *unit)
{
    struct statfs fs;
    if (SLUICE_REAL(statfs)(dir, &fs) != 0 || (uint32_t)fs.f_type != SLUICE_LUSTRE_SUPER_MAGIC)
        return -ENOENT;
    unsigned char buf[4096];
    ssize_t n = SLUICE_REAL(getxattr)(dir, "lustre.lov", buf, sizeof buf);
    if (n <= 0)
        return -ENOENT;
    return sluice_stripe_from_lov(buf, (size_t)n, unit);
}

uint64_t sluice_stripe_unit(const char *dir, uint64_t configured, uint64_t block,
                            enum sluice_stripe_source *source)
{
    uint64_t unit = SLUICE_STRIPE_DEFAULT;
    enum sluice_stripe_source src = SLUICE_STRIPE_FROM_DEFAULT;
    uint64_t lu = 0;
    if (configured) {
        unit = configured;
        src = SLUICE_STRIPE_FROM_ENV;
    } else if (dir && lustre_unit(dir, &lu) == 0) {
        unit = lu;
        src = SLUICE_STRIPE_FROM_LUSTRE;
    }
    if (source)
        *source = src;
    return sluice_stripe_clamp(unit, block);
}
