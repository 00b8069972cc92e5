/* SPDX-License-Identifier: MIT */
/* Stripe unit of the file system that receives a container: the size that two-phase file
 * domains and aggregator requests are aligned to.
 *
 * Order of precedence:
 *   1. SLUICE_STRIPING_UNIT when set (non-zero);
 *   2. on Lustre (statfs f_type LL_SUPER_MAGIC), the stripe size of the target directory's
 *      default layout, read from its "lustre.lov" extended attribute (lov_user_md v1/v3, or the
 *      first component of a composite layout); no liblustreapi is needed;
 *   3. SLUICE_STRIPE_DEFAULT (1 MiB: Lustre's and GPFS's most common block/stripe size, and a
 *      good request size for local disks).
 * The result is never below the container block size and is rounded up to a multiple of it,
 * so that stripes always start on block boundaries. */
#ifndef SLUICE_CKPT_TWOPHASE_STRIPE_H
#define SLUICE_CKPT_TWOPHASE_STRIPE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLUICE_STRIPE_DEFAULT (UINT64_C(1) << 20)
#define SLUICE_LUSTRE_SUPER_MAGIC 0x0BD00BD0u

enum sluice_stripe_source {
    SLUICE_STRIPE_FROM_ENV = 0, /* SLUICE_STRIPING_UNIT */
    SLUICE_STRIPE_FROM_LUSTRE,  /* the directory's Lustre layout */
    SLUICE_STRIPE_FROM_DEFAULT, /* SLUICE_STRIPE_DEFAULT */
};
const char *sluice_stripe_source_name(enum sluice_stripe_source s);

/* The stripe size in a "lustre.lov" attribute value; 0 and *unit set, or -EINVAL when the
 * value is not a layout we understand (wrong magic, too short, zero stripe size). */
int sluice_stripe_from_lov(const void *value, size_t len, uint64_t *unit);

/* max(unit, block) rounded up to a multiple of block (block 0 is taken as 1). */
uint64_t sluice_stripe_clamp(uint64_t unit, uint64_t block);

/* The stripe unit for containers created in `dir`: `configured` (SLUICE_STRIPING_UNIT, 0 when
 * unset), else the Lustre layout of dir, else the default; then clamped to `block`. *source
 * (optional) says where it came from. Never fails: any error reading the file system means the
 * default. */
uint64_t sluice_stripe_unit(const char *dir, uint64_t configured, uint64_t block,
                            enum sluice_stripe_source *source);

#ifdef __cplusplus
}
#endif
#endif
