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

/* The state formatted here (cheap), written by the saver's thread; a save
 * still running skips this one unless `last` (the stop's, which follows
 * it). */
void dp_mon_state_save(dp_monitor_t *m, int last) {
  m->saved_ns = dp_mon_now(m);
  if (m->saver == NULL)
    return;
  char *text;
  size_t len;
  int rc = dp_health_state_format(m->health, &text, &len);
  if (rc < 0) {
    LOG_PLAIN(m, LOG_WARNING, "cannot format the health state: %s",
              strerror(-rc));
    return;
  }
  if (dp_statefile_saver_submit(m->saver, text, len, last) == -EBUSY)
    LOG_PLAIN(m, LOG_WARNING,
              "health state save skipped: the previous one to StateDir %s "
              "has not finished (%lu skipped so far)",
              m->state_dir, dp_statefile_saver_skipped(m->saver));
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
  return rc == -EPERM || rc == -ELOOP || rc == -ENOTDIR ? rc : 0;
}
