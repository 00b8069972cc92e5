/* SPDX-License-Identifier: MIT */
/* Objects named by ids that rank 0 chose (docs/DISTRIBUTED.md, "Object ids"). Rank 0 creates a
 * buffer, sub-buffer, image, queue or sampler on a serving rank without waiting for its real
 * handle: it picks the object's id itself (one id space per serving rank), sends the creation
 * with it, and names the object by that id in every later request, which MPI delivers after the
 * creation (one sender, one tag). The serving rank keeps id -> real handle here, and every rid it
 * reads from a request goes through sluice_rid_real. Ids are never reused.
 * A creation that failed here is kept as its error: every request that names the id fails with
 * it (sluice_rid_take_error), so the failure surfaces at the object's first use or query. */
#ifndef SLUICE_CL_SERVE_REMOTE_IDS_H
#define SLUICE_CL_SERVE_REMOTE_IDS_H

#include <stdint.h>

/* The bit that tells a chosen id from a real address (user-space addresses stay below 2^57). */
#define SLUICE_RID_CHOSEN (UINT64_C(1) << 62)

static inline int sluice_rid_is_chosen(uint64_t rid)
{
    return (rid & SLUICE_RID_CHOSEN) != 0;
}

/* What creating `id` gave: its real handle, or the error (handle NULL). */
void sluice_rid_bind(uint64_t id, void *handle, int32_t err);
/* The real handle named by rid, as a word: rid itself unless it is a chosen id; 0 for an id whose
 * creation failed or that is unknown (the thread's error is then set, see below). */
uint64_t sluice_rid_real(uint64_t rid);
/* The id was released: later requests naming it find nothing. */
void sluice_rid_forget(uint64_t id);
/* The error of the first failed id this thread looked up since its last call (0: none), cleared. */
int32_t sluice_rid_take_error(void);

#endif
