/* SPDX-License-Identifier: MIT */
/* A serving rank's part of a chain broadcast (collective replacement, remote_proto.h): its pieces
 * come from the member before it, and each goes on to the member after it as soon as it arrived,
 * in order (the next member posts its receives in order, all with one tag). The command is done
 * only once its forwards are sent: they are sent from its staging or mapped buffer. */
#include <stdlib.h>

#include "cl/serve/remote_engine.h"

struct eng_chain {
    MPI_Comm comm;
    int next;            /* the member to forward to; -1: the last member */
    unsigned char *data; /* where the pieces arrive */
    size_t nfwd;         /* pieces forwarded so far */
    MPI_Request *fwd;    /* per piece */
};

int sluice_eng_chain_start(struct eng_cmd *c, unsigned char *to)
{
    MPI_Comm g = sluice_remote_group_comm(c->bcast);
    if (g == MPI_COMM_NULL)
        return MPI_ERR_COMM;
    struct eng_chain *ch = calloc(1, sizeof *ch);
    if (ch == NULL)
        return MPI_ERR_NO_MEM;
    ch->comm = g;
    ch->data = to;
    ch->next = sluice_remote_chain_next(g);
    if (ch->next >= 0 && (ch->fwd = malloc(c->npieces * sizeof *ch->fwd)) == NULL) {
        free(ch);
        return MPI_ERR_NO_MEM;
    }
    c->chain = ch;
    return sluice_remote_chain_post(g, to, c->size, c->reqs);
}

void sluice_eng_chain_forward(struct eng_cmd *c, size_t arrived)
{
    struct eng_chain *ch = c->chain;
    if (ch == NULL || ch->next < 0)
        return;
    while (ch->nfwd < arrived && ch->nfwd < c->npieces) {
        size_t i = ch->nfwd++;
        if (checked(sluice_remote_chain_forward(ch->comm, ch->next, ch->data, c->size, i, &ch->fwd[i]),
                    c->peer, "forwarding a broadcast") != MPI_SUCCESS) {
            ch->fwd[i] = MPI_REQUEST_NULL;
            c->status = CL_OUT_OF_RESOURCES;
        }
    }
}

void sluice_eng_chain_arrived(struct eng_cmd *c)
{
    if (c->chain == NULL || c->reqs == NULL)
        return;
    size_t arrived = c->chain->nfwd;
    while (arrived < c->npieces && c->reqs[arrived] == MPI_REQUEST_NULL)
        arrived++;
    sluice_eng_chain_forward(c, arrived);
}

int sluice_eng_chain_sent(struct eng_cmd *c)
{
    struct eng_chain *ch = c->chain;
    if (ch == NULL || ch->next < 0)
        return 1;
    if (ch->nfwd < c->npieces)
        return 0;
    for (size_t i = 0; i < c->npieces; i++) {
        int flag = 1;
        if (ch->fwd[i] != MPI_REQUEST_NULL && checked(MPI_Test(&ch->fwd[i], &flag, MPI_STATUS_IGNORE),
                                                      c->peer, "forwarding a broadcast") != MPI_SUCCESS) {
            ch->fwd[i] = MPI_REQUEST_NULL;
            flag = 1;
        }
        if (!flag)
            return 0;
    }
    return 1;
}

int sluice_eng_chain_pending(const struct eng_cmd *c)
{
    const struct eng_chain *ch = c->chain;
    if (ch == NULL || ch->next < 0)
        return 0;
    for (size_t i = 0; i < ch->nfwd; i++)
        if (ch->fwd[i] != MPI_REQUEST_NULL)
            return 1;
    return ch->nfwd < c->npieces;
}

void sluice_eng_chain_free(struct eng_cmd *c)
{
    if (c->chain != NULL)
        free(c->chain->fwd);
    free(c->chain);
    c->chain = NULL;
}
