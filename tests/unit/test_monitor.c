/*
 * test_monitor.c - the monitoring pipeline (src/monitor.c) with a
 * recording sink: offline, the judging part replay and the plugin share
 * (a skipped probe is not measured, a changed verdict is one notice with
 * the host and the rule, every round's values); live, one round on a fake
 * clock over a real probe file and a fake kernel AIO (libaio replaced
 * through -Wl,--wrap), with a fixture /proc/diskstats: the probe's values,
 * its verdict, the device view and every target's per-read values reach
 * the sink. The real path (the real collectd, watch and replay on loop
 * devices) is tests/shell/monitor_agree.sh and tests/shell/collectd_*.sh.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libaio.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "blockdev.h"
#include "clock.h"
#include "diskstats.h"
#include "fake_aio.h"
#include "health.h"
#include "metrics.h"
#include "monitor.h"
#include "peers.h"
#include "scheduler.h"

/* ---- a recording sink ---------------------------------------------------- */

typedef struct {
  char instance[80], type[64], type_instance[80];
  size_t n;
  double v0;
} rec_value_t;

typedef struct {
  rec_value_t values[512];
  size_t nvalues;
  dp_monitor_notice_t notices[16];
  char messages[16][1024];
  /* the notice's strings, copied: they live only during the callback */
  char type_instances[16][DP_NAME_MAX], types[16][64],
      instances[16][DP_NAME_MAX];
  size_t nnotices;
  dp_health_verdict_t verdicts[64];
  size_t nverdicts;
  size_t nsamples, ndevices, nlogs;
  char logs[4096]; /* the log lines, one per line */
} rec_t;

static void rec_value(const dp_monitor_value_t *v, void *arg) {
  rec_t *r = arg;
  if (r->nvalues == sizeof(r->values) / sizeof(r->values[0]))
    return;
  rec_value_t *x = &r->values[r->nvalues++];
  snprintf(x->instance, sizeof(x->instance), "%s", v->instance);
  snprintf(x->type, sizeof(x->type), "%s", v->type);
  snprintf(x->type_instance, sizeof(x->type_instance), "%s", v->type_instance);
  x->n = v->n;
  x->v0 = v->derive ? (double)v->v[0].counter : v->v[0].gauge;
}

static void rec_notice(const dp_monitor_notice_t *n, void *arg) {
  rec_t *r = arg;
  if (r->nnotices == 16)
    return;
  size_t k = r->nnotices;
  snprintf(r->messages[k], 1024, "%s", n->message);
  snprintf(r->type_instances[k], DP_NAME_MAX, "%s",
           n->type_instance ? n->type_instance : "");
  snprintf(r->types[k], sizeof(r->types[k]), "%s", n->type ? n->type : "");
  snprintf(r->instances[k], DP_NAME_MAX, "%s", n->instance ? n->instance : "");
  r->notices[k] = *n;
  r->notices[k].message = r->messages[k];
  r->notices[k].type_instance = r->type_instances[k];
  r->notices[k].type = r->types[k];
  r->notices[k].instance = r->instances[k];
  r->nnotices++;
}

static void rec_verdict(const dp_monitor_verdict_t *v, void *arg) {
  rec_t *r = arg;
  if (r->nverdicts < 64)
    r->verdicts[r->nverdicts++] = *v->v;
}

static void rec_sample(const dp_sched_sample_t *s, uint64_t t,
                       const dp_sched_target_state_t *st, void *arg) {
  (void)s, (void)t, (void)st;
  ((rec_t *)arg)->nsamples++;
}

static void rec_device(const dp_diskstats_metrics_t *m,
                       const dp_peers_disk_t *p, uint64_t t, void *arg) {
  (void)m, (void)p, (void)t;
  ((rec_t *)arg)->ndevices++;
}

static void rec_log(const dp_monitor_log_t *l, void *arg) {
  rec_t *r = arg;
  r->nlogs++;
  size_t used = strlen(r->logs);
  snprintf(r->logs + used, sizeof(r->logs) - used, "%s\n", l->line);
}

static dp_monitor_sink_t rec_sink(rec_t *r) {
  memset(r, 0, sizeof(*r));
  return (dp_monitor_sink_t){.arg = r,
                             .value = rec_value,
                             .notice = rec_notice,
                             .log = rec_log,
                             .sample = rec_sample,
                             .verdict = rec_verdict,
                             .device = rec_device};
}

/* The last value of a series, or NAN with found 0. */
static double last_value(const rec_t *r, const char *instance, const char *type,
                         const char *ti, int *found) {
  *found = 0;
  double v = NAN;
  for (size_t i = 0; i < r->nvalues; i++)
    if (strcmp(r->values[i].instance, instance) == 0 &&
        strcmp(r->values[i].type, type) == 0 &&
        strcmp(r->values[i].type_instance, ti) == 0) {
      *found = 1;
      v = r->values[i].v0;
    }
  return v;
}

/* ---- offline: the judging part ------------------------------------------ */

static const char *const probes[] = {"randread-qd1", "randread-qd32"};

static dp_monitor_t *offline(rec_t *r, dp_monitor_sink_t *sink) {
  dp_health_conf_t hc;
  dp_health_conf_init(&hc);
  hc.arm_rounds = 5;
  hc.horizon_rounds = 20;
  dp_monitor_offline_target_t t = {.name = "db",
                                   .nprobes = 2,
                                   .probe_names = probes,
                                   .media = DP_MEDIA_SSD,
                                   .model = "M1"};
  *sink = rec_sink(r);
  dp_monitor_t *m;
  assert_int_equal(dp_monitor_new_offline(&m, &hc, &t, 1, "h1", sink), 0);
  return m;
}

/* One round: QD1 at p50 p1 s, QD32 at qd32_iops (0 ops: skipped). */
static int round_of(dp_monitor_t *m, uint64_t round, double p1,
                    double qd32_iops, uint64_t qd32_ops) {
  dp_monitor_obs_t a = dp_monitor_obs(0, 1000, 0, 1.0 / p1, p1, p1, 0, 0);
  dp_monitor_obs_t b =
      dp_monitor_obs(1, qd32_ops, 0, qd32_iops, 200e-6, 200e-6, 0, 1);
  uint64_t t = round * 60 * DP_NS_PER_S;
  assert_int_equal(dp_monitor_feed(m, 0, &a, round, t, 60 * DP_NS_PER_S, NULL),
                   0);
  return dp_monitor_feed(m, 0, &b, round, t, 60 * DP_NS_PER_S, NULL);
}

/* A probe that did no I/O, did not stall and saw no error was skipped:
 * its slowdown is not measured (NaN), and the round is not a FAILURE. A
 * probe that did no I/O because of errors is measured (IOPS 0). */
static void test_skipped_probe_not_measured(void **state) {
  (void)state;
  rec_t r;
  dp_monitor_sink_t sink;
  dp_monitor_t *m = offline(&r, &sink);
  for (uint64_t k = 1; k <= 10; k++)
    assert_int_equal(round_of(m, k, 100e-6, 5000, 1250), 1);
  assert_true(r.verdicts[9].armed);
  assert_int_equal(round_of(m, 11, 100e-6, 0, 0), 1);
  const dp_health_verdict_t *v = &r.verdicts[10];
  assert_int_equal(v->level, DP_HEALTH_OK);
  assert_true(isnan(v->probe_slowdown[1]));
  int found;
  assert_true(isnan(last_value(&r, "db", "slowdown", "randread-qd32", &found)));
  assert_true(found);

  dp_monitor_obs_t o = dp_monitor_obs(1, 0, 0, 0, NAN, NAN, 3, 1);
  assert_false(isnan(o.iops)); /* errors: measured, IOPS 0 */
  o = dp_monitor_obs(1, 0, 1, 0, NAN, NAN, 0, 1);
  assert_false(isnan(o.iops)); /* stalled: measured */
  dp_monitor_free(m);
}

/* A verdict that changes is one notice: its severity, the target as
 * instance, "health" and the rule, the host in the words; every round
 * emits the verdict's values. */
static void test_changed_verdict_notice(void **state) {
  (void)state;
  rec_t r;
  dp_monitor_sink_t sink;
  dp_monitor_t *m = offline(&r, &sink);
  for (uint64_t k = 1; k <= 10; k++)
    round_of(m, k, 100e-6, 5000, 1250);
  assert_int_equal(r.nnotices, 0);
  round_of(m, 11, 1000e-6, 5000, 1250); /* 10x on QD1 */
  round_of(m, 12, 1000e-6, 5000, 1250);
  assert_int_equal(r.nnotices, 1);
  assert_int_equal(r.notices[0].severity, DP_MONITOR_WARNING);
  assert_string_equal(r.notices[0].instance, "db");
  assert_string_equal(r.notices[0].type, "health");
  assert_string_equal(r.notices[0].type_instance, "baseline");
  assert_non_null(strstr(r.notices[0].message, "host h1"));
  int found;
  assert_float_equal(last_value(&r, "db", "target_health", "level", &found),
                     DP_HEALTH_WARNING, 0);
  assert_true(found);
  assert_float_equal(last_value(&r, "db", "armed", "armed", &found), 1, 0);
  double s = last_value(&r, "db", "slowdown", "round", &found);
  assert_true(s > 8 && s < 12);
  /* back: one OKAY */
  for (uint64_t k = 13; k <= 17; k++)
    round_of(m, k, 100e-6, 5000, 1250);
  assert_int_equal(r.nnotices, 2);
  assert_int_equal(r.notices[1].severity, DP_MONITOR_OKAY);
  dp_monitor_free(m);
}

/* ---- live: one round through the whole pipeline -------------------------- */

static char dir[64];

static int live_setup(void **state) {
  (void)state;
  snprintf(dir, sizeof(dir), "/tmp/dp-test-monitor-XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static int live_teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* A /proc/diskstats with the probe directory's own disk twice as busy at
 * each read: written before each read. */
static void write_diskstats(const char *path, const char *disk, unsigned k) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, " 253 0 %s %u 0 %u %u %u 0 %u %u 0 %u %u 0 0 0 0 0 0\n", disk,
          1000 * k, 16000 * k, 500 * k, 100 * k, 800 * k, 50 * k, 400 * k,
          550 * k);
  fclose(f);
}

/* Target "t1" on DIR/SUB (made), FileSize 4M, then the options given as
 * key, value pairs up to a NULL key. */
static dp_target_conf_t live_target(const char *sub, ...) {
  dp_target_conf_t t;
  char err[256], path[128];
  dp_target_conf_init(&t, "t1");
  snprintf(path, sizeof(path), "%s/%s", dir, sub);
  mkdir(path, 0700);
  assert_int_equal(dp_target_conf_set(&t, "Path", path, err, sizeof(err)), 0);
  assert_int_equal(dp_target_conf_set(&t, "FileSize", "4M", err, sizeof(err)),
                   0);
  va_list ap;
  va_start(ap, sub);
  for (const char *k; (k = va_arg(ap, const char *)) != NULL;) {
    const char *v = va_arg(ap, const char *);
    if (dp_target_conf_set(&t, k, v, err, sizeof(err)) != 0)
      fail_msg("%s %s: %s", k, v, err);
  }
  va_end(ap);
  assert_int_equal(dp_target_conf_finish(&t, err, sizeof(err)), 0);
  return t;
}

/* A live monitor of target t on the fake clock, no splay, reads every 10 s,
 * the device view from the file ds (NULL: none), its state file in
 * state_dir (NULL: none). */
static dp_monitor_t *live_monitor_in(const dp_target_conf_t *t, rec_t *r,
                                     dp_monitor_sink_t *sink, const char *ds,
                                     const char *state_dir) {
  dp_plugin_conf_t pc;
  dp_plugin_conf_init(&pc);
  pc.splay = 0;
  *sink = rec_sink(r);
  dp_monitor_conf_t mc = {.plugin = &pc,
                          .targets = t,
                          .ntargets = 1,
                          .host = "h1",
                          .state_dir = state_dir,
                          .read_interval_max_ns = 10 * DP_NS_PER_S,
                          .now_ns = fake_aio_clock,
                          .diskstats_path = ds};
  dp_monitor_t *m;
  assert_int_equal(dp_monitor_new(&m, &mc, sink), 0);
  return m;
}

static dp_monitor_t *live_monitor(const dp_target_conf_t *t, rec_t *r,
                                  dp_monitor_sink_t *sink, const char *ds) {
  return live_monitor_in(t, r, sink, ds, NULL);
}

static void test_live_round(void **state) {
  (void)state;
  char ds[128];
  dp_target_conf_t t = live_target("probe", "Class", "lab", NULL);
  snprintf(ds, sizeof(ds), "%s/diskstats", dir);
  rec_t r;
  dp_monitor_sink_t sink;
  /* the disk's name is known once the scheduler resolved it */
  write_diskstats(ds, "none", 1);
  dp_monitor_t *m = live_monitor(&t, &r, &sink, ds);
  dp_sched_t *s = dp_monitor_sched(m);
  const char *disk = dp_sched_worker_disk(s, 0);
  write_diskstats(ds, disk, 1);
  dp_monitor_read(m, 1 * DP_NS_PER_S); /* first sample of the view */
  dp_sched_step(s, 0, 0);              /* one round: 3 probes */
  __atomic_add_fetch(&fake_aio_now, 10 * DP_NS_PER_S, __ATOMIC_SEQ_CST);
  write_diskstats(ds, disk, 2);
  dp_monitor_read(m, 11 * DP_NS_PER_S);

  assert_int_equal(r.nsamples, 3);
  assert_int_equal(r.nverdicts, 1);
  int found;
  double iops =
      last_value(&r, "t1", "operations_per_second", "randread-qd1", &found);
  assert_true(found && iops > 0);
  last_value(&r, "t1", "probe_latency", "seqread", &found);
  assert_true(found);
  last_value(&r, "t1", "target_health", "level", &found);
  assert_true(found);
  assert_float_equal(last_value(&r, "t1", "stalled", "stalled", &found), 0, 0);
  assert_true(found);
  assert_float_equal(last_value(&r, "t1", "target_device", disk, &found), 1, 0);
  assert_true(found);
  if (strchr(disk, ':') == NULL) { /* a disk with statistics */
    char in[80];
    snprintf(in, sizeof(in), "dev-%s", disk);
    double rd = last_value(&r, in, "operations_per_second", "read", &found);
    assert_true(found);
    assert_float_equal(rd, 100.0, 1e-6); /* 1000 reads in 10 s */
    assert_int_equal(r.ndevices, 1);
    /* the disk's identity series: its class the target's Class, its
     * value the capacity sysfs gives */
    const char *cls = NULL;
    const dp_disk_identity_t *id = dp_monitor_disk_identity(m, disk, &cls);
    assert_non_null(id);
    assert_string_equal(cls, "lab");
    double cap = last_value(&r, in, "disk_info", "lab", &found);
    assert_true(found);
    assert_float_equal(cap, (double)id->capacity_bytes, 0);
  }
  assert_null(dp_monitor_disk_identity(m, "no-such-disk", NULL));
  assert_true(r.nlogs > 0); /* the disk, its class, the layout */
  assert_int_equal(dp_monitor_stop(m), 0);
  dp_monitor_free(m);
}

/* Busy or failing: a verdict that is not OK on a disk saturated by other
 * I/O says so, with the utilisation and the probe's share. The disk here
 * is a fake /proc/diskstats 100 % busy moving 8 GB every 10 s; a ceiling
 * of 10 us makes the target WARNING by ceiling at its third round. */
static void test_busy_verdict_says_so(void **state) {
  (void)state;
  char ds[128];
  dp_target_conf_t t = live_target("probe", "LatencyCeiling", "0.00001",
                                   "ProbeInterval", "10", NULL);
  snprintf(ds, sizeof(ds), "%s/diskstats", dir);
  rec_t r;
  dp_monitor_sink_t sink;
  dp_monitor_t *m = live_monitor(&t, &r, &sink, ds);
  dp_sched_t *s = dp_monitor_sched(m);
  const char *disk = dp_sched_worker_disk(s, 0);
  fake_aio_set_delay(200000); /* 200 us an I/O: far above the 10 us ceiling */
  if (strchr(disk, ':') != NULL) { /* no block device: no device view */
    fake_aio_set_delay(0);
    dp_monitor_free(m);
    skip();
  }
  for (unsigned k = 1; k <= 5; k++) {
    FILE *f = fopen(ds, "w");
    assert_non_null(f);
    /* reads, sectors (8 GB a step), io_ticks 10 s a step: 100 % busy */
    fprintf(f, " 253 0 %s %u 0 %u %u 0 0 0 0 0 %u %u 0 0 0 0 0 0\n", disk,
            100000 * k, 16000000 * k, 500 * k, 10000 * k, 10000 * k);
    fclose(f);
    if (k > 1)
      dp_sched_step(s, 0, 0);
    __atomic_add_fetch(&fake_aio_now, 10 * DP_NS_PER_S, __ATOMIC_SEQ_CST);
    dp_monitor_read(m, (uint64_t)k * 10 * DP_NS_PER_S);
  }
  assert_true(r.nverdicts >= 3);
  assert_int_equal(r.verdicts[r.nverdicts - 1].level, DP_HEALTH_WARNING);
  assert_int_equal(r.nnotices, 1);
  const char *msg = r.notices[0].message;
  if (strstr(msg, "its disk was busy with other I/O (utilisation 100 %") ==
      NULL)
    fail_msg("notice without the busy words: %s", msg);
  assert_non_null(strstr(msg, "load, not necessarily a fault"));
  fake_aio_set_delay(0);
  assert_int_equal(dp_monitor_stop(m), 0);
  dp_monitor_free(m);
}

/* A target that cannot be opened (its probe file is not ours) is FAILURE
 * by "probing" at the next read, every read, with the cause; its first
 * round back clears it with an OKAY. */
static void test_not_probing_is_failure(void **state) {
  (void)state;
  char file[160];
  dp_target_conf_t t = live_target("dead", NULL);
  snprintf(file, sizeof(file), "%s/dead/diskprobe.probe", dir);
  FILE *f = fopen(file, "w");
  assert_non_null(f);
  fputs("not a probe file\n", f);
  fclose(f);
  rec_t r;
  dp_monitor_sink_t sink;
  dp_monitor_t *m = live_monitor(&t, &r, &sink, NULL);
  dp_sched_t *s = dp_monitor_sched(m);
  for (int k = 0; k < 2; k++) {
    dp_sched_step(s, 0, 0); /* the open fails */
    __atomic_add_fetch(&fake_aio_now, 10 * DP_NS_PER_S, __ATOMIC_SEQ_CST);
    dp_monitor_read(m, (uint64_t)(11 + 10 * k) * DP_NS_PER_S);
    assert_int_equal(r.nverdicts, (size_t)k + 1);
    dp_health_verdict_t *v = &r.verdicts[k];
    assert_int_equal(v->level, DP_HEALTH_FAILURE);
    assert_int_equal(v->why, DP_RULE_PROBING);
    assert_non_null(v->not_probing);
    assert_non_null(strstr(v->not_probing, "cannot open"));
  }
  int found;
  assert_float_equal(last_value(&r, "t1", "target_health", "probing", &found),
                     DP_HEALTH_FAILURE, 0);
  assert_true(found);
  assert_int_equal(r.nnotices, 1); /* said once, kept every read */
  assert_int_equal(r.notices[0].severity, DP_MONITOR_FAILURE);
  assert_string_equal(r.notices[0].type_instance, "probing");
  /* the file goes: the target lays its own out and probes again (at its
   * next retry of the open) */
  assert_int_equal(unlink(file), 0);
  for (int k = 0; k < 10 && r.verdicts[r.nverdicts - 1].level != DP_HEALTH_OK;
       k++) {
    dp_sched_step(s, 0, 0);
    __atomic_add_fetch(&fake_aio_now, 10 * DP_NS_PER_S, __ATOMIC_SEQ_CST);
    dp_monitor_read(m, (uint64_t)(41 + 10 * k) * DP_NS_PER_S);
  }
  assert_int_equal(r.verdicts[r.nverdicts - 1].rule[DP_RULE_PROBING],
                   DP_HEALTH_OK);
  assert_int_equal(r.verdicts[r.nverdicts - 1].level, DP_HEALTH_OK);
  assert_int_equal(r.nnotices, 2);
  assert_int_equal(r.notices[1].severity, DP_MONITOR_OKAY);
  assert_int_equal(dp_monitor_stop(m), 0);
  dp_monitor_free(m);
}

/* The notices of one type, counted. */
static size_t notices_of(const rec_t *r, const char *type) {
  size_t n = 0;
  for (size_t k = 0; k < r->nnotices; k++)
    n += strcmp(r->notices[k].type, type) == 0;
  return n;
}

/* One round of target 0 at the next ProbeInterval (10 s), read. */
static void live_step_read(dp_monitor_t *m, unsigned k) {
  __atomic_add_fetch(&fake_aio_now, 10 * DP_NS_PER_S, __ATOMIC_SEQ_CST);
  dp_sched_step(dp_monitor_sched(m), 0, 0);
  dp_monitor_read(m, (uint64_t)(10 * k + 1) * DP_NS_PER_S);
}

/* A disk that stalls every round is one "stalled" FAILURE, not a FAILURE
 * and an OKAY a round: the drain of the stalled I/O is no OKAY; the first
 * round without a stall is. */
static void test_stall_okay_waits_for_clean_round(void **state) {
  (void)state;
  dp_target_conf_t t =
      live_target("probe", "Timeout", "0.3", "ProbeInterval", "10", NULL);
  rec_t r;
  dp_monitor_sink_t sink;
  dp_monitor_t *m = live_monitor(&t, &r, &sink, NULL);
  dp_sched_t *s = dp_monitor_sched(m);
  for (unsigned k = 1; k <= 2; k++) { /* two stalled rounds, each drained */
    fake_aio_set_mode(FAKE_AIO_HANG);
    live_step_read(m, k);
    assert_int_equal(r.verdicts[r.nverdicts - 1].rule[DP_RULE_STALL],
                     DP_HEALTH_FAILURE);
    fake_aio_set_mode(FAKE_AIO_OK);
    dp_sched_step(s, 0, DP_NS_PER_S / 10); /* the stalled I/O drains */
    dp_sched_target_state_t st;
    dp_sched_target_state(s, 0, &st);
    assert_false(st.stalled);
  }
  assert_int_equal(notices_of(&r, "stalled"), 1);
  assert_int_equal(r.notices[0].severity, DP_MONITOR_FAILURE);
  assert_string_equal(r.notices[0].type, "stalled");
  assert_string_equal(r.notices[0].type_instance, "randread-qd1");
  live_step_read(m, 3); /* clean */
  assert_int_equal(r.verdicts[r.nverdicts - 1].rule[DP_RULE_STALL],
                   DP_HEALTH_OK);
  assert_int_equal(notices_of(&r, "stalled"), 2);
  const dp_monitor_notice_t *ok = &r.notices[r.nnotices - 1];
  assert_int_equal(ok->severity, DP_MONITOR_OKAY);
  assert_string_equal(ok->type, "stalled");
  assert_string_equal(ok->type_instance, "randread-qd1");
  assert_non_null(strstr(ok->message, "the next round ran without a stall"));
  assert_int_equal(dp_monitor_stop(m), 0);
  dp_monitor_free(m);
}

/* A probe skipped on a disk too slow for it (the deep probes, when QD1's
 * p50 is longer than their Duration) is not measured: its IOPS and bytes
 * per second go out as NaN -- unknown -- never 0, which would graph a
 * healthy slow disk as dead; QD1, which ran, has its figures. */
static void test_skipped_probe_values_unknown(void **state) {
  (void)state;
  dp_target_conf_t t = live_target("probe", "ProbeInterval", "10", NULL);
  rec_t r;
  dp_monitor_sink_t sink;
  dp_monitor_t *m = live_monitor(&t, &r, &sink, NULL);
  fake_aio_set_delay(300000000); /* 0.3 s an I/O: longer than a deep probe */
  live_step_read(m, 1);
  fake_aio_set_delay(0);
  int found;
  double qd1 =
      last_value(&r, "t1", "operations_per_second", "randread-qd1", &found);
  assert_true(found && qd1 > 0);
  double qd32 =
      last_value(&r, "t1", "operations_per_second", "randread-qd32", &found);
  assert_true(found);
  if (!isnan(qd32))
    fail_msg("a skipped probe's IOPS went out as %g, not NaN", qd32);
  double bytes = last_value(&r, "t1", "bytes_per_second", "seqread", &found);
  assert_true(found);
  if (!isnan(bytes))
    fail_msg("a skipped probe's bytes/s went out as %g, not NaN", bytes);
  assert_non_null(strstr(r.logs, "randread-qd32"));
  assert_int_equal(dp_monitor_stop(m), 0);
  dp_monitor_free(m);
}

/* The notices of one type and severity, counted. */
static size_t notices_sev(const rec_t *r, const char *type,
                          dp_monitor_severity_t sev) {
  size_t n = 0;
  for (size_t k = 0; k < r->nnotices; k++)
    n += strcmp(r->notices[k].type, type) == 0 && r->notices[k].severity == sev;
  return n;
}

/* A FAILURE that ends across a restart gets its OKAY, once: a stall (the
 * "stalled" FAILURE and the health FAILURE by stall) drains, the daemon
 * stops before a clean round; the next one starts from the state file,
 * says so, and its first clean round sends both OKAYs, naming the rule and
 * the probe of the FAILUREs; a third start sends nothing. */
static void test_okay_across_restart(void **state) {
  (void)state;
  dp_target_conf_t t =
      live_target("probe", "Timeout", "0.3", "ProbeInterval", "10", NULL);
  rec_t r;
  dp_monitor_sink_t sink;
  dp_monitor_t *m = live_monitor_in(&t, &r, &sink, NULL, dir);
  dp_sched_t *s = dp_monitor_sched(m);
  fake_aio_set_mode(FAKE_AIO_HANG);
  live_step_read(m, 1);
  fake_aio_set_mode(FAKE_AIO_OK);
  dp_sched_step(s, 0, DP_NS_PER_S / 10); /* the stalled I/O drains */
  dp_monitor_read(m, 12 * DP_NS_PER_S);
  assert_int_equal(notices_sev(&r, "stalled", DP_MONITOR_FAILURE), 1);
  assert_int_equal(notices_sev(&r, "health", DP_MONITOR_FAILURE), 1);
  assert_int_equal(notices_sev(&r, "stalled", DP_MONITOR_OKAY), 0);
  assert_int_equal(dp_monitor_stop(m), 0); /* saves the state file */
  dp_monitor_free(m);

  rec_t r2;
  m = live_monitor_in(&t, &r2, &sink, NULL, dir);
  assert_non_null(strstr(r2.logs, "its last notice was FAILURE by stall"));
  for (unsigned k = 3; k <= 6; k++)
    live_step_read(m, k);
  assert_int_equal(notices_sev(&r2, "stalled", DP_MONITOR_OKAY), 1);
  assert_int_equal(notices_sev(&r2, "health", DP_MONITOR_OKAY), 1);
  if (r2.nnotices != 2) /* nothing else: no new FAILURE */
    fail_msg("%zu notices after the restart, expected 2; the third: %s",
             r2.nnotices, r2.nnotices > 2 ? r2.messages[2] : "-");
  for (size_t k = 0; k < r2.nnotices; k++) {
    if (strcmp(r2.notices[k].type, "health") == 0)
      assert_string_equal(r2.notices[k].type_instance, "stall");
    else
      assert_string_equal(r2.notices[k].type_instance, "randread-qd1");
  }
  assert_int_equal(dp_monitor_stop(m), 0);
  dp_monitor_free(m);

  rec_t r3;
  m = live_monitor_in(&t, &r3, &sink, NULL, dir);
  assert_null(strstr(r3.logs, "its last notice was"));
  for (unsigned k = 7; k <= 8; k++)
    live_step_read(m, k);
  assert_int_equal(r3.nnotices, 0);
  assert_int_equal(dp_monitor_stop(m), 0);
  dp_monitor_free(m);
}

/* A monitor of one target on the probe directory, with the state file in
 * dir: ProbeInterval ivl, default probes. */
static dp_monitor_t *one_target(rec_t *r, dp_monitor_sink_t *sink,
                                const char *ivl, int read_only) {
  dp_target_conf_t t;
  char err[256], path[128];
  dp_target_conf_init(&t, "t1");
  snprintf(path, sizeof(path), "%s/probe", dir);
  mkdir(path, 0700);
  assert_int_equal(dp_target_conf_set(&t, "Path", path, err, sizeof(err)), 0);
  assert_int_equal(
      dp_target_conf_set(&t, "ProbeInterval", ivl, err, sizeof(err)), 0);
  assert_int_equal(dp_target_conf_finish(&t, err, sizeof(err)), 0);
  dp_plugin_conf_t pc;
  dp_plugin_conf_init(&pc); /* DutyCycle 2 */
  *sink = rec_sink(r);
  dp_monitor_conf_t mc = {.plugin = &pc,
                          .targets = &t,
                          .ntargets = 1,
                          .host = "h1",
                          .state_dir = dir,
                          .state_read_only = read_only,
                          .read_interval_max_ns = 10 * DP_NS_PER_S,
                          .now_ns = fake_aio_clock};
  dp_monitor_t *m;
  assert_int_equal(dp_monitor_new(&m, &mc, sink), 0);
  return m;
}

/* At start the monitor says what the configuration costs: the default
 * probes (1 s) every 10 s at DutyCycle 2 % run for a fifth of their
 * Duration, and the interval stays; at 60 s they fit. After a restart with
 * another ProbeInterval it says the RRD files keep their old step. */
static void test_start_says_cost_and_interval_change(void **state) {
  (void)state;
  rec_t r;
  dp_monitor_sink_t sink;
  dp_monitor_t *m = one_target(&r, &sink, "10", 0);
  assert_non_null(strstr(r.logs, "DutyCycle 2 % allows 0.2 s a round, so "
                                 "each runs for 20 % of its Duration "
                                 "(randread-qd1 0.1 s, randread-qd32 0.05 s, "
                                 "seqread 0.05 s). ProbeInterval stays 10 s"));
  dp_sched_target_state_t st;
  dp_sched_target_state(dp_monitor_sched(m), 0, &st);
  assert_int_equal(st.interval_ns, 10 * DP_NS_PER_S);
  assert_null(strstr(r.logs, "ProbeInterval is"));
  assert_int_equal(dp_monitor_stop(m), 0); /* saves the state file */
  dp_monitor_free(m);

  m = one_target(&r, &sink, "60", 0);
  assert_non_null(strstr(r.logs, "within DutyCycle 2 %"));
  assert_non_null(strstr(r.logs, "ProbeInterval is 60 s now, 10 s when the "
                                 "state file was saved: RRD files made "
                                 "before keep their 10 s step"));
  dp_monitor_stop(m);
  dp_monitor_free(m);
  m = one_target(&r, &sink, "60", 0); /* unchanged since: nothing said */
  assert_null(strstr(r.logs, "ProbeInterval is"));
  dp_monitor_stop(m);
  dp_monitor_free(m);
}

/* A config test (state_read_only) writes no state file; a run does; a
 * StateDir its group may write keeps none, said once at start. */
static void test_state_file_read_only_and_refused(void **state) {
  (void)state;
  rec_t r;
  dp_monitor_sink_t sink;
  char f[128];
  snprintf(f, sizeof(f), "%s/%s", dir, DP_MONITOR_STATE_FILE);
  for (int read_only = 1; read_only >= 0; read_only--) {
    dp_monitor_t *m = one_target(&r, &sink, "10", read_only);
    assert_int_equal(dp_monitor_stop(m), 0);
    dp_monitor_free(m);
    assert_int_equal(access(f, F_OK), read_only ? -1 : 0);
  }
  assert_null(strstr(r.logs, "not saved"));
  assert_int_equal(chmod(dir, 0770), 0);
  dp_monitor_t *m = one_target(&r, &sink, "10", 0);
  char want[256];
  snprintf(want, sizeof(want),
           "StateDir %s: directory %s is group-writable without the sticky "
           "bit",
           dir, dir);
  assert_non_null(strstr(r.logs, want));
  assert_non_null(strstr(r.logs, "the health baselines are not kept"));
  assert_null(strstr(r.logs, "restored"));
  dp_monitor_stop(m);
  dp_monitor_free(m);
  assert_int_equal(chmod(dir, 0700), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_skipped_probe_not_measured),
      cmocka_unit_test(test_changed_verdict_notice),
      cmocka_unit_test_setup_teardown(test_skipped_probe_values_unknown,
                                      live_setup, live_teardown),
      cmocka_unit_test_setup_teardown(test_okay_across_restart, live_setup,
                                      live_teardown),
      cmocka_unit_test_setup_teardown(test_not_probing_is_failure, live_setup,
                                      live_teardown),
      cmocka_unit_test_setup_teardown(test_busy_verdict_says_so, live_setup,
                                      live_teardown),
      cmocka_unit_test_setup_teardown(test_stall_okay_waits_for_clean_round,
                                      live_setup, live_teardown),
      cmocka_unit_test_setup_teardown(test_live_round, live_setup,
                                      live_teardown),
      cmocka_unit_test_setup_teardown(test_start_says_cost_and_interval_change,
                                      live_setup, live_teardown),
      cmocka_unit_test_setup_teardown(test_state_file_read_only_and_refused,
                                      live_setup, live_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
