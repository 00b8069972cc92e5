/* SPDX-License-Identifier: MIT */
/* Configuration: every SLUICE_* variable, read once at load and validated (vars.def). */
#ifndef SLUICE_CONFIG_CONFIG_H
#define SLUICE_CONFIG_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLUICE_CTYPE_BOOL bool
#define SLUICE_CTYPE_SIZE uint64_t
#define SLUICE_CTYPE_UINT uint64_t
#define SLUICE_CTYPE_STRING const char *
#define SLUICE_CTYPE_PATH const char *
#define SLUICE_CTYPE_ENUM const char *
#define SLUICE_CTYPE_PATTERNS const char *

typedef enum {
#define SLUICE_VAR(id, type, def, opt, accepts, help) SLUICE_CFG_##id,
#include "config/vars.def"
#undef SLUICE_VAR
    SLUICE_CFG_COUNT
} sluice_cfg_id;

typedef enum {
    SLUICE_TYPE_BOOL,
    SLUICE_TYPE_SIZE,
    SLUICE_TYPE_UINT,
    SLUICE_TYPE_STRING,
    SLUICE_TYPE_PATH,
    SLUICE_TYPE_ENUM,
    SLUICE_TYPE_PATTERNS
} sluice_cfg_type;

/* Parsed values. Strings point into the environment or into static defaults. */
struct sluice_config {
#define SLUICE_VAR(id, type, def, opt, accepts, help) SLUICE_CTYPE_##type id;
#include "config/vars.def"
#undef SLUICE_VAR
    bool is_set[SLUICE_CFG_COUNT]; /* the variable was present in the environment */
    bool any_set;                  /* at least one SLUICE_* variable: sluice is not inert */
};

/* Static description of one variable, for the launcher, --help and docs checks. */
struct sluice_cfg_desc {
    const char *name; /* "SLUICE_TRACE_DIR" */
    sluice_cfg_type type;
    const char *def;
    const char *option; /* launcher long option, without "--" */
    const char *accepts;
    const char *help;
};
extern const struct sluice_cfg_desc sluice_cfg_table[SLUICE_CFG_COUNT];

/* The process-wide configuration, filled by the library constructor before main. */
extern struct sluice_config sluice_config;

/* Parses `envp` (NULL-terminated "NAME=value" strings) into `cfg`. On the first invalid
 * value returns -1 and writes one line naming the variable, the value and what is accepted
 * into err. Unknown SLUICE_* names produce a warning line each through warn(), with the
 * nearest known name. Returns 0 on success. */
int sluice_config_parse(struct sluice_config *cfg, char *const *envp, char *err, size_t errlen,
                        void (*warn)(const char *line, void *ctx), void *ctx);

/* Parses and checks one variable's value into its field of cfg, as sluice_config_parse does:
 * 0, or -1 when the value is not what the variable accepts (for tools that read one variable). */
int sluice_config_parse_one(struct sluice_config *cfg, sluice_cfg_id id, const char *value);

/* A string-valued variable (STRING, PATH, ENUM, PATTERNS) also before the constructor parsed
 * the environment (an OpenCL call from another library's constructor can come first): the
 * parsed value, else the environment's when valid, else the default. NULL for other types. */
const char *sluice_config_early(sluice_cfg_id id);

/* Value parsers, exposed for tests and for other parts (e.g. DQL sizes). 0 on success. */
int sluice_parse_size(const char *s, uint64_t *out);
int sluice_parse_bool(const char *s, bool *out);
int sluice_parse_uint(const char *s, uint64_t *out);

/* Index of the known name nearest to `name` (edit distance), or -1 if none is close. */
int sluice_config_nearest(const char *name);

/* Edit distance of two names, letters compared without case, for "did you mean" hints (the
 * variables here, the launcher's options); 1000 when either is longer than 64 characters. */
size_t sluice_name_distance(const char *a, const char *b);

#ifdef __cplusplus
}
#endif
#endif
