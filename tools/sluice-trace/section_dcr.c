/* SPDX-License-Identifier: MIT */
/* Summary section: collective replacement and copy removal in distributed OpenCL (docs/DAG.md,
 * section 2), from rank 0's records: per operation the collectives it started (CL_DIST_DATA of
 * directions 2 to 5) with their bytes, and the commands they replaced (CL_DCR); then the program
 * data rank 0 moved through MPI itself (an allgather among serving ranks moves none). */
#include <string.h>

#include "summary.h"
#include "trace/trace.h"

enum { OP_BCAST, OP_SCATTER, OP_GATHER, OP_ALLGATHER, OP_P2P, NOPS };
static const char *const names[NOPS] = {"bcast", "scatter", "gather", "allgather", "p2p"};

struct tally {
    uint64_t colls[NOPS], bytes[NOPS], cmds[NOPS];
    uint64_t sent, received; /* program data rank 0 moved through MPI */
};

static void tally_file(struct tally *t, const struct sluice_trace_file *f)
{
    int k_dcr = trace_kind_number(f, "CL_DCR"), k_data = trace_kind_number(f, "CL_DIST_DATA");
    if (k_dcr < 0 && k_data < 0)
        return;
    for (size_t th = 0; th < f->nthreads; th++)
        for (uint64_t e = 0; e < f->threads[th].info.events; e++) {
            const struct sluice_tf_event *ev = &f->threads[th].events[e];
            if ((int)ev->kind == k_data && ev->c <= 5) {
                if (ev->c >= 2) { /* 2 bcast, 3 scatter, 4 gather, 5 allgather */
                    t->colls[ev->c - 2]++;
                    t->bytes[ev->c - 2] += ev->b;
                }
                if (ev->c == 0 || ev->c == 2 || ev->c == 3)
                    t->sent += ev->b;
                else if (ev->c == 1 || ev->c == 4)
                    t->received += ev->b;
            } else if ((int)ev->kind == k_dcr) {
                const char *n = sluice_trace_file_string(f, ev->a);
                for (int op = 0; n != NULL && op < NOPS; op++)
                    if (strcmp(n, names[op]) == 0)
                        t->cmds[op]++;
            }
        }
}

static void print_dcr(const struct summary_ctx *ctx)
{
    const struct trace_set *set = ctx->set;
    struct tally t = {0};
    for (size_t r = 0; r < set->nranks; r++)
        if (set->ranks[r].rank == 0)
            for (size_t i = 0; i < set->ranks[r].nfiles; i++)
                tally_file(&t, set->ranks[r].files[i]);
    uint64_t any = t.sent + t.received;
    for (int op = 0; op < NOPS; op++)
        any += t.cmds[op];
    if (any == 0)
        return;
    FILE *o = ctx->out;
    summary_heading(ctx, "Collective replacement");
    fprintf(o, "  %-10s %11s %12s %17s\n", "operation", "collectives", "bytes", "commands replaced");
    for (int op = 0; op < NOPS; op++) {
        char b[32];
        if (op == OP_P2P)
            fprintf(o, "  %-10s %11s %12s %17llu  (copy removal: rank to rank)\n", names[op], "-", "-",
                    (unsigned long long)t.cmds[op]);
        else
            fprintf(o, "  %-10s %11llu %12s %17llu%s\n", names[op], (unsigned long long)t.colls[op],
                    summary_bytes((double)t.bytes[op], b, sizeof b), (unsigned long long)t.cmds[op],
                    op == OP_ALLGATHER ? "  (among serving ranks: none through rank 0)" : "");
    }
    char s[32], r[32];
    fprintf(o, "  rank 0's program data through MPI: %s sent, %s received\n",
            summary_bytes((double)t.sent, s, sizeof s), summary_bytes((double)t.received, r, sizeof r));
}

SUMMARY_SECTION(dcr_section, "Collective replacement", 55, print_dcr)
