/* monitor_state.c - the monitor's health state file: StateDir checked
 * once, the baselines read at start (bounded), saved by a saver thread
 * every DP_MONITOR_SAVE_NS and at the stop. See monitor.h. */
#include "monitor_state.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

/* ---- the state file ----------------------------------------------------- */

/* A save that finished since: said if it failed. */
static void state_saved_log(dp_monitor_t *m, int rc, const char *err) {
  if (rc < 0)
    LOG_PLAIN(m, LOG_WARNING, "cannot write the health state file %s/%s: %s",
              m->state_dir, DP_MONITOR_STATE_FILE, err);
}

/* Each read: the result of a save that finished since the last. */
void dp_mon_state_poll(dp_monitor_t *m) {
  int rc;
  char err[512];
  if (m->saver != NULL &&
      dp_statefile_saver_result(m->saver, &rc, err, sizeof(err)))
    state_saved_log(m, rc, err);
}

/* Each target's open stall FAILURE (stall.h's pairing, the workers'
 * under the live lock) into the health state, for the file. */
static void stalls_to_health(dp_monitor_t *m) {
  if (m->live == NULL)
    return;
  pthread_mutex_lock(&m->live->lock);
  for (size_t i = 0; i < m->ntargets; i++) {
    const dp_stall_pair_t *p = &m->live->t[i].stall;
    dp_health_set_stall_open(m->health, i, p->failed ? p->probe : NULL);
  }
  pthread_mutex_unlock(&m->live->lock);
}

int dp_mon_state_save(dp_monitor_t *m, int last, int quiet) {
  m->saved_ns = dp_mon_now(m);
  if (m->saver == NULL)
    return 0;
  char *text;
  size_t len;
  stalls_to_health(m);
  int rc = dp_health_state_format(m->health, &text, &len);
  if (rc < 0) {
    LOG_PLAIN(m, LOG_WARNING, "cannot format the health state: %s",
              strerror(-rc));
    return rc;
  }
  rc = dp_statefile_saver_submit(m->saver, text, len, last);
  if (rc == -EBUSY && !quiet)
    LOG_PLAIN(m, LOG_WARNING,
              "health state save skipped: the previous one to StateDir %s "
              "has not finished (%lu skipped so far)",
              m->state_dir, dp_statefile_saver_skipped(m->saver));
  return rc == -EBUSY ? rc : 0;
}

/* Waits for the saves in flight, DP_MONITOR_SAVE_WAIT_NS at most, and ends
 * the saver; a hung StateDir keeps its thread, not us. */
void dp_mon_state_close(dp_monitor_t *m) {
  if (m->saver == NULL)
    return;
  int rc = 0;
  char err[512] = "";
  int wait = dp_statefile_saver_close(m->saver, DP_MONITOR_SAVE_WAIT_NS, &rc,
                                      err, sizeof(err));
  m->saver = NULL;
  if (wait == -ETIMEDOUT)
    LOG_PLAIN(m, LOG_WARNING,
              "health state not saved: StateDir %s did not answer within "
              "%.3g s",
              m->state_dir, (double)DP_MONITOR_SAVE_WAIT_NS / 1e9);
  else
    state_saved_log(m, rc, err);
}

/* What the last notices said, restored: a target held at its level (said,
 * as its OKAY is still to come) and a stall whose OKAY is still to come
 * (its I/O went with the restart: the OKAY follows the first clean
 * round). */
static void restored_notices(dp_monitor_t *m) {
  for (size_t i = 0; i < m->ntargets; i++) {
    dp_health_rule_t why;
    dp_health_level_t l = dp_health_level(m->health, i, &why);
    if (l != DP_HEALTH_OK)
      LOG_PLAIN(m, LOG_INFO,
                "target \"%s\": its last notice was %s by %s; its OKAY "
                "follows when it recovers.",
                m->target_names[i],
                l == DP_HEALTH_FAILURE ? "FAILURE" : "WARNING",
                dp_health_rule_name(why));
    const char *probe = dp_health_stall_open(m->health, i);
    if (probe[0] == '\0' || m->live == NULL)
      continue;
    pthread_mutex_lock(&m->live->lock);
    dp_stall_pair_t *p = &m->live->t[i].stall;
    dp_stall_pair_began(p, probe);
    dp_stall_pair_drained(p, "its stalled I/O ended with the restart");
    pthread_mutex_unlock(&m->live->lock);
  }
}

void dp_mon_state_load(dp_monitor_t *m) {
  m->saved_ns = dp_mon_now(m);
  if (m->state_dir[0] == '\0')
    return;
  char path[PATH_MAX + 64], err[PATH_MAX + 256];
  snprintf(path, sizeof(path), "%s/%s", m->state_dir, DP_MONITOR_STATE_FILE);
  /* read off the init thread, bounded: a StateDir on a hung disk must not
   * hold collectd's start */
  char *text;
  size_t len;
  int rc = dp_statefile_read_bounded(
      m->state_dir, DP_MONITOR_STATE_FILE, DP_HEALTH_STATE_MAX_BYTES,
      m->saver != NULL, DP_MONITOR_SAVE_WAIT_NS, &text, &len, err, sizeof(err));
  if (rc == 0) {
    rc = dp_health_state_parse(m->health, text, len, err, sizeof(err));
    free(text);
  }
  if (rc < 0 && rc != -ENOENT)
    LOG_PLAIN(m, LOG_WARNING,
              "ignoring the health state file %s: %s; baselines start "
              "afresh.",
              path, err);
  else if (rc == 0)
    LOG_PLAIN(m, LOG_INFO, "health baselines restored from %s.", path);
  if (rc == 0)
    restored_notices(m);
}

/* StateDir (or the front-end's default), checked once: a directory
 * someone else could redirect keeps no state file, said in one line. The
 * saver's thread unless the state is only read (a config test). */
void dp_mon_state_dir_init(dp_monitor_t *m, const dp_monitor_conf_t *c) {
  const char *dir = m->pc.state_dir[0] ? m->pc.state_dir : c->state_dir;
  if (dir == NULL)
    return;
  char err[PATH_MAX + 256];
  int rc = dp_mon_state_dir_check(dir, err, sizeof(err));
  if (rc < 0) {
    LOG_PLAIN(m, LOG_ERR,
              "StateDir %s: %s; the health baselines are not kept across "
              "restarts.",
              dir, err);
    return;
  }
  snprintf(m->state_dir, sizeof(m->state_dir), "%s", dir);
  if (c->state_read_only)
    return;
  /* a crash's temporary files are removed by dp_mon_state_load's reader */
  if ((rc = dp_statefile_saver_new(&m->saver, dir, DP_MONITOR_STATE_FILE)) < 0)
    LOG_PLAIN(m, LOG_WARNING,
              "cannot start the health state saver: %s; the baselines are "
              "not saved.",
              strerror(-rc));
}

int dp_mon_state_dir_check(const char *dir, char *err, size_t errlen) {
  /* bounded: a StateDir on a hung disk must not hold collectd's start */
  int rc =
      dp_statefile_check_dir_bounded(dir, DP_MONITOR_SAVE_WAIT_NS, err, errlen);
  return rc == -EPERM || rc == -ELOOP || rc == -ENOTDIR || rc == -ETIMEDOUT ? rc
                                                                            : 0;
}
