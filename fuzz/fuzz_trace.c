/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the trace file reader (runtime/trace/reader.c) on arbitrary bytes, then
 * every lookup a tool makes on what it accepted. */
#include "trace/reader.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Section checksums stop a mutator at the first check. Unless bit 31 of the header's flags is
 * set, every section's FNV-1a and the END record's counts are recomputed after mutation, so
 * that the parsers of the sections behind them get fuzzed too. */
static void fix_checksums(unsigned char *d, size_t size)
{
    struct sluice_tf_header h;
    if (size < sizeof h)
        return;
    memcpy(&h, d, sizeof h);
    if (h.flags & 0x80000000u)
        return;
    uint64_t off = sizeof h, sections = 0;
    for (;;) {
        struct sluice_tf_section sh;
        if (size - off < sizeof sh)
            return;
        memcpy(&sh, d + off, sizeof sh);
        uint64_t padded = (sh.length + 7) & ~7ull, avail = size - off - sizeof sh;
        if (sh.length > avail || padded + 8 > avail)
            return;
        unsigned char *payload = d + off + sizeof sh;
        if (sh.tag == SLUICE_TF_END && sh.length == sizeof(struct sluice_tf_end)) {
            struct sluice_tf_end e;
            memcpy(&e, payload, sizeof e);
            e.sections = sections;
            e.bytes = off;
            e.header_fnv = sluice_fnv1a(SLUICE_FNV_INIT, d, sizeof h);
            memcpy(payload, &e, sizeof e);
        }
        uint64_t sum = sluice_fnv1a(sluice_fnv1a(SLUICE_FNV_INIT, payload, padded), &sh, sizeof sh);
        memcpy(payload + padded, &sum, 8);
        if (sh.tag == SLUICE_TF_END)
            return;
        off += sizeof sh + padded + 8;
        sections++;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[1024];
    struct sluice_trace_file *f = NULL;
    unsigned char *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    fix_checksums(copy, size);
    int rc = sluice_trace_file_parse(copy, size, "fuzz.sluicetrace", &f, err, sizeof err);
    free(copy); /* the reader keeps its own copy */
    if (rc != 0)
        return 0;
    for (uint32_t i = 0; i < f->nstrings && i < 4096; i++)
        (void)sluice_trace_file_string(f, i);
    for (uint32_t k = 0; k < f->nkinds + 2; k++)
        (void)sluice_trace_file_kind(f, k);
    for (size_t t = 0; t < f->nthreads; t++)
        for (uint64_t e = 0; e < f->threads[t].info.events && e < 4096; e++) {
            const struct sluice_tf_event *ev = &f->threads[t].events[e];
            (void)sluice_trace_file_callsite(f, ev->callsite);
            (void)sluice_trace_file_module(f, ev->a);
            (void)sluice_trace_file_string(f, ev->b);
        }
    for (size_t s = 0; s < f->ncallsites; s++)
        for (uint32_t d = 0; d < f->callsites[s].depth; d++)
            (void)sluice_trace_file_module(f, f->callsites[s].frames[d]);
    sluice_trace_file_free(f);
    return 0;
}
