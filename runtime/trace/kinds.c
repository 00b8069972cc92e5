/* SPDX-License-Identifier: MIT */
/* Tables expanded from events.def (see kinds.h). The meanings are the documentation strings of
 * events.def, so "which word is bytes" is decided by the same text a human reads. */
#include "trace/kinds.h"

#include <string.h>

const struct sluice_kind_info sluice_kinds[SLUICE_EV_COUNT] = {
#define SLUICE_EVENT(number, name, category, a, b, c) [number] = {#name, #category, {a, b, c}},
#include "trace/events.def"
#undef SLUICE_EVENT
};

/* events.def's numbers are dense: each is below the count of lines (here) and none repeats (a
 * repeated case label does not compile), so every slot of the table above is filled once. */
#define SLUICE_EVENT(number, name, category, a, b, c)                                                        \
    _Static_assert(number < SLUICE_EV_COUNT, "events.def: " #name "'s number leaves a gap");
#include "trace/events.def"
#undef SLUICE_EVENT

__attribute__((unused)) static int events_def_numbers_are_unique(unsigned kind)
{
    switch (kind) {
#define SLUICE_EVENT(number, name, category, a, b, c) case number:
#include "trace/events.def"
#undef SLUICE_EVENT
        return 1;
    default:
        return 0;
    }
}

const char *sluice_kind_name(unsigned kind)
{
    return kind < SLUICE_EV_COUNT ? sluice_kinds[kind].name : NULL;
}

int sluice_kind_bytes_word(unsigned kind)
{
    if (kind >= SLUICE_EV_COUNT)
        return -1;
    for (int w = 0; w < 3; w++)
        if (strcmp(sluice_kinds[kind].meaning[w], "bytes") == 0)
            return w;
    return -1;
}

int sluice_kind_word_is_string(unsigned kind, int w)
{
    if (kind >= SLUICE_EV_COUNT || w < 0 || w > 2)
        return 0;
    return strstr(sluice_kinds[kind].meaning[w], "string id") != NULL;
}
