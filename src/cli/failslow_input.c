/* failslow_input.c - see failslow_input.h. */
#define _GNU_SOURCE
#include "failslow_input.h"
#include "cli.h"
#include "jsonl.h"
#include "safepath.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEV_DIR "diskprobe-dev-"

const char *const dp_fsinput_series[DP_FSINPUT_NFIELDS] = {
    "bytes_per_second-read",      "bytes_per_second-write",
    "operations_per_second-read", "operations_per_second-write",
    "latency-read_await",         "latency-write_await"};
const char *const dp_fsinput_keys[DP_FSINPUT_NFIELDS] = {
    "read_bytes_per_s", "write_bytes_per_s", "reads_per_s",
    "writes_per_s",     "read_await_s",      "write_await_s"};
/* The largest value of each figure: bytes/s, I/Os per second, seconds
 * (an await over a day is no await). */
const double dp_fsinput_max[DP_FSINPUT_NFIELDS] = {1e15, 1e15,  1e10,
                                                   1e10, 86400, 86400};

/* "diskprobe failslow: WHERE: WHAT", the path escaped (cli.h). */
static int fail(const char *where, const char *what) {
  fputs("diskprobe failslow: ", stderr);
  dp_cli_put_visible(stderr, where);
  fprintf(stderr, ": %s\n", what);
  return 2;
}

/* dir/name into out (len bytes). 0, or 2 after one line naming the path. */
static int join(char *out, size_t len, const char *dir, const char *name) {
  if (dp_path_join(out, len, dir, name) == 0)
    return 0;
  fputs("diskprobe failslow: ", stderr);
  dp_cli_put_visible(stderr, dir);
  fputc('/', stderr);
  dp_cli_put_visible(stderr, name);
  fprintf(stderr, ": path too long (more than %zu bytes)\n", len - 1);
  return 2;
}

void dp_fsinput_combine(const double f[DP_FSINPUT_NFIELDS], double *tp_bps,
                        double *lat_s) {
  *tp_bps = f[DP_FSINPUT_READ_BPS] + f[DP_FSINPUT_WRITE_BPS];
  *lat_s = dp_failslow_latency_per_io(
      f[DP_FSINPUT_READS_PS], f[DP_FSINPUT_READ_AWAIT], f[DP_FSINPUT_WRITES_PS],
      f[DP_FSINPUT_WRITE_AWAIT]);
}

void dp_fsinput_host_free(dp_fsinput_host_t *h) {
  free(h->disks);
  free(h->s);
  memset(h, 0, sizeof(*h));
}

/* Room for one more element in *arr (n used of *cap, elem bytes each;
 * first: the capacity of the first allocation). 0 or -ENOMEM. */
static int grow(void *arr, size_t *cap, size_t n, size_t elem, size_t first) {
  if (n < *cap)
    return 0;
  size_t nc = *cap ? 2 * *cap : first;
  void *p = realloc(*(void **)arr, nc * elem);
  if (p == NULL)
    return -ENOMEM;
  *(void **)arr = p;
  *cap = nc;
  return 0;
}

/* Device i of h by name, added when new. 0, -E2BIG, -ENOMEM. */
static int disk_index(dp_fsinput_host_t *h, const char *name, uint32_t *out) {
  for (size_t i = h->ndisks; i-- > 0;)
    if (strcmp(h->disks[i], name) == 0) {
      *out = (uint32_t)i;
      return 0;
    }
  if (h->ndisks >= DP_FAILSLOW_DEVICES_MAX)
    return -E2BIG;
  if (grow(&h->disks, &h->diskcap, h->ndisks, sizeof(*h->disks), 16) != 0)
    return -ENOMEM;
  snprintf(h->disks[h->ndisks], DP_FAILSLOW_NAME_MAX, "%s", name);
  *out = (uint32_t)h->ndisks++;
  return 0;
}

/* Appends disk's sample at t from the device-view figures f. */
static int add_sample(dp_fsinput_host_t *h, uint32_t disk, double t,
                      const double f[DP_FSINPUT_NFIELDS]) {
  if (grow(&h->s, &h->cap, h->n, sizeof(*h->s), 65536) != 0)
    return -ENOMEM;
  dp_fsinput_sample_t *s = &h->s[h->n];
  s->t_s = t;
  s->disk = disk;
  s->seq = (uint32_t)h->n;
  dp_fsinput_combine(f, &s->throughput_bps, &s->latency_s);
  h->n++;
  return 0;
}

int dp_fsinput_add_sample(dp_fsinput_host_t *h, const char *disk, double t,
                          const double f[DP_FSINPUT_NFIELDS]) {
  uint32_t idx;
  int e = disk_index(h, disk, &idx);
  return e != 0 ? e : add_sample(h, idx, t, f);
}

static int cmp_sample(const void *a, const void *b) {
  const dp_fsinput_sample_t *x = a, *y = b;
  if (x->t_s != y->t_s)
    return x->t_s < y->t_s ? -1 : 1;
  if (x->disk != y->disk)
    return x->disk < y->disk ? -1 : 1;
  return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

void dp_fsinput_sort(dp_fsinput_host_t *h) {
  qsort(h->s, h->n, sizeof(*h->s), cmp_sample);
}

static int cmp_name(const void *a, const void *b) {
  return strverscmp(*(char *const *)a, *(char *const *)b);
}

int dp_fsinput_whole_disk(const char *n) {
  if (strncmp(n, "dm-", 3) == 0 || strncmp(n, "md", 2) == 0 || n[0] == '\0')
    return 0;
  size_t l = strlen(n);
  int ends_digit = n[l - 1] >= '0' && n[l - 1] <= '9';
  static const char *const lettered[] = {"sd", "hd", "vd", "xvd"};
  for (size_t k = 0; k < sizeof(lettered) / sizeof(lettered[0]); k++) {
    size_t pl = strlen(lettered[k]);
    if (strncmp(n, lettered[k], pl) == 0 && n[pl] >= 'a' && n[pl] <= 'z')
      return !ends_digit;
  }
  const char *p = strrchr(n, 'p');
  if (p == NULL || p == n || p[1] == '\0' || p[-1] < '0' || p[-1] > '9')
    return 1;
  for (const char *q = p + 1; *q; q++)
    if (*q < '0' || *q > '9')
      return 1;
  return 0;
}

/* The names under dir (sorted by strverscmp) that pass keep(dir, name).
 * 0, or 2 (after one line unless quiet). */
static int list_dir(const char *dir, int (*keep)(const char *, const char *),
                    char ***out, size_t *n, int quiet) {
  *out = NULL;
  *n = 0;
  DIR *dp = opendir(dir);
  if (dp == NULL)
    return quiet ? 2 : fail(dir, strerror(errno));
  size_t cap = 0;
  struct dirent *de;
  int rc = 0;
  while ((de = readdir(dp)) != NULL) {
    if (de->d_name[0] == '.' || !keep(dir, de->d_name))
      continue;
    if (*n == cap) {
      cap = cap ? 2 * cap : 32;
      void *p = realloc(*out, cap * sizeof(**out));
      if (p == NULL) {
        rc = fail(dir, "out of memory");
        break;
      }
      *out = p;
    }
    if (((*out)[*n] = strdup(de->d_name)) == NULL) {
      rc = fail(dir, "out of memory");
      break;
    }
    (*n)++;
  }
  closedir(dp);
  if (*n > 1)
    qsort(*out, *n, sizeof(**out), cmp_name);
  return rc;
}

static void free_list(char **v, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(v[i]);
  free(v);
}

/* dir/name is a directory (a path too long to name is not one: stat would
 * fail with ENAMETOOLONG). */
static int is_subdir(const char *dir, const char *name) {
  char p[4096];
  struct stat st;
  return dp_path_join(p, sizeof(p), dir, name) == 0 && stat(p, &st) == 0 &&
         S_ISDIR(st.st_mode);
}

static int is_dev_dir(const char *dir, const char *name) {
  return strncmp(name, DEV_DIR, strlen(DEV_DIR)) == 0 &&
         dp_fsinput_whole_disk(name + strlen(DEV_DIR)) && is_subdir(dir, name);
}

/* A host directory: one holding at least one diskprobe-dev-* directory. */
static int is_host_dir(const char *dir, const char *name) {
  char p[4096];
  if (!is_subdir(dir, name) || dp_path_join(p, sizeof(p), dir, name) != 0)
    return 0;
  char **d;
  size_t n;
  int rc = list_dir(p, is_dev_dir, &d, &n, 1); /* unlistable: no host */
  free_list(d, n);
  return rc == 0 && n > 0;
}

int dp_fsinput_collectd_hosts(const char *dir, char ***out, size_t *n) {
  char **v;
  size_t k;
  *out = NULL;
  *n = 0;
  int rc = list_dir(dir, is_dev_dir, &v, &k, 0);
  if (rc != 0)
    return rc;
  free_list(v, k);
  int itself = k > 0; /* dir is a host */
  v = NULL;
  k = 0;
  if (!itself && (rc = list_dir(dir, is_host_dir, &v, &k, 0)) != 0)
    return rc;
  if (!itself && k == 0) {
    free(v);
    return fail(dir, "no host directory with " DEV_DIR "* series under it");
  }
  size_t m = itself ? 1 : k;
  char **paths = calloc(m, sizeof(*paths));
  for (size_t i = 0; paths != NULL && i < m && rc == 0; i++)
    if (asprintf(&paths[i], "%s%s%s", dir, itself ? "" : "/",
                 itself ? "" : v[i]) < 0) {
      paths[i] = NULL;
      rc = 2;
    }
  free_list(v, k);
  if (paths == NULL || rc != 0) {
    free_list(paths, paths ? m : 0);
    return fail(dir, "out of memory");
  }
  *out = paths;
  *n = m;
  return 0;
}

/* The field of a series file TYPE-TYPE_INSTANCE-YYYY-MM-DD, or -1. */
static int series_field(const char *name) {
  for (int f = 0; f < DP_FSINPUT_NFIELDS; f++) {
    size_t l = strlen(dp_fsinput_series[f]);
    if (strncmp(name, dp_fsinput_series[f], l) != 0 || name[l] != '-')
      continue;
    const char *d = name + l + 1;
    if (strlen(d) != 10)
      return -1;
    for (int i = 0; i < 10; i++)
      if (i == 4 || i == 7 ? d[i] != '-' : (d[i] < '0' || d[i] > '9'))
        return -1;
    return f;
  }
  return -1;
}

static int keep_series(const char *dir, const char *name) {
  (void)dir;
  return series_field(name) >= 0;
}

/* One series value at a time, gathered per disk before merging. */
typedef struct {
  double t, v;
  uint32_t seq;
  int field;
} point_t;

typedef struct {
  point_t *p;
  size_t n, cap;
} points_t;

static int cmp_point(const void *a, const void *b) {
  const point_t *x = a, *y = b;
  if (x->t != y->t)
    return x->t < y->t ? -1 : 1;
  return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

/* Unix seconds up to the year 5138: beyond, llround would overflow. */
static int parse_time(const char *s, double *t) {
  char *end;
  *t = strtod(s, &end);
  return end != s && *end == '\0' && *t >= 0 && *t <= 1e11;
}

static double num_or_nan(const char *s) {
  char *end;
  double v = strtod(s, &end);
  return (end == s || *end != '\0') ? NAN : v;
}

/* Calls fn(line, len, lineno, arg) for every record of f (jsonl.h:
 * lines of at most DP_JSONL_LINE_MAX bytes, newline cut off; with objects,
 * an object over many lines is one) until it returns non-zero. fn's
 * status, or 2 after one line when f cannot be read or a line is too long.
 * Without objects, a line with a NUL byte is refused. */
static int each_line(FILE *f, const char *path, int objects,
                     int (*fn)(char *line, size_t len, size_t lineno,
                               void *arg),
                     void *arg) {
  dp_jsonl_t rd;
  dp_jsonl_init(&rd, f, "failslow", path, objects);
  size_t len;
  int rc = 0, got = 0;
  while (rc == 0 && (got = dp_jsonl_next(&rd, &len)) > 0) {
    if (!objects && memchr(rd.buf, '\0', len) != NULL) {
      dp_jsonl_fail(&rd, "a NUL byte");
      rc = 2;
    } else
      rc = fn(rd.buf, len, rd.lineno, arg);
  }
  if (got < 0)
    rc = 2;
  dp_jsonl_free(&rd);
  return rc;
}

typedef struct {
  const char *path;
  int field;
  points_t *pts;
} series_t;

/* One line of a series file into its points. 0 or 2. */
static int series_line(char *line, size_t len, size_t lineno, void *arg) {
  series_t *sr = arg;
  (void)len;
  if (line[0] == '\0' || (lineno == 1 && (line[0] < '0' || line[0] > '9')))
    return 0; /* a blank line; the header (epoch,value) */
  char *comma = strchr(line, ',');
  double t;
  if (comma != NULL)
    *comma = '\0';
  char path[DP_CLI_VISIBLE_NAME * 4], seen[41]; /* 40 shown */
  if (comma == NULL || !parse_time(line, &t)) {
    fprintf(stderr,
            "diskprobe failslow: %s: line %zu: want epoch,value (Unix "
            "seconds, 0 to 1e11), not '%s'\n",
            dp_cli_visible(sr->path, path, sizeof(path)), lineno,
            dp_cli_visible(line, seen, sizeof(seen)));
    return 2;
  }
  double v = num_or_nan(comma + 1);
  if (!isnan(v) && !(v >= 0 && v <= dp_fsinput_max[sr->field])) {
    fprintf(stderr,
            "diskprobe failslow: %s: line %zu: want a value from 0 to %.16g "
            "(or nan), not '%s'\n",
            dp_cli_visible(sr->path, path, sizeof(path)), lineno,
            dp_fsinput_max[sr->field],
            dp_cli_visible(comma + 1, seen, sizeof(seen)));
    return 2;
  }
  points_t *pts = sr->pts;
  if (grow(&pts->p, &pts->cap, pts->n, sizeof(*pts->p), 65536) != 0)
    return fail(sr->path, "out of memory");
  pts->p[pts->n] = (point_t){t, v, (uint32_t)pts->n, sr->field};
  pts->n++;
  return 0;
}

/* Opens a file of the tree for reading when it is a regular file: a FIFO
 * would block the read forever, a device node is never opened (a stat
 * first; O_NONBLOCK and fstat for one put in its place since). NULL after
 * one line. */
static FILE *open_regular(const char *path) {
  struct stat st, fst;
  char why[64];
  if (stat(path, &st) != 0) {
    fail(path, strerror(errno));
    return NULL;
  }
  if (!S_ISREG(st.st_mode)) {
    snprintf(why, sizeof(why), "not a regular file (%s)",
             dp_cli_file_kind(st.st_mode));
    fail(path, why);
    return NULL;
  }
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    fail(path, strerror(errno));
    return NULL;
  }
  if (fstat(fd, &fst) != 0 || !S_ISREG(fst.st_mode) ||
      fst.st_dev != st.st_dev || fst.st_ino != st.st_ino) {
    close(fd);
    fail(path, "replaced while being opened");
    return NULL;
  }
  FILE *f = fdopen(fd, "r");
  if (f == NULL) {
    fail(path, strerror(errno));
    close(fd);
  }
  return f;
}

/* Reads one series file ("epoch,value" lines after an optional header
 * line) into pts. 0 or 2. */
static int read_series(const char *path, int field, points_t *pts) {
  FILE *f = open_regular(path);
  if (f == NULL)
    return 2;
  series_t sr = {path, field, pts};
  int rc = each_line(f, path, 0, series_line, &sr);
  fclose(f);
  return rc;
}

/* Merges one disk's points (any series, any order) into samples: one per
 * distinct time, a series given twice at a time counting its last value. */
static int merge_points(dp_fsinput_host_t *h, uint32_t disk, points_t *pts) {
  qsort(pts->p, pts->n, sizeof(*pts->p), cmp_point);
  for (size_t i = 0; i < pts->n;) {
    double f[DP_FSINPUT_NFIELDS], t = pts->p[i].t;
    for (int k = 0; k < DP_FSINPUT_NFIELDS; k++)
      f[k] = NAN;
    for (; i < pts->n && pts->p[i].t == t; i++)
      f[pts->p[i].field] = pts->p[i].v;
    if (add_sample(h, disk, t, f) != 0)
      return -ENOMEM;
  }
  return 0;
}

static const char *base_name(const char *path, char *buf, size_t len) {
  size_t l = strlen(path);
  while (l > 1 && path[l - 1] == '/')
    l--;
  size_t s = l;
  while (s > 0 && path[s - 1] != '/')
    s--;
  snprintf(buf, len, "%.*s", (int)(l - s), path + s);
  return buf;
}

/* Reads one disk directory's series files into h. 0 or 2. */
static int read_disk(dp_fsinput_host_t *h, const char *diskdir,
                     const char *disk) {
  char **files;
  size_t nf;
  int rc = list_dir(diskdir, keep_series, &files, &nf, 0);
  points_t pts = {NULL, 0, 0};
  for (size_t i = 0; i < nf && rc == 0; i++) {
    char p[4096];
    if ((rc = join(p, sizeof(p), diskdir, files[i])) == 0)
      rc = read_series(p, series_field(files[i]), &pts);
  }
  free_list(files, nf);
  if (rc == 0 && pts.n > 0) {
    uint32_t idx;
    int e = disk_index(h, disk, &idx);
    if (e == 0)
      e = merge_points(h, idx, &pts);
    if (e != 0)
      rc = fail(diskdir,
                e == -E2BIG ? "too many disks in one host" : "out of memory");
  }
  free(pts.p);
  return rc;
}

int dp_fsinput_read_collectd(dp_fsinput_host_t *h, const char *hostdir) {
  base_name(hostdir, h->name, sizeof(h->name));
  char **devs;
  size_t nd;
  int rc = list_dir(hostdir, is_dev_dir, &devs, &nd, 0);
  for (size_t i = 0; i < nd && rc == 0; i++) {
    char p[4096];
    if ((rc = join(p, sizeof(p), hostdir, devs[i])) == 0)
      rc = read_disk(h, p, devs[i] + strlen(DEV_DIR));
  }
  free_list(devs, nd);
  if (rc == 0 && h->n == 0)
    rc = fail(hostdir, "no samples (want " DEV_DIR
                       "DISK/bytes_per_second-read-YYYY-MM-DD and the rest)");
  return rc;
}

/* ---- JSON lines --------------------------------------------------------- */

/* The figures, time, host and disk of a device-view object. 1 with them
 * filled, 0 for an object without any of the figures (not a device-view
 * sample: skipped), -1 with why filled. */
static int scan_object(const json_t *o, char *host, size_t hl, char *dev,
                       size_t dl, double *t, double f[DP_FSINPUT_NFIELDS],
                       char *why, size_t wl) {
  int any = 0;
  for (int k = 0; k < DP_FSINPUT_NFIELDS; k++) {
    /* its own keys, or the catalogue's names as watch prints them */
    const char *own = dp_fsinput_keys[k], *cat = dp_fsinput_series[k];
    int has_own = json_object_get(o, own) != NULL;
    if (has_own && json_object_get(o, cat) != NULL) {
      snprintf(why, wl, "both \"%s\" and \"%s\"", own, cat);
      return -1;
    }
    any |= has_own || json_object_get(o, cat) != NULL;
    if (dp_jsonl_number(o, has_own ? own : cat, 0, dp_fsinput_max[k], 0, 1, NAN,
                        &f[k], why, wl) < 0)
      return -1;
  }
  if (!any)
    return 0;
  if (dp_jsonl_number(o, "time", 0, 1e11, 0, 0, NAN, t, why, wl) < 0)
    return -1;
  if (isnan(*t)) {
    snprintf(why, wl, "no \"time\"");
    return -1;
  }
  if (dp_jsonl_string(o, "host", host, hl, why, wl) < 0)
    return -1;
  if (json_object_get(o, "host") == NULL)
    snprintf(host, hl, "localhost");
  const char *dk =
      json_object_get(o, "device_view") != NULL ? "device_view" : "device";
  int r = dp_jsonl_string(o, dk, dev, dl, why, wl);
  if (r > 0 || (r == 0 && dev[0] == '\0'))
    snprintf(why, wl, "no \"device\" (or \"device_view\")");
  return r == 0 && dev[0] != '\0' ? 1 : -1;
}

/* The host named name in *hosts, added when new. NULL: out of memory. */
static dp_fsinput_host_t *host_of(dp_fsinput_host_t **hosts, size_t *n,
                                  const char *name) {
  for (size_t i = 0; i < *n; i++)
    if (strcmp((*hosts)[i].name, name) == 0)
      return &(*hosts)[i];
  void *p = realloc(*hosts, (*n + 1) * sizeof(**hosts));
  if (p == NULL)
    return NULL;
  *hosts = p;
  dp_fsinput_host_t *h = &(*hosts)[(*n)++];
  memset(h, 0, sizeof(*h));
  snprintf(h->name, sizeof(h->name), "%s", name);
  return h;
}

/* Renumbers h's disks in strverscmp order (sda, sdb, ..., sdaa; nvme2n1
 * before nvme10n1), as the collectd reader lists them. */
static int order_disks(dp_fsinput_host_t *h) {
  char **names = malloc(h->ndisks * sizeof(*names) + 1);
  uint32_t *map = malloc(h->ndisks * sizeof(*map) + 1);
  char(*sorted)[DP_FAILSLOW_NAME_MAX] = malloc(h->ndisks * sizeof(*sorted) + 1);
  if (names == NULL || map == NULL || sorted == NULL) {
    free(names);
    free(map);
    free(sorted);
    return -ENOMEM;
  }
  for (size_t i = 0; i < h->ndisks; i++)
    names[i] = h->disks[i];
  qsort(names, h->ndisks, sizeof(*names), cmp_name);
  for (size_t i = 0; i < h->ndisks; i++) {
    map[(size_t)(names[i] - h->disks[0]) / DP_FAILSLOW_NAME_MAX] = (uint32_t)i;
    memcpy(sorted[i], names[i], DP_FAILSLOW_NAME_MAX);
  }
  memcpy(h->disks, sorted, h->ndisks * sizeof(*sorted));
  for (size_t i = 0; i < h->n; i++)
    h->s[i].disk = map[h->s[i].disk];
  free(names);
  free(map);
  free(sorted);
  return 0;
}

typedef struct {
  const char *path;
  dp_fsinput_host_t **hosts;
  size_t *n;
} jsonl_t;

/* One JSON line (or object) into its host. 0 or 2. */
static int json_line(char *line, size_t len, size_t lineno, void *arg) {
  jsonl_t *j = arg;
  char host[256], dev[DP_FAILSLOW_NAME_MAX], why[256];
  double t = NAN, fld[DP_FSINPUT_NFIELDS];
  if (len == 0)
    return 0;
  json_t *o = dp_jsonl_object(line, len, why, sizeof(why));
  int r = o == NULL ? -2
                    : scan_object(o, host, sizeof(host), dev, sizeof(dev), &t,
                                  fld, why, sizeof(why));
  json_decref(o);
  if (r < 0) {
    fprintf(stderr, "diskprobe failslow: %s: line %zu: %s%s\n", j->path, lineno,
            r == -1 ? "not a device-view object: " : "", why);
    return 2;
  }
  if (r == 0 || !dp_fsinput_whole_disk(dev))
    return 0;
  dp_fsinput_host_t *h = host_of(j->hosts, j->n, host);
  uint32_t idx;
  int e = h == NULL ? -ENOMEM : disk_index(h, dev, &idx);
  if (e == 0)
    e = add_sample(h, idx, t, fld);
  if (e == 0)
    return 0;
  fprintf(stderr, "diskprobe failslow: %s: line %zu: %s\n", j->path, lineno,
          e == -E2BIG ? "too many disks in one host" : "out of memory");
  return 2;
}

int dp_fsinput_read_json(const char *path, dp_fsinput_host_t **hosts,
                         size_t *n) {
  *hosts = NULL;
  *n = 0;
  int is_stdin = strcmp(path, "-") == 0;
  FILE *f = is_stdin ? stdin : fopen(path, "r");
  if (f == NULL)
    return fail(path, strerror(errno));
  jsonl_t j = {path, hosts, n};
  int rc = each_line(f, path, 1, json_line, &j);
  if (!is_stdin)
    fclose(f);
  for (size_t i = 0; i < *n && rc == 0; i++)
    if (order_disks(&(*hosts)[i]) != 0)
      rc = fail(path, "out of memory");
  if (rc == 0 && *n == 0)
    rc = fail(path, "no device-view samples");
  if (rc != 0) {
    for (size_t i = 0; i < *n; i++)
      dp_fsinput_host_free(&(*hosts)[i]);
    free(*hosts);
    *hosts = NULL;
    *n = 0;
  }
  return rc;
}
