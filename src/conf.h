/*
 * conf.h - the configuration model of targets and probes, and its
 * validation, free of collectd so it is tested on its own. The plugin maps
 * collectd's config tree onto these setters; the messages they write are
 * what the operator reads in the log, so each names the option, the value
 * and what is allowed.
 *
 * Keys are matched case-insensitively (as collectd does). Values arrive as
 * strings (numbers formatted by the caller). Every option's key, default,
 * range, unit and help text is declared once, in the table of options.c
 * (options.h); the setters, the initialisers and the messages read it.
 */
#ifndef DP_CONF_H
#define DP_CONF_H

#include "conftypes.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* Defaults for a target / a probe with the given name. Names longer than
 * DP_NAME_MAX - 1 (kept cut, flagged name_too_long) or with characters
 * other than [A-Za-z0-9_.-] make the later check fail. */
void dp_target_conf_init(dp_target_conf_t *t, const char *name);
void dp_probe_conf_init(dp_probe_conf_t *p, const char *name);

/* Sets one option from its string value. 0, or -EINVAL with a message in
 * err ("Option \"QueueDepth\": value \"0\" is invalid: allowed integers 1
 * to 256"); -ENOENT
 * for an unknown key (message lists the known keys). */
int dp_target_conf_set(dp_target_conf_t *t, const char *key, const char *val,
                       char *err, size_t errlen);
int dp_probe_conf_set(dp_probe_conf_t *p, const char *key, const char *val,
                      char *err, size_t errlen);

/* Adds a probe (copied) to the target; -ENOSPC past DP_PROBES_MAX, -EEXIST
 * for a duplicate name (message in err). */
int dp_target_conf_add_probe(dp_target_conf_t *t, const dp_probe_conf_t *p,
                             char *err, size_t errlen);

/* The default probe set for a target without Probe blocks:
 * randread-qd1 (8k, QD1, 0.5 s), randread-qd32 (8k, QD32, 0.25 s),
 * seqread (1M, QD4, 0.25 s): about 1 s of a 60 s interval, within the
 * default 2 % duty cycle. */
void dp_target_conf_default_probes(dp_target_conf_t *t);

/* The checks of one probe that need no target, for every front-end (the
 * plugin and `watch` through dp_target_conf_finish, `run` directly): its
 * I/O buffers, QueueDepth x BlockSize, within DP_PROBE_BUFFER_MAX_BYTES.
 * 0, or -EINVAL with the message in err ("Probe \"p\" QueueDepth 256 x
 * BlockSize 67108864 needs 16384 MiB of I/O buffers; allowed at most 256
 * MiB per probe (lower QueueDepth or BlockSize)"). */
int dp_probe_conf_check(const dp_probe_conf_t *p, char *err, size_t errlen);

/* Whole-block checks after all options are set: a name, exactly one of
 * Path/Device, no write probe on a Device, each probe's
 * dp_probe_conf_check, probe time within the interval.
 * Fills in the default probes when there are none. 0 or -EINVAL + err. */
int dp_target_conf_finish(dp_target_conf_t *t, char *err, size_t errlen);

void dp_plugin_conf_init(dp_plugin_conf_t *c);
int dp_plugin_conf_set(dp_plugin_conf_t *c, const char *key, const char *val,
                       char *err, size_t errlen);

/* Across targets: two that name one probe file (a directory and its
 * diskprobe.probe, a trailing slash, "x/../x", "./", "//") or one device
 * would lay out and probe each other's file. The paths are compared
 * normalised (dp_conf_path_normalise) and, where both answer, as the
 * kernel resolves them (the same directory or file, through a symlink,
 * a bind mount, a hard link; the same device number): looked at in
 * child processes, DP_CONF_ANSWER_NS at most, so a path on a hung disk
 * is compared by name only. 0, or -EINVAL with both names in err. */
int dp_conf_check_duplicates(const dp_target_conf_t *t, size_t n, char *err,
                             size_t errlen);

/* An absolute path lexically normalised into buf: "//" and "/./" as one
 * slash, "x/.." dropped (".." at the root stays there), no trailing
 * slash. Nothing is looked up: symlinks are the kernel's (see above). */
void dp_conf_path_normalise(const char *path, char *buf, size_t len);

/* Checks a name: 1..DP_NAME_MAX-1 chars of [A-Za-z0-9_.-]. */
int dp_conf_name_ok(const char *name);

/* The same check with its message, naming what ("Target", "Probe") and
 * the whole name as given (a front-end checks a name before it is stored:
 * one that does not fit is refused, never cut to DP_NAME_MAX - 1, so two
 * long names that share their start cannot become one). 0 or -EINVAL. */
int dp_conf_name_check(const char *what, const char *name, char *err,
                       size_t errlen);

#endif /* DP_CONF_H */
