/*
 * diskprobe.c - the collectd glue around the diskprobe core library.
 *
 * The whole monitoring pipeline -- scheduling, the device view, fail-slow
 * among peers, the health verdict and its state file -- is the library's
 * monitor (monitor.h), shared with `diskprobe watch` and `replay`. This
 * file maps collectd's config tree onto the configuration model (conf.h)
 * and the monitor's output onto collectd: values onto value lists, notices
 * onto notifications, log lines onto plugin_log (a broken target's
 * repeated complaints through c_complain).
 *
 * Threads: the monitor's workers probe; collectd's read thread runs the
 * monitor's read (diskprobe_read). Log lines and notices also arrive on
 * the workers' threads (plugin_dispatch_notification and the per-target
 * c_complain state are safe there: one worker owns a target at a time).
 */
#include "core/daemon/collectd.h"
#include "core/daemon/plugin.h"
#include "core/daemon/utils_complain.h"
#include "core/utils/common/common.h"

#include "conf.h"
#include "monitor.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLUGIN_NAME "diskprobe"

typedef struct {
  dp_plugin_conf_t conf;
  dp_target_conf_t *targets;
  size_t ntargets;
  char **globs; /* DeviceStats */
  size_t nglobs;
  c_complain_t *complaints; /* one per target, used by its worker */
  dp_monitor_t *monitor;
} diskprobe_ctx_t;

/* collectd's config, init and shutdown callbacks take no user data. */
static diskprobe_ctx_t *diskprobe_ctx;

/* ---- configuration ----------------------------------------------------- */

/* A config number as the library's strict decimal parsers take it: no
 * exponent (LatencyCeiling 0.00001 is "0.00001", not "1e-05"), at most
 * nanosecond digits, no trailing zeros ("30", "0.5"). */
static void diskprobe_number_string(double x, char *buf, size_t len) {
  if (x == (double)(long long)x && fabs(x) < 1e18) {
    snprintf(buf, len, "%lld", (long long)x);
    return;
  }
  snprintf(buf, len, "%.9f", x);
  char *dot = strchr(buf, '.');
  if (dot == NULL)
    return; /* inf, nan: refused by the parser with the value */
  char *e = buf + strlen(buf) - 1;
  while (e > dot && *e == '0')
    *e-- = '\0';
  if (e == dot)
    *e = '\0';
}

/* One option value as a string, as conf.c wants it. */
static int diskprobe_value_string(const oconfig_item_t *ci, char *buf,
                                  size_t len) {
  if (ci->values_num != 1) {
    ERROR(PLUGIN_NAME " plugin: Option \"%s\" needs exactly one value.",
          ci->key);
    return -1;
  }
  const oconfig_value_t *v = &ci->values[0];
  switch (v->type) {
  case OCONFIG_TYPE_STRING:
    snprintf(buf, len, "%s", v->value.string);
    return 0;
  case OCONFIG_TYPE_NUMBER:
    diskprobe_number_string(v->value.number, buf, len);
    return 0;
  case OCONFIG_TYPE_BOOLEAN:
    snprintf(buf, len, "%s", v->value.boolean ? "true" : "false");
    return 0;
  default:
    ERROR(PLUGIN_NAME " plugin: Option \"%s\": expected a string or a number.",
          ci->key);
    return -1;
  }
}

/* A block's name, whole: one that does not fit a name is refused here,
 * never cut (two long names sharing their start would become one). */
static const char *diskprobe_config_block_name(const oconfig_item_t *ci,
                                               const char *what,
                                               const char *where) {
  if (ci->values_num != 1 || ci->values[0].type != OCONFIG_TYPE_STRING) {
    ERROR(PLUGIN_NAME " plugin: %s<%s> needs exactly one string argument, "
                      "its name.",
          where, ci->key);
    return NULL;
  }
  const char *name = ci->values[0].value.string;
  char err[DP_NAME_MAX * 4 + 256];
  if (strlen(name) >= DP_NAME_MAX &&
      dp_conf_name_check(what, name, err, sizeof(err)) != 0) {
    ERROR(PLUGIN_NAME " plugin: %s%s", where, err);
    return NULL;
  }
  return name;
}

/* A key given twice in one block: refused, naming the block, the key and
 * both values (collectd hands every line over; taking the last silently
 * would drop what the operator wrote first, e.g. a drop-in's FileSize
 * beside the main file's). Blocks (<Target>, <Probe>) and DeviceStats,
 * a list, may repeat. */
static int diskprobe_config_repeated(const oconfig_item_t *ci,
                                     const char *where) {
  char a[512], b[512];
  for (int i = 0; i < ci->children_num; i++) {
    const oconfig_item_t *c = ci->children + i;
    if (c->children_num > 0 || strcasecmp(c->key, "Target") == 0 ||
        strcasecmp(c->key, "Probe") == 0 ||
        strcasecmp(c->key, "DeviceStats") == 0)
      continue;
    for (int j = 0; j < i; j++) {
      const oconfig_item_t *p = ci->children + j;
      if (p->children_num > 0 || strcasecmp(p->key, c->key) != 0)
        continue;
      if (diskprobe_value_string(p, a, sizeof(a)) != 0 ||
          diskprobe_value_string(c, b, sizeof(b)) != 0)
        return -1;
      ERROR(PLUGIN_NAME " plugin: %sOption \"%s\" is given twice: \"%s\" "
                        "and \"%s\"; give it once.",
            where, p->key, a, b);
      return -1;
    }
  }
  return 0;
}

static int diskprobe_config_probe(dp_target_conf_t *tc,
                                  const oconfig_item_t *ci) {
  char val[4096], err[512], where[2 * DP_NAME_MAX + 32];
  snprintf(where, sizeof(where), "Target \"%s\": ", tc->name);
  const char *name = diskprobe_config_block_name(ci, "Probe", where);
  if (name == NULL)
    return -1;
  snprintf(where, sizeof(where), "Target \"%s\", Probe \"%s\": ", tc->name,
           name);
  if (diskprobe_config_repeated(ci, where) != 0)
    return -1;
  dp_probe_conf_t p;
  dp_probe_conf_init(&p, name);
  for (int i = 0; i < ci->children_num; i++) {
    const oconfig_item_t *c = ci->children + i;
    if (diskprobe_value_string(c, val, sizeof(val)) != 0)
      return -1;
    if (dp_probe_conf_set(&p, c->key, val, err, sizeof(err)) != 0) {
      ERROR(PLUGIN_NAME " plugin: Target \"%s\", Probe \"%s\": %s", tc->name,
            name, err);
      return -1;
    }
  }
  if (dp_target_conf_add_probe(tc, &p, err, sizeof(err)) != 0) {
    ERROR(PLUGIN_NAME " plugin: Target \"%s\": %s", tc->name, err);
    return -1;
  }
  return 0;
}

static int diskprobe_config_target(diskprobe_ctx_t *ctx,
                                   const oconfig_item_t *ci) {
  char val[4096], err[512], where[DP_NAME_MAX + 16];
  const char *name = diskprobe_config_block_name(ci, "Target", "");
  if (name == NULL)
    return -1;
  snprintf(where, sizeof(where), "Target \"%s\": ", name);
  if (diskprobe_config_repeated(ci, where) != 0)
    return -1;
  for (size_t i = 0; i < ctx->ntargets; i++)
    if (strcmp(ctx->targets[i].name, name) == 0) {
      ERROR(PLUGIN_NAME " plugin: Target \"%s\" is defined twice.", name);
      return -1;
    }
  dp_target_conf_t *nt =
      realloc(ctx->targets, (ctx->ntargets + 1) * sizeof(*nt));
  if (nt == NULL)
    return -1;
  ctx->targets = nt;
  dp_target_conf_t *t = &ctx->targets[ctx->ntargets];
  dp_target_conf_init(t, name);
  for (int i = 0; i < ci->children_num; i++) {
    const oconfig_item_t *c = ci->children + i;
    if (strcasecmp(c->key, "Probe") == 0) {
      if (diskprobe_config_probe(t, c) != 0)
        return -1;
      continue;
    }
    if (c->children_num > 0) {
      ERROR(PLUGIN_NAME " plugin: Target \"%s\": unknown block <%s>: allowed "
                        "<Probe>.",
            name, c->key);
      return -1;
    }
    if (diskprobe_value_string(c, val, sizeof(val)) != 0)
      return -1;
    if (dp_target_conf_set(t, c->key, val, err, sizeof(err)) != 0) {
      ERROR(PLUGIN_NAME " plugin: Target \"%s\": %s", name, err);
      return -1;
    }
  }
  if (dp_target_conf_finish(t, err, sizeof(err)) != 0) {
    ERROR(PLUGIN_NAME " plugin: %s", err);
    return -1;
  }
  ctx->ntargets++;
  return 0;
}

/* DeviceStats "sd*" "nvme*n1" ...: more devices for the iostat view. */
static int diskprobe_config_devstats(diskprobe_ctx_t *ctx,
                                     const oconfig_item_t *ci) {
  if (ci->values_num < 1 || ci->children_num > 0) {
    ERROR(PLUGIN_NAME " plugin: Option \"DeviceStats\" needs one or more "
                      "device name globs, e.g. DeviceStats \"sd*\" "
                      "\"nvme*n1\".");
    return -1;
  }
  for (int i = 0; i < ci->values_num; i++) {
    const oconfig_value_t *v = &ci->values[i];
    char why[128] = "it is not a string";
    if (v->type != OCONFIG_TYPE_STRING ||
        dp_monitor_glob_check(v->value.string, why, sizeof(why)) != 0) {
      ERROR(PLUGIN_NAME " plugin: Option \"DeviceStats\": value %d is "
                        "invalid (%s): allowed kernel device names or globs "
                        "(\"sda\", \"nvme*n1\"), not paths.",
            i + 1, why);
      return -1;
    }
    char **ng = realloc(ctx->globs, (ctx->nglobs + 1) * sizeof(*ng));
    if (ng == NULL)
      return -1;
    ctx->globs = ng;
    if ((ng[ctx->nglobs] = strdup(v->value.string)) == NULL)
      return -1;
    ctx->nglobs++;
  }
  return 0;
}

static int diskprobe_config(oconfig_item_t *ci) {
  if (diskprobe_ctx == NULL) {
    if ((diskprobe_ctx = calloc(1, sizeof(*diskprobe_ctx))) == NULL)
      return -1;
    dp_plugin_conf_init(&diskprobe_ctx->conf);
  }
  char val[PATH_MAX], err[PATH_MAX + 512];
  if (diskprobe_config_repeated(ci, "") != 0)
    return -1;
  for (int i = 0; i < ci->children_num; i++) {
    const oconfig_item_t *c = ci->children + i;
    int rc;
    if (strcasecmp(c->key, "Target") == 0)
      rc = diskprobe_config_target(diskprobe_ctx, c);
    else if (strcasecmp(c->key, "DeviceStats") == 0)
      rc = diskprobe_config_devstats(diskprobe_ctx, c);
    else if ((rc = diskprobe_value_string(c, val, sizeof(val))) == 0 &&
             (rc = dp_plugin_conf_set(&diskprobe_ctx->conf, c->key, val, err,
                                      sizeof(err))) != 0)
      ERROR(PLUGIN_NAME " plugin: %s", err);
    else if (rc == 0 && strcasecmp(c->key, "StateDir") == 0 &&
             (rc = dp_monitor_state_dir_check(val, err, sizeof(err))) != 0) {
      /* one that does not answer (a hung disk) is not refused: the start
       * says it, once, and keeps no state file */
      if (rc == -ETIMEDOUT)
        rc = 0;
      else
        ERROR(PLUGIN_NAME " plugin: StateDir %s: %s", val, err);
    }
    if (rc != 0)
      return -1;
  }
  return 0;
}

/* `collectd -T` (test the plugins' reads) runs init, one read and
 * shutdown like a daemon, but must leave no trace: it reads the health
 * state file and never writes it. collectd tells a plugin nothing of it,
 * so its command line says: a -T among the options as collectd's getopt
 * ("BhC:tTP:f") takes them. */
static int diskprobe_config_test(void) {
  static char args[8192];
  FILE *f = fopen("/proc/self/cmdline", "re");
  if (f == NULL)
    return 0;
  size_t n = fread(args, 1, sizeof(args) - 1, f);
  fclose(f);
  args[n] = '\0';
  int skip_next = 1; /* argv[0] */
  for (size_t at = 0; at < n; at += strlen(args + at) + 1) {
    const char *a = args + at;
    if (skip_next) {
      skip_next = 0;
      continue;
    }
    if (strcmp(a, "--") == 0 || a[0] != '-')
      return 0;
    for (const char *o = a + 1; *o != '\0'; o++) {
      if (*o == 'T')
        return 1;
      if (*o == 'C' || *o == 'P') { /* its argument: the rest, or the next */
        skip_next = o[1] == '\0';
        break;
      }
    }
  }
  return 0;
}

/* ---- the monitor's output: values, notifications, log lines ----------- */

static void diskprobe_value(const dp_monitor_value_t *mv, void *arg) {
  (void)arg;
  value_t v[DP_MONITOR_VALUES_MAX];
  for (size_t i = 0; i < mv->n; i++) {
    if (mv->derive)
      v[i].derive = (derive_t)mv->v[i].counter;
    else
      v[i].gauge = mv->v[i].gauge;
  }
  value_list_t vl = VALUE_LIST_INIT;
  vl.values = v;
  vl.values_len = mv->n;
  vl.time = NS_TO_CDTIME_T(mv->time_ns);
  vl.interval = NS_TO_CDTIME_T(mv->interval_ns);
  sstrncpy(vl.plugin, PLUGIN_NAME, sizeof(vl.plugin));
  sstrncpy(vl.plugin_instance, mv->instance, sizeof(vl.plugin_instance));
  sstrncpy(vl.type, mv->type, sizeof(vl.type));
  sstrncpy(vl.type_instance, mv->type_instance, sizeof(vl.type_instance));
  plugin_dispatch_values(&vl);
}

static void diskprobe_notice(const dp_monitor_notice_t *mn, void *arg) {
  (void)arg;
  notification_t n = {.time = NS_TO_CDTIME_T(mn->time_ns)};
  n.severity = mn->severity == DP_MONITOR_FAILURE   ? NOTIF_FAILURE
               : mn->severity == DP_MONITOR_WARNING ? NOTIF_WARNING
                                                    : NOTIF_OKAY;
  sstrncpy(n.message, mn->message, sizeof(n.message));
  sstrncpy(n.host, hostname_g, sizeof(n.host));
  sstrncpy(n.plugin, PLUGIN_NAME, sizeof(n.plugin));
  sstrncpy(n.plugin_instance, mn->instance, sizeof(n.plugin_instance));
  sstrncpy(n.type, mn->type, sizeof(n.type));
  sstrncpy(n.type_instance, mn->type_instance, sizeof(n.type_instance));
  plugin_dispatch_notification(&n);
}

/* Complaints about a target are rate-limited by collectd's c_complain;
 * a line that also goes out as a notification is not logged twice. */
static void diskprobe_log(const dp_monitor_log_t *l, void *arg) {
  diskprobe_ctx_t *ctx = arg;
  c_complain_t *cc =
      l->target >= 0 && ctx->complaints ? &ctx->complaints[l->target] : NULL;
  switch (l->kind) {
  case DP_MONITOR_LOG_COMPLAINT:
    c_complain(l->level, cc, PLUGIN_NAME " plugin: %s", l->line);
    break;
  case DP_MONITOR_LOG_RELEASE:
    c_release(l->level, cc, PLUGIN_NAME " plugin: %s", l->line);
    break;
  default:
    if (!l->notified)
      plugin_log(l->level, PLUGIN_NAME " plugin: %s", l->line);
  }
}

static int diskprobe_read(user_data_t *ud) {
  dp_monitor_read(ud->data, CDTIME_T_TO_NS(cdtime()));
  return 0;
}

/* ---- init and shutdown --------------------------------------------------- */

static void diskprobe_ctx_free(diskprobe_ctx_t *ctx) {
  dp_monitor_free(ctx->monitor);
  free(ctx->targets);
  free(ctx->complaints);
  for (size_t i = 0; i < ctx->nglobs; i++)
    free(ctx->globs[i]);
  free(ctx->globs);
  free(ctx);
}

/* Every type of the metric table must be known to collectd: ours come
 * from diskprobe.types.db; without it, say so once. */
static int diskprobe_check_types(void) {
  const char *type;
  for (size_t i = 0; (type = dp_monitor_type_name(i)) != NULL; i++) {
    if (plugin_get_ds(type) == NULL) {
      ERROR(PLUGIN_NAME " plugin: type \"%s\" is not known: add "
                        "TypesDB \"<path>/diskprobe.types.db\" (and the "
                        "default types.db) to collectd.conf.",
            type);
      return -1;
    }
  }
  return 0;
}

static int diskprobe_init(void) {
  diskprobe_ctx_t *ctx = diskprobe_ctx;
  if (ctx == NULL || ctx->ntargets == 0) {
    NOTICE(PLUGIN_NAME " plugin: no Target configured; nothing to probe.");
    return 0;
  }
  if (diskprobe_check_types() != 0)
    return -1;
  if ((ctx->complaints = calloc(ctx->ntargets, sizeof(*ctx->complaints))) ==
      NULL)
    return -1;
  for (size_t i = 0; i < ctx->ntargets; i++)
    C_COMPLAIN_INIT(&ctx->complaints[i]);
  dp_monitor_conf_t mc = {.plugin = &ctx->conf,
                          .targets = ctx->targets,
                          .ntargets = ctx->ntargets,
                          .device_globs = (const char *const *)ctx->globs,
                          .nglobs = ctx->nglobs,
                          .host = hostname_g,
                          .state_dir = global_option_get("BaseDir"),
                          .state_read_only = diskprobe_config_test(),
                          /* reads as often as the shortest ProbeInterval,
                           * collectd's Interval at most */
                          .read_interval_max_ns =
                              CDTIME_T_TO_NS(plugin_get_interval()),
                          .thread_create = plugin_thread_create,
                          .prober = getenv("DISKPROBE_PROBER")};
  if (mc.state_dir == NULL)
    mc.state_dir = ".";
  /* every target's I/O in a prober process: a hung disk cannot hold
   * collectd's exit. DISKPROBE_PROBER: another build's (the test suite). */
  if (mc.prober == NULL || mc.prober[0] == '\0')
    mc.prober = dp_monitor_default_prober();
  dp_monitor_sink_t sink = {.arg = ctx,
                            .value = diskprobe_value,
                            .notice = diskprobe_notice,
                            .log = diskprobe_log};
  if (dp_monitor_new(&ctx->monitor, &mc, &sink) < 0 ||
      dp_monitor_start(ctx->monitor) < 0)
    return -1;
  return plugin_register_complex_read(
      NULL, PLUGIN_NAME, diskprobe_read,
      NS_TO_CDTIME_T(dp_monitor_read_interval_ns(ctx->monitor)),
      &(user_data_t){.data = ctx->monitor, .free_func = NULL});
}

static int diskprobe_shutdown(void) {
  diskprobe_ctx_t *ctx = diskprobe_ctx;
  if (ctx == NULL)
    return 0;
  if (ctx->monitor != NULL && dp_monitor_stop(ctx->monitor) > 0)
    return 0; /* a stuck worker still reads the targets' configuration */
  diskprobe_ctx_free(ctx);
  diskprobe_ctx = NULL;
  return 0;
}

void module_register(void) {
  plugin_register_complex_config(PLUGIN_NAME, diskprobe_config);
  plugin_register_init(PLUGIN_NAME, diskprobe_init);
  plugin_register_shutdown(PLUGIN_NAME, diskprobe_shutdown);
}
