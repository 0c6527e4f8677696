/* rrd_input.c - see rrd_input.h. */
#define _GNU_SOURCE
#include "rrd_input.h"
#include "cli.h"
#include "safepath.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <rrd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PI_PREFIX "diskprobe-"
#define DEV_PREFIX "diskprobe-dev-"

/* "diskprobe CMD: WHERE: [skipped: ]WHAT" on stderr, names escaped. */
static void line(const char *cmd, const char *where, const char *skipped,
                 const char *what) {
  fprintf(stderr, "diskprobe %s: ", cmd);
  dp_cli_put_visible(stderr, where);
  fprintf(stderr, ": %s", skipped);
  dp_cli_put_visible(stderr, what);
  fputc('\n', stderr);
}

static int fail(const char *cmd, const char *where, const char *what) {
  line(cmd, where, "", what);
  return 2;
}

/* dir/name into out (len bytes). 0, or 2 after one line naming the path. */
static int join(const char *cmd, char *out, size_t len, const char *dir,
                const char *name) {
  if (dp_path_join(out, len, dir, name) == 0)
    return 0;
  char what[64];
  snprintf(what, sizeof(what), "path too long (more than %zu bytes)", len - 1);
  fprintf(stderr, "diskprobe %s: ", cmd);
  dp_cli_put_visible(stderr, dir);
  fputc('/', stderr);
  dp_cli_put_visible(stderr, name);
  fprintf(stderr, ": %s\n", what);
  return 2;
}

void dp_rrdin_skips_free(dp_rrdin_skips_t *k) {
  for (size_t i = 0; i < k->n; i++) {
    free(k->file[i]);
    free(k->why[i]);
  }
  free(k->file);
  free(k->why);
  memset(k, 0, sizeof(*k));
}

/* path skipped for why: one line on stderr and a note in sk (NULL: the
 * line only), once per file (a file of two series is read twice). 0, or 2
 * after one line (out of memory). */
static int skip(const char *cmd, const char *path, const char *why,
                dp_rrdin_skips_t *sk) {
  for (size_t i = 0; sk != NULL && i < sk->n; i++)
    if (strcmp(sk->file[i], path) == 0)
      return 0;
  line(cmd, path, "skipped: ", why);
  if (sk == NULL)
    return 0;
  char **f = realloc(sk->file, (sk->n + 1) * sizeof(*f));
  if (f != NULL)
    sk->file = f;
  char **w = f != NULL ? realloc(sk->why, (sk->n + 1) * sizeof(*w)) : NULL;
  if (w != NULL)
    sk->why = w;
  char *fp = w != NULL ? strdup(path) : NULL, *wp = fp ? strdup(why) : NULL;
  if (wp == NULL) {
    free(fp);
    return fail(cmd, path, "out of memory");
  }
  sk->file[sk->n] = fp;
  sk->why[sk->n++] = wp;
  return 0;
}

/* An RRD file of the tree, open: librrd reads `path`, the open file. */
typedef struct {
  int fd;
  char path[PATH_MAX];
} rrdfile_t;

/* /proc/self/fd/N names the open file (procfs mounted). */
static int proc_fd_names(void) {
  static int known = -1;
  if (known < 0)
    known = access("/proc/self/fd", X_OK) == 0;
  return known;
}

/* Opens path for librrd when it is a regular file (rrd_input.h). 1 open
 * (close rf->fd), 0 when it does not exist, -1 skipped (noted), 2 after
 * one line (out of memory). */
static int open_rrd(const char *cmd, const char *path, dp_rrdin_skips_t *sk,
                    rrdfile_t *rf) {
  struct stat st, fst;
  char why[128];
  rf->fd = -1;
  if (stat(path, &st) != 0) {
    if (errno == ENOENT)
      return 0;
    return skip(cmd, path, strerror(errno), sk) ? 2 : -1;
  }
  if (!S_ISREG(st.st_mode)) {
    snprintf(why, sizeof(why), "not a regular file (%s)",
             dp_cli_file_kind(st.st_mode));
    return skip(cmd, path, why, sk) ? 2 : -1;
  }
  /* O_NONBLOCK: a FIFO put in its place since the stat opens at once */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT)
      return 0;
    return skip(cmd, path, strerror(errno), sk) ? 2 : -1;
  }
  if (fstat(fd, &fst) != 0 || !S_ISREG(fst.st_mode) ||
      fst.st_dev != st.st_dev || fst.st_ino != st.st_ino) {
    close(fd);
    return skip(cmd, path, "replaced while being opened", sk) ? 2 : -1;
  }
  rf->fd = fd;
  if (proc_fd_names())
    snprintf(rf->path, sizeof(rf->path), "/proc/self/fd/%d", fd);
  else
    snprintf(rf->path, sizeof(rf->path), "%s", path);
  return 1;
}

/* librrd's error about rf, its name for the file ('/proc/self/fd/N') made
 * "the file": the line names the path already. */
static const char *rrd_why(const rrdfile_t *rf, char *buf, size_t len) {
  const char *e = rrd_get_error();
  if (e == NULL || e[0] == '\0')
    e = "librrd could not read it";
  char q[PATH_MAX + 3];
  snprintf(q, sizeof(q), "'%s'", rf->path);
  const char *at = strstr(e, q);
  if (at != NULL)
    snprintf(buf, len, "%.*sthe file%s", (int)(at - e), e, at + strlen(q));
  else
    snprintf(buf, len, "%s", e);
  rrd_clear_error();
  return buf;
}

int dp_rrdin_push(dp_rrdin_values_t *s, double x) {
  if (s->n == s->cap) {
    size_t nc = s->cap ? 2 * s->cap : 256;
    double *p = realloc(s->v, nc * sizeof(*p));
    if (p == NULL)
      return -1;
    s->v = p;
    s->cap = nc;
  }
  s->v[s->n++] = x;
  return 0;
}

static int is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int not_hidden(const struct dirent *d) { return d->d_name[0] != '.'; }

/* The entries of dir, sorted (free each, then the list); -1 when it cannot
 * be listed. */
static int list(const char *dir, struct dirent ***out) {
  return scandir(dir, out, not_hidden, versionsort);
}

static void free_list(struct dirent **v, int n) {
  for (int i = 0; i < n; i++)
    free(v[i]);
  free(v);
}

/* The TI of the newest PREFIX-TI.rrd file in dir into out ("" when none);
 * a file skipped is noted in sk. 0, or 2 after one line. */
static int newest_instance(const char *cmd, const char *dir, const char *prefix,
                           char *out, size_t len, dp_rrdin_skips_t *sk) {
  struct dirent **e;
  int n = list(dir, &e);
  time_t best = -1;
  out[0] = '\0';
  size_t pl = strlen(prefix);
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++) {
    const char *name = e[i]->d_name;
    size_t l = strlen(name);
    if (strncmp(name, prefix, pl) != 0 || l <= pl + 4 ||
        strcmp(name + l - 4, ".rrd") != 0)
      continue;
    char p[PATH_MAX];
    if ((rc = join(cmd, p, sizeof(p), dir, name)) != 0)
      break;
    rrdfile_t rf;
    int o = open_rrd(cmd, p, sk, &rf);
    if (o == 2)
      rc = 2;
    if (o != 1)
      continue;
    rrd_clear_error();
    time_t last = rrd_last_r(rf.path);
    close(rf.fd);
    if (last < 0) {
      char why[512];
      rc = skip(cmd, p, rrd_why(&rf, why, sizeof(why)), sk);
      continue;
    }
    if (last > best) {
      best = last;
      snprintf(out, len, "%.*s", (int)(l - pl - 4), name + pl);
    }
  }
  if (n > 0)
    free_list(e, n);
  return rc;
}

/* Adds host's targets to *out. 0, or 2 after one line. */
static int scan_host(const char *cmd, const char *root, const char *host,
                     dp_rrdin_target_t **out, size_t *n, size_t *cap,
                     dp_rrdin_skips_t *sk) {
  char hostdir[PATH_MAX];
  if (join(cmd, hostdir, sizeof(hostdir), root, host) != 0)
    return 2;
  struct dirent **e;
  int ne = list(hostdir, &e);
  int rc = 0;
  for (int i = 0; i < ne && rc == 0; i++) {
    const char *pi = e[i]->d_name;
    if (strncmp(pi, PI_PREFIX, strlen(PI_PREFIX)) != 0 ||
        strncmp(pi, DEV_PREFIX, strlen(DEV_PREFIX)) == 0)
      continue;
    if (*n == *cap) {
      size_t nc = *cap ? 2 * *cap : 32;
      dp_rrdin_target_t *p = realloc(*out, nc * sizeof(*p));
      if (p == NULL) {
        rc = fail(cmd, hostdir, "out of memory");
        break;
      }
      *out = p;
      *cap = nc;
    }
    dp_rrdin_target_t *t = &(*out)[*n];
    memset(t, 0, sizeof(*t));
    if ((rc = join(cmd, t->dir, sizeof(t->dir), hostdir, pi)) != 0)
      break;
    if (!is_dir(t->dir))
      continue;
    snprintf(t->host, sizeof(t->host), "%s", host);
    snprintf(t->target, sizeof(t->target), "%s", pi + strlen(PI_PREFIX));
    rc = newest_instance(cmd, t->dir, "target_device-", t->disk,
                         sizeof(t->disk), sk);
    if (rc == 0 && t->disk[0] != '\0') {
      char name[sizeof(DEV_PREFIX) + sizeof(t->disk)], dev[PATH_MAX];
      snprintf(name, sizeof(name), DEV_PREFIX "%s", t->disk);
      rc = join(cmd, dev, sizeof(dev), hostdir, name);
      if (rc == 0)
        rc =
            newest_instance(cmd, dev, "disk_info-", t->cls, sizeof(t->cls), sk);
    }
    if (rc != 0)
      break;
    if (t->cls[0] == '\0')
      snprintf(t->cls, sizeof(t->cls), "unknown");
    (*n)++;
  }
  if (ne > 0)
    free_list(e, ne);
  return rc;
}

int dp_rrdin_scan(const char *cmd, const char *root, dp_rrdin_target_t **out,
                  size_t *n, dp_rrdin_skips_t *sk) {
  *out = NULL;
  *n = 0;
  struct dirent **e;
  int ne = list(root, &e);
  if (ne < 0)
    return fail(cmd, root, strerror(errno));
  size_t cap = 0;
  int rc = 0;
  for (int i = 0; i < ne && rc == 0; i++) {
    char p[PATH_MAX];
    rc = join(cmd, p, sizeof(p), root, e[i]->d_name);
    if (rc == 0 && is_dir(p))
      rc = scan_host(cmd, root, e[i]->d_name, out, n, &cap, sk);
  }
  free_list(e, ne);
  if (rc == 0 && *n == 0)
    rc = fail(cmd, root,
              "no diskprobe targets (want HOST/diskprobe-TARGET/*.rrd: "
              "collectd's rrdtool plugin's DataDir)");
  if (rc != 0) {
    free(*out);
    *out = NULL;
    *n = 0;
  }
  return rc;
}

/* One fetched file: rows of ds_cnt values from start (exclusive) by step. */
typedef struct {
  time_t start, end;
  unsigned long step, nds;
  char **names;
  rrd_value_t *data;
  size_t rows;
} fetch_t;

static void fetch_free(fetch_t *f) {
  for (unsigned long i = 0; i < f->nds; i++)
    rrd_freemem(f->names[i]);
  rrd_freemem(f->names);
  rrd_freemem(f->data);
  memset(f, 0, sizeof(*f));
}

/* Fetches path's AVERAGE rows between start and end, and its last update
 * into *last (NULL: not wanted). 1 when read, 0 when the file does not
 * exist or was skipped (noted in sk), 2 after one line. */
static int fetch(const char *cmd, const char *path, time_t start, time_t end,
                 fetch_t *f, time_t *last, dp_rrdin_skips_t *sk) {
  memset(f, 0, sizeof(*f));
  rrdfile_t rf;
  int o = open_rrd(cmd, path, sk, &rf);
  if (o != 1)
    return o == 2 ? 2 : 0;
  f->start = start;
  f->end = end;
  f->step = 1; /* the finest archive that covers the window */
  rrd_clear_error();
  int rc = 1;
  if (rrd_fetch_r(rf.path, "AVERAGE", &f->start, &f->end, &f->step, &f->nds,
                  &f->names, &f->data) != 0) {
    char why[512];
    rc = skip(cmd, path, rrd_why(&rf, why, sizeof(why)), sk);
    memset(f, 0, sizeof(*f));
  } else {
    f->rows = f->step ? (size_t)((f->end - f->start) / (time_t)f->step) : 0;
    if (last != NULL)
      *last = rrd_last_r(rf.path);
    rrd_clear_error();
  }
  close(rf.fd);
  return rc;
}

/* The data source named ds of f; -1 when it has none. */
static long ds_index(const fetch_t *f, const char *ds) {
  for (unsigned long i = 0; i < f->nds; i++)
    if (strcmp(f->names[i], ds) == 0)
      return (long)i;
  return -1;
}

/* Appends the finite positive rows of file/ds to s; *newest: the file's last
 * update when later. 0 or 2. */
static int append_series(const char *cmd, const char *dir, const char *file,
                         const char *ds, time_t start, time_t end,
                         dp_rrdin_values_t *s, time_t *newest,
                         dp_rrdin_skips_t *sk) {
  char path[PATH_MAX];
  if (join(cmd, path, sizeof(path), dir, file) != 0)
    return 2;
  fetch_t f;
  time_t last = -1;
  int rc = fetch(cmd, path, start, end, &f, &last, sk);
  if (rc != 1)
    return rc;
  long k = ds_index(&f, ds);
  rc = 0;
  if (k < 0) {
    char why[128];
    snprintf(why, sizeof(why),
             "no data source \"%s\" (not written by diskprobe?)", ds);
    rc = skip(cmd, path, why, sk);
  } else if (sk != NULL) {
    sk->read++;
  }
  for (size_t r = 0; k >= 0 && r < f.rows && rc == 0; r++) {
    double v = f.data[r * f.nds + (size_t)k];
    /* 0: nothing completed in the probe (skipped on a crawling disk) */
    if (isfinite(v) && v > 0 && dp_rrdin_push(s, v) != 0)
      rc = fail(cmd, path, "out of memory");
  }
  fetch_free(&f);
  if (k >= 0 && last > *newest)
    *newest = last;
  return rc;
}

int dp_rrdin_target_values(const char *cmd, const dp_rrdin_target_t *t,
                           time_t start, time_t end,
                           dp_rrdin_values_t s[DP_RRDIN_NSERIES],
                           time_t *newest, dp_rrdin_skips_t *sk) {
  static const struct {
    const char *file, *ds;
  } src[DP_RRDIN_NSERIES] = {
      [DP_RRDIN_QD1_P50_S] = {"probe_latency-randread-qd1.rrd", "p50"},
      [DP_RRDIN_QD1_MEAN_S] = {"probe_latency-randread-qd1.rrd", "mean"},
      [DP_RRDIN_QD1_IOPS] = {"operations_per_second-randread-qd1.rrd", "value"},
      [DP_RRDIN_QD32_IOPS] = {"operations_per_second-randread-qd32.rrd",
                              "value"},
      [DP_RRDIN_SEQ_BPS] = {"bytes_per_second-seqread.rrd", "value"},
      [DP_RRDIN_QD32_P50_S] = {"probe_latency-randread-qd32.rrd", "p50"},
      [DP_RRDIN_QD32_MEAN_S] = {"probe_latency-randread-qd32.rrd", "mean"},
  };
  *newest = 0;
  for (int i = 0; i < DP_RRDIN_NSERIES; i++) {
    int rc = append_series(cmd, t->dir, src[i].file, src[i].ds, start, end,
                           &s[i], newest, sk);
    if (rc != 0)
      return rc;
  }
  return 0;
}

/* One disk's device view into h. 0 or 2. */
static int devview_disk(const char *cmd, const char *dir, const char *disk,
                        time_t start, time_t end, dp_fsinput_host_t *h,
                        dp_rrdin_skips_t *sk) {
  fetch_t f[DP_FSINPUT_NFIELDS];
  long k[DP_FSINPUT_NFIELDS];
  int rc = 0, ref = -1;
  size_t rows = 0;
  for (int i = 0; i < DP_FSINPUT_NFIELDS; i++) {
    char name[NAME_MAX + 1], path[PATH_MAX];
    snprintf(name, sizeof(name), "%s.rrd", dp_fsinput_series[i]);
    if (rc == 0)
      rc = join(cmd, path, sizeof(path), dir, name);
    int r = rc == 0 ? fetch(cmd, path, start, end, &f[i], NULL, sk) : 0;
    if (r == 2)
      rc = 2;
    if (r != 1)
      memset(&f[i], 0, sizeof(f[i]));
    k[i] = r == 1 ? ds_index(&f[i], "value") : -1;
    if (r == 1 && k[i] < 0 && rc == 0)
      rc = skip(cmd, path,
                "no data source \"value\" (not written by diskprobe?)", sk);
    /* the six files share collectd's step; one that does not is left out */
    if (k[i] >= 0 && ref < 0) {
      ref = i;
      rows = f[i].rows;
    } else if (k[i] >= 0 &&
               (f[i].step != f[ref].step || f[i].start != f[ref].start)) {
      k[i] = -1;
    }
  }
  for (size_t r = 0; r < rows && rc == 0; r++) {
    double v[DP_FSINPUT_NFIELDS];
    for (int i = 0; i < DP_FSINPUT_NFIELDS; i++)
      v[i] = k[i] >= 0 && r < f[i].rows ? f[i].data[r * f[i].nds + (size_t)k[i]]
                                        : NAN;
    double t = (double)f[ref].start + (double)((r + 1) * f[ref].step);
    int e = dp_fsinput_add_sample(h, disk, t, v);
    if (e != 0)
      rc = fail(cmd, dir, e == -E2BIG ? "too many disks" : "out of memory");
  }
  for (int i = 0; i < DP_FSINPUT_NFIELDS; i++)
    if (f[i].names != NULL)
      fetch_free(&f[i]);
  return rc;
}

int dp_rrdin_devview(const char *cmd, const char *root, const char *host,
                     time_t start, time_t end, dp_fsinput_host_t *h,
                     dp_rrdin_skips_t *sk) {
  char hostdir[PATH_MAX];
  if (join(cmd, hostdir, sizeof(hostdir), root, host) != 0)
    return 2;
  snprintf(h->name, sizeof(h->name), "%s", host);
  struct dirent **e;
  int ne = list(hostdir, &e);
  if (ne < 0)
    return fail(cmd, hostdir, strerror(errno));
  int rc = 0;
  for (int i = 0; i < ne && rc == 0; i++) {
    const char *name = e[i]->d_name;
    if (strncmp(name, DEV_PREFIX, strlen(DEV_PREFIX)) != 0 ||
        !dp_fsinput_whole_disk(name + strlen(DEV_PREFIX)))
      continue;
    char dir[PATH_MAX];
    rc = join(cmd, dir, sizeof(dir), hostdir, name);
    if (rc == 0 && is_dir(dir))
      rc = devview_disk(cmd, dir, name + strlen(DEV_PREFIX), start, end, h, sk);
  }
  free_list(e, ne);
  return rc;
}
