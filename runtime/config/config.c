/* SPDX-License-Identifier: MIT */
/* Parsing and validation of SLUICE_* variables (pure: used by the library, the launcher and
 * the unit tests). The table comes from vars.def. */
#include "config/config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const struct sluice_cfg_desc sluice_cfg_table[SLUICE_CFG_COUNT] = {
#define SLUICE_VAR(id, type, def, opt, accepts, help)                                                        \
    {"SLUICE_" #id, SLUICE_TYPE_##type, def, opt, accepts, help},
#include "config/vars.def"
#undef SLUICE_VAR
};

struct sluice_config sluice_config;

int sluice_parse_uint(const char *s, uint64_t *out)
{
    if (s == NULL || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

int sluice_parse_size(const char *s, uint64_t *out)
{
    static const struct {
        const char *suffix;
        uint64_t mult;
    } units[] = {
        {"", 1},
        {"B", 1},
        {"K", 1ULL << 10},
        {"KB", 1ULL << 10},
        {"KiB", 1ULL << 10},
        {"M", 1ULL << 20},
        {"MB", 1ULL << 20},
        {"MiB", 1ULL << 20},
        {"G", 1ULL << 30},
        {"GB", 1ULL << 30},
        {"GiB", 1ULL << 30},
        {"T", 1ULL << 40},
        {"TB", 1ULL << 40},
        {"TiB", 1ULL << 40},
    };
    if (s == NULL || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0)
        return -1;
    while (*end == ' ')
        end++;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcasecmp(end, units[i].suffix) == 0) {
            if (v > UINT64_MAX / units[i].mult)
                return -1;
            *out = v * units[i].mult;
            return 0;
        }
    }
    return -1;
}

int sluice_parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"1", "y", "yes", "on", "true", "enable", "enabled"};
    static const char *const no[] = {"0", "n", "no", "off", "false", "disable", "disabled", ""};
    if (s == NULL)
        return -1;
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        if (strcasecmp(s, yes[i]) == 0)
            return *out = true, 0;
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        if (strcasecmp(s, no[i]) == 0)
            return *out = false, 0;
    return -1;
}

size_t sluice_name_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return 1000;
    size_t prev[65], cur[65];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = (toupper((unsigned char)a[i - 1]) == toupper((unsigned char)b[j - 1])) ? 0 : 1;
            size_t best = prev[j - 1] + cost;
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            cur[j] = best;
        }
        memcpy(prev, cur, sizeof(size_t) * (lb + 1));
    }
    return prev[lb];
}

int sluice_config_nearest(const char *name)
{
    int best = -1;
    size_t best_d = (size_t)-1;
    for (int i = 0; i < SLUICE_CFG_COUNT; i++) {
        size_t d = sluice_name_distance(name, sluice_cfg_table[i].name);
        if (d < best_d) {
            best_d = d;
            best = i;
        }
    }
    /* Close enough to be a typo: a few edits, relative to the name's length. */
    size_t len = strlen(name);
    size_t limit = len > 12 ? 4 : 3;
    return best_d <= limit ? best : -1;
}

static int check_enum(const char *accepts, const char *v)
{
    size_t n = strlen(v);
    const char *p = accepts;
    while (*p) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncasecmp(p, v, n) == 0)
            return 0;
        if (!bar)
            break;
        p = bar + 1;
    }
    return -1;
}

/* "MIN..MAX" at the start of the accepts text of a UINT variable. Parsed by hand: every process
 * checks every default at start, and sscanf's code is pages of libc it would touch for nothing. */
static int check_range(const char *accepts, uint64_t v)
{
    char *end;
    if (*accepts < '0' || *accepts > '9')
        return 0;
    unsigned long long lo = strtoull(accepts, &end, 10);
    if (end[0] != '.' || end[1] != '.' || end[2] < '0' || end[2] > '9')
        return 0;
    unsigned long long hi = strtoull(end + 2, NULL, 10);
    return (v >= lo && v <= hi) ? 0 : -1;
}

/* Every pattern must be non-empty and contain %r (pattern.c checks the rest). */
static int check_patterns(const char *v)
{
    const char *p = v;
    while (1) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        if (len == 0)
            return -1;
        int count = 0;
        for (size_t i = 0; i + 1 < len; i++)
            if (p[i] == '%' && p[i + 1] == 'r')
                count++;
        if (count < 1)
            return -1;
        if (!colon)
            return 0;
        p = colon + 1;
    }
}

/* Values are copied: the program may later change or free its environment strings. Defaults are
 * static and kept as they are. A copy that cannot be made falls back to the original string. */
static const char *keep(const char *v)
{
    if (*v == '\0')
        return "";
    char *copy = strdup(v);
    return copy ? copy : v;
}

static int parse_one(struct sluice_config *cfg, int id, const char *v)
{
    const struct sluice_cfg_desc *d = &sluice_cfg_table[id];
    uint64_t u = 0;
    bool b = false;
    switch (d->type) {
    case SLUICE_TYPE_BOOL:
        if (sluice_parse_bool(v, &b) != 0)
            return -1;
        break;
    case SLUICE_TYPE_SIZE:
        if (sluice_parse_size(v, &u) != 0)
            return -1;
        if (id == SLUICE_CFG_BLOCK_SIZE && (u < 512 || u > (64u << 20) || (u & (u - 1)) != 0))
            return -1;
        if (id == SLUICE_CFG_DIST_CHUNK && u != 0 && (u < 4096 || u > (1u << 30)))
            return -1;
        break;
    case SLUICE_TYPE_UINT:
        if (sluice_parse_uint(v, &u) != 0 || check_range(d->accepts, u) != 0)
            return -1;
        break;
    case SLUICE_TYPE_ENUM:
        if (check_enum(d->accepts, v) != 0)
            return -1;
        break;
    case SLUICE_TYPE_PATTERNS:
        if (*v != '\0' && check_patterns(v) != 0)
            return -1;
        break;
    case SLUICE_TYPE_STRING:
    case SLUICE_TYPE_PATH:
        break;
    }
    /* Store into the typed field. The switch over ids is generated from vars.def. */
    switch (id) {
#define SLUICE_STORE_BOOL(id) cfg->id = b
#define SLUICE_STORE_SIZE(id) cfg->id = u
#define SLUICE_STORE_UINT(id) cfg->id = u
#define SLUICE_STORE_STRING(id) cfg->id = keep(v)
#define SLUICE_STORE_PATH(id) cfg->id = keep(v)
#define SLUICE_STORE_ENUM(id) cfg->id = keep(v)
#define SLUICE_STORE_PATTERNS(id) cfg->id = keep(v)
#define SLUICE_VAR(id, type, def, opt, accepts, help)                                                        \
    case SLUICE_CFG_##id:                                                                                    \
        SLUICE_STORE_##type(id);                                                                             \
        break;
#include "config/vars.def"
#undef SLUICE_VAR
    }
    return 0;
}

int sluice_config_parse(struct sluice_config *cfg, char *const *envp, char *err, size_t errlen,
                        void (*warn)(const char *line, void *ctx), void *ctx)
{
    memset(cfg, 0, sizeof *cfg);
    for (int i = 0; i < SLUICE_CFG_COUNT; i++)
        if (parse_one(cfg, i, sluice_cfg_table[i].def) != 0) {
            snprintf(err, errlen, "internal error: bad default for %s", sluice_cfg_table[i].name);
            return -1;
        }
    for (char *const *e = envp; e && *e; e++) {
        if (strncmp(*e, "SLUICE_", 7) != 0)
            continue;
        const char *eq = strchr(*e, '=');
        if (!eq)
            continue;
        size_t nlen = (size_t)(eq - *e);
        const char *value = eq + 1;
        int id = -1;
        for (int i = 0; i < SLUICE_CFG_COUNT; i++)
            if (strlen(sluice_cfg_table[i].name) == nlen && strncmp(sluice_cfg_table[i].name, *e, nlen) == 0)
                id = i;
        if (id < 0) {
            char name[128];
            snprintf(name, sizeof name, "%.*s%s", (int)(nlen < 100 ? nlen : 100), *e,
                     nlen > 100 ? "..." : "");
            if (warn) {
                char line[256];
                int near = sluice_config_nearest(name);
                if (near >= 0)
                    snprintf(line, sizeof line, "unknown variable %s ignored (did you mean %s?)", name,
                             sluice_cfg_table[near].name);
                else
                    snprintf(line, sizeof line, "unknown variable %s ignored (see docs/ENV.md)", name);
                warn(line, ctx);
            }
            continue;
        }
        cfg->any_set = true;
        cfg->is_set[id] = true;
        if (parse_one(cfg, id, value) != 0) {
            /* A long value is shown by its head, marked, so that what is expected always fits. */
            size_t vlen = strlen(value);
            if (vlen <= 160)
                snprintf(err, errlen, "invalid value %s='%s': expected %s", sluice_cfg_table[id].name, value,
                         sluice_cfg_table[id].accepts);
            else
                snprintf(err, errlen, "invalid value %s='%.160s...' (%zu bytes): expected %s",
                         sluice_cfg_table[id].name, value, vlen, sluice_cfg_table[id].accepts);
            return -1;
        }
    }
    return 0;
}

int sluice_config_parse_one(struct sluice_config *cfg, sluice_cfg_id id, const char *value)
{
    return id >= 0 && id < SLUICE_CFG_COUNT && value != NULL ? parse_one(cfg, (int)id, value) : -1;
}

const char *sluice_config_early(sluice_cfg_id id)
{
    const char *parsed = NULL;
    switch (id) {
#define SLUICE_EARLY_BOOL(id) return NULL
#define SLUICE_EARLY_SIZE(id) return NULL
#define SLUICE_EARLY_UINT(id) return NULL
#define SLUICE_EARLY_STRING(id) parsed = sluice_config.id
#define SLUICE_EARLY_PATH(id) parsed = sluice_config.id
#define SLUICE_EARLY_ENUM(id) parsed = sluice_config.id
#define SLUICE_EARLY_PATTERNS(id) parsed = sluice_config.id
#define SLUICE_VAR(id, type, def, opt, accepts, help)                                                        \
    case SLUICE_CFG_##id:                                                                                    \
        SLUICE_EARLY_##type(id);                                                                             \
        break;
#include "config/vars.def"
#undef SLUICE_VAR
    default:
        return NULL;
    }
    if (parsed != NULL)
        return parsed;
    /* Not parsed yet: the environment's value when it is valid, else the default (the
     * constructor will stop the program over an invalid one). */
    struct sluice_config one;
    const char *v = getenv(sluice_cfg_table[id].name);
    if (v != NULL && parse_one(&one, (int)id, v) == 0)
        return v;
    return sluice_cfg_table[id].def;
}
