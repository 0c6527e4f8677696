/*
 * options.h - every configuration option of diskprobe, declared once.
 *
 * One row per option: its collectd key, its `diskprobe` flag, where it
 * belongs (plugin-wide, a Target, a Probe), its kind, default, range, unit,
 * help text and where it is stored. Everything that knows about options
 * reads this table:
 *   - conf.c's setters and initialisers (defaults, ranges, messages),
 *   - the command line (getopt options, usage text, validation through the
 *     same setters),
 *   - the configuration reference in README.md (`diskprobe options
 *     --markdown` prints it; tests/shell/options_doc.sh compares).
 * Adding an option is adding a row (and the struct member it fills).
 *
 * Free of collectd. Nothing here logs: messages go into the caller's
 * buffer, and name the option, the value and what is allowed, e.g.
 *   Option "QueueDepth": value "0" is invalid: allowed integers 1 to 256
 */
#ifndef DP_OPTIONS_H
#define DP_OPTIONS_H

#include "conftypes.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum {
  DP_SCOPE_PLUGIN = 0, /* inside <Plugin diskprobe>, outside any Target */
  DP_SCOPE_TARGET,     /* inside <Target "NAME"> */
  DP_SCOPE_PROBE,      /* inside <Probe "NAME"> */
  DP_SCOPE_COUNT
} dp_opt_scope_t;

typedef enum {
  DP_OPT_SIZE,     /* bytes with k/M/G/T suffixes; range in bytes */
  DP_OPT_DURATION, /* seconds, or with a unit (500ms); range in seconds */
  DP_OPT_INTEGER,  /* a non-negative decimal integer */
  DP_OPT_REAL,     /* a non-negative decimal number (percentages) */
  DP_OPT_BOOL,     /* true or false */
  DP_OPT_ENUM,     /* one of `choices` */
  DP_OPT_PATH,     /* an absolute path; stored by `set` */
  DP_OPT_TEXT,     /* a name checked and stored by `set` */
  DP_OPT_LIST,     /* several values; read by the plugin itself, no storage */
  DP_OPT_BLOCK     /* a nested block (<Target>, <Probe>); documentation only */
} dp_opt_kind_t;

/* Which `diskprobe` subcommands take the option's flag. */
#define DP_CLI_RUN 1u
#define DP_CLI_WATCH 2u

typedef struct dp_option dp_option_t;

struct dp_option {
  const char *key;  /* collectd key, matched case-insensitively */
  const char *flag; /* long flag without "--", or NULL */
  unsigned cli;     /* DP_CLI_* mask of the commands that take `flag` */
  dp_opt_scope_t scope;
  dp_opt_kind_t kind;
  const char *def;   /* default as config text ("8k", "1"); NULL: none */
  double min, max;   /* range, in bytes / seconds / the number itself */
  uint64_t multiple; /* SIZE: the value must be a multiple */
  const char *rule;  /* appended to the allowed range, in words */
  const char *unit;  /* for the reference: "s", "%", NULL */
  const char *const *choices; /* ENUM: NULL-terminated names */
  const char *allowed_doc;    /* the reference's "allowed", if not derived */
  const char *default_doc;    /* the reference's "default", if not def */
  const char *help;           /* what it means (reference and --help) */
  /* Storage: offset and size of the member in the scope's struct
   * (dp_plugin_conf_t, dp_target_conf_t, dp_probe_conf_t), or a setter. */
  size_t offset, size;
  int (*set)(const dp_option_t *o, void *conf, const char *val, char *err,
             size_t errlen);
};

/* The table; *n gets the number of rows. */
const dp_option_t *dp_options(size_t *n);

/* The option with this key in this scope (case-insensitive), or NULL. */
const dp_option_t *dp_option_find(dp_opt_scope_t scope, const char *key);

/* Parses val by the option's kind, checks its range and stores it into
 * conf (the scope's struct). 0, or -EINVAL with the message in err. */
int dp_option_set(const dp_option_t *o, void *conf, const char *val, char *err,
                  size_t errlen);

/* Sets every option of the scope that has a default to that default. */
void dp_options_defaults(dp_opt_scope_t scope, void *conf);

/* "Pattern, BlockSize, QueueDepth" plus " and <Probe> blocks" when the
 * scope has blocks: the keys a message lists as allowed. */
void dp_options_keys(dp_opt_scope_t scope, char *buf, size_t len);

/* The allowed values in words, as the reference and --help print them
 * ("1–256", "0.01–60 s", "`true`, `false`"). */
void dp_option_allowed(const dp_option_t *o, char *buf, size_t len);

/* Prints the configuration reference (markdown tables) that README.md
 * holds between <!-- options:begin --> and <!-- options:end -->. */
void dp_options_markdown(FILE *f);

/* The default probe set of a target without Probe blocks, each probe set
 * from its defaults and the set's values through this table (conf.h's
 * dp_target_conf_default_probes describes the set). Returns how many were
 * written to out. */
size_t dp_options_default_probes(dp_probe_conf_t out[DP_PROBES_MAX]);

#endif /* DP_OPTIONS_H */
