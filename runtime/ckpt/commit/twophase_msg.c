/* SPDX-License-Identifier: MIT */
/* One message per (writer, aggregator, round): the datatype of its spans (twophase_msg.h). */
#include "ckpt/commit/twophase_msg.h"

#include <errno.h>
#include <stdlib.h>

int commit_tp_msg_make(unsigned char **ptr, int *len, size_t n, struct commit_tp_msg *out)
{
    out->type = MPI_DATATYPE_NULL;
    out->bytes = 0;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        out->bytes += (uint64_t)len[i];
        if (m && ptr[m - 1] + len[m - 1] == ptr[i]) {
            len[m - 1] += len[i];
            continue;
        }
        ptr[m] = ptr[i];
        len[m++] = len[i];
    }
    if (m <= 1) {
        out->buf = m ? ptr[0] : NULL;
        out->count = m ? len[0] : 0;
        out->type = MPI_BYTE;
        return 0;
    }
    MPI_Aint *disp = malloc(m * sizeof *disp);
    if (!disp)
        return -ENOMEM;
    for (size_t i = 0; i < m; i++)
        MPI_Get_address(ptr[i], &disp[i]);
    MPI_Datatype t;
    int rc = MPI_Type_create_hindexed((int)m, len, disp, MPI_BYTE, &t);
    free(disp);
    if (rc != MPI_SUCCESS)
        return -ENOMEM;
    MPI_Type_commit(&t);
    out->buf = MPI_BOTTOM;
    out->count = 1;
    out->type = t;
    return 0;
}

void commit_tp_msg_done(struct commit_tp_msg *m)
{
    if (m->type != MPI_DATATYPE_NULL && m->type != MPI_BYTE)
        MPI_Type_free(&m->type);
    m->type = MPI_DATATYPE_NULL;
}
