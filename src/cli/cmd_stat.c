/*
 * cmd_stat.c - `diskprobe stat`: the iostat -x view of some devices from
 * /proc/diskstats, as a text table or JSON lines, one report per interval.
 *
 *   diskprobe stat [--interval 1s] [--count N] [--format text|json] DEVICE...
 *
 * DEVICE is a kernel name (vda, loop3, nvme0n1p2) or a path to a block
 * device node (/dev/vda1, /dev/mapper/root), resolved through st_rdev to
 * major:minor and then to the kernel's name. The first report covers the
 * first interval (never "since boot", unlike iostat without -y); --count
 * reports, or until interrupted. Reports are taken at fixed CLOCK_MONOTONIC
 * deadlines, and each is divided by the time measured between its two
 * reads of /proc/diskstats, not by the nominal interval.
 *
 * Each device's identity (blockdev.h: class, media, model, firmware,
 * serial, WWN, capacity, block sizes; a partition's disk's) is read once:
 * text prints one line per device before the first report, JSON adds the
 * keys to every object (dp_cli_json_identity).
 *
 * Text mode uses iostat's column names and units (kB, ms); JSON uses bytes
 * and seconds, and null where a ratio is undefined (no I/O of that kind in
 * the interval) or the kernel does not report the counter.
 *
 * Exit status: 0, 1 when a device is unknown or /proc/diskstats cannot be
 * read, 2 on a usage error; every failure is one line on stderr.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "clock.h"
#include "diskstats.h"
#include "engine.h"
#include "units.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#define DISKSTATS_PATH "/proc/diskstats"
#define USAGE                                                                  \
  "usage: diskprobe stat [--interval 1s] [--count N] [--format text|json] "    \
  "DEVICE..."

static const char *const stat_usage[] = {
    "[--interval 1s] [--count N] [--format text|json] DEVICE...", NULL};
static const dp_cli_opt_help_t stat_opts[] = {
    {"--interval DURATION", "time between reports, at least 1ms (default 1s)"},
    {"--count N", "stop after N reports (default: until Ctrl-C)"},
    {"--format text|json",
     "iostat -x's columns and units, kB and ms (text, the default), or JSON "
     "lines in bytes and seconds with the disk's identity"},
    {NULL, NULL}};
static const char *const stat_examples[] = {
    "diskprobe stat vda", "diskprobe stat --interval 5s --count 12 sda sdb",
    "diskprobe stat --count 1 --format json /dev/mapper/root", NULL};
const dp_cli_help_t dp_cli_help_stat = {
    "stat",
    "iostat -x for some devices, from /proc/diskstats",
    0,
    stat_usage,
    stat_opts,
    "DEVICE is a kernel name (vda, nvme0n1p2) or a device node (/dev/vda1, "
    "/dev/mapper/root). The first report covers the first interval, not the "
    "time since boot. Text prints each device's identity (class, media, "
    "model, capacity) once before the first report. Exit status: 0, 1 when a "
    "device is unknown or /proc/diskstats cannot be read, 2 on a usage "
    "error.",
    stat_examples};

typedef struct {
  char *buf;
  size_t cap, len;
} snapshot_t;

/* Reads /proc/diskstats whole, growing the buffer as needed. */
static int read_snapshot(snapshot_t *s) {
  for (;;) {
    if (s->buf == NULL) {
      s->cap = s->cap ? s->cap : 64 * 1024;
      s->buf = malloc(s->cap);
      if (s->buf == NULL)
        return -ENOMEM;
    }
    int rc = dp_diskstats_read_file(DISKSTATS_PATH, s->buf, s->cap, &s->len);
    if (rc != -ENOBUFS)
      return rc;
    if (s->cap >= (64u << 20))
      return -EFBIG;
    free(s->buf);
    s->buf = NULL;
    s->cap *= 2;
  }
}

/* Looks DEVICE up in the parsed snapshot: a path by its device number, a
 * bare word by kernel name. Returns the record or NULL with *why set. */
static const dp_diskstats_rec_t *resolve(const char *arg,
                                         const dp_diskstats_rec_t *recs,
                                         size_t n, const char **why) {
  if (strchr(arg, '/') != NULL) {
    struct stat st;
    if (stat(arg, &st) < 0) {
      *why = strerror(errno);
      return NULL;
    }
    if (!S_ISBLK(st.st_mode)) {
      *why = "not a block device";
      return NULL;
    }
    for (size_t i = 0; i < n; i++)
      if (recs[i].major == major(st.st_rdev) &&
          recs[i].minor == minor(st.st_rdev))
        return &recs[i];
    *why = "block device not listed in " DISKSTATS_PATH;
    return NULL;
  }
  for (size_t i = 0; i < n; i++)
    if (strcmp(recs[i].name, arg) == 0)
      return &recs[i];
  *why = "no such device in " DISKSTATS_PATH;
  return NULL;
}

/* o[key]: v with 10 significant digits, or null for NaN and infinities. */
static void jnum(json_t *o, const char *key, double v) {
  dp_cli_json_set(o, key, dp_cli_json_sig(v, 10));
}

static double pct_merged(double merged, double done) {
  return merged + done > 0 ? 100.0 * merged / (merged + done) : NAN;
}

static void print_json(const dp_diskstats_metrics_t *m,
                       const dp_disk_identity_t *id, double wall_s) {
  char cls[DP_DISK_CLASS_MAX];
  json_t *o = dp_cli_json_object();
  dp_cli_json_set(o, "device", dp_cli_json_str(m->name));
  dp_cli_json_set(o, "major", dp_cli_json_uint(m->major));
  dp_cli_json_set(o, "minor", dp_cli_json_uint(m->minor));
  dp_cli_json_set(o, "timestamp", dp_cli_json_fixed(wall_s, 3));
  dp_cli_json_identity(o, id,
                       dp_blockdev_class(NULL, id->model, cls, sizeof(cls)));
  jnum(o, "interval_s", m->interval_s);
  jnum(o, "reads_per_s", m->reads_per_s);
  jnum(o, "writes_per_s", m->writes_per_s);
  jnum(o, "reads_merged_per_s", m->reads_merged_per_s);
  jnum(o, "writes_merged_per_s", m->writes_merged_per_s);
  jnum(o, "read_bytes_per_s", m->read_bytes_per_s);
  jnum(o, "write_bytes_per_s", m->write_bytes_per_s);
  jnum(o, "avg_read_size_bytes", m->avg_read_size_bytes);
  jnum(o, "avg_write_size_bytes", m->avg_write_size_bytes);
  jnum(o, "read_await_s", m->read_await_s);
  jnum(o, "write_await_s", m->write_await_s);
  jnum(o, "iops", m->iops);
  jnum(o, "await_s", m->await_s);
  jnum(o, "avg_queue_length", m->avg_queue_length);
  jnum(o, "util_percent", m->util_percent);
  jnum(o, "service_time_s", m->service_time_s);
  dp_cli_json_set(o, "in_flight", dp_cli_json_uint(m->in_flight));
  jnum(o, "discards_per_s", m->discards_per_s);
  jnum(o, "discard_bytes_per_s", m->discard_bytes_per_s);
  jnum(o, "discard_await_s", m->discard_await_s);
  jnum(o, "flushes_per_s", m->flushes_per_s);
  jnum(o, "flush_await_s", m->flush_await_s);
  dp_cli_json_print(stdout, o, DP_CLI_JSON_LINE);
}

/* One text cell: "-" where the value is undefined. */
static void tcell(int width, int prec, double v) {
  if (isfinite(v))
    printf(" %*.*f", width, prec, v);
  else
    printf(" %*s", width, "-");
}

static void print_text_header(void) {
  printf("%-16s %8s %9s %8s %6s %7s %8s %8s %9s %8s %6s %7s %8s %8s %9s "
         "%7s %8s %7s %7s %7s %6s\n",
         "Device", "r/s", "rkB/s", "rrqm/s", "%rrqm", "r_await", "rareq-sz",
         "w/s", "wkB/s", "wrqm/s", "%wrqm", "w_await", "wareq-sz", "d/s",
         "dkB/s", "d_await", "dareq-sz", "f/s", "f_await", "aqu-sz", "%util");
}

static void print_text(const dp_diskstats_metrics_t *m) {
  printf("%-16s", m->name);
  tcell(8, 2, m->reads_per_s);
  tcell(9, 2, m->read_bytes_per_s / 1024.0);
  tcell(8, 2, m->reads_merged_per_s);
  tcell(6, 2, pct_merged((double)m->d_reads_merged, (double)m->d_reads));
  tcell(7, 2, m->read_await_s * 1e3);
  tcell(8, 2, m->avg_read_size_bytes / 1024.0);
  tcell(8, 2, m->writes_per_s);
  tcell(9, 2, m->write_bytes_per_s / 1024.0);
  tcell(8, 2, m->writes_merged_per_s);
  tcell(6, 2, pct_merged((double)m->d_writes_merged, (double)m->d_writes));
  tcell(7, 2, m->write_await_s * 1e3);
  tcell(8, 2, m->avg_write_size_bytes / 1024.0);
  tcell(8, 2, m->discards_per_s);
  tcell(9, 2, m->discard_bytes_per_s / 1024.0);
  tcell(7, 2, m->discard_await_s * 1e3);
  tcell(8, 2, m->avg_discard_size_bytes / 1024.0);
  tcell(7, 2, m->flushes_per_s);
  tcell(7, 2, m->flush_await_s * 1e3);
  tcell(7, 2, m->avg_queue_length);
  tcell(6, 2, m->util_percent);
  printf("\n");
}

/* One line: what is wrong, then the usage. */
static int usage_error(const char *what, const char *arg, const char *hint) {
  fprintf(stderr, "diskprobe stat: %s%s%s%s%s (" USAGE ")\n", what,
          arg ? " '" : "", arg ? arg : "", arg ? "'" : "", hint ? hint : "");
  return 2;
}

static double wall_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_until(uint64_t deadline_ns) {
  struct timespec ts = {.tv_sec = (time_t)(deadline_ns / 1000000000u),
                        .tv_nsec = (long)(deadline_ns % 1000000000u)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
    ;
}

/* What the command line asks for. */
typedef struct {
  uint64_t interval_ns, count; /* count 0: until interrupted */
  int json;
  char **devices; /* DEVICE... */
  size_t ndev;
} stat_args_t;

/* Reads the flags and DEVICEs into *a: -1 to go on, else the exit status
 * (0 after --help, 2 after a usage error's line). */
static int stat_parse(int argc, char **argv, stat_args_t *a) {
  static const struct option opts[] = {
      {"interval", required_argument, NULL, 'i'},
      {"count", required_argument, NULL, 'c'},
      {"format", required_argument, NULL, 'f'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  *a = (stat_args_t){.interval_ns = 1000000000ull};
  int c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":i:c:f:h", opts, NULL)) != -1) {
    switch (c) {
    case 'i':
      if (dp_parse_duration(optarg, &a->interval_ns) < 0 ||
          a->interval_ns < 1000000)
        return usage_error("invalid --interval", optarg,
                           ": a duration of at least 1ms, e.g. 1s or 500ms");
      break;
    case 'c':
      if (dp_parse_uint(optarg, &a->count) < 0 || a->count == 0)
        return usage_error("invalid --count", optarg, ": a positive integer");
      break;
    case 'f':
      if ((a->json = dp_cli_format(optarg)) < 0)
        return usage_error("invalid --format", optarg, ": text or json");
      break;
    case 'h':
      dp_cli_help(stdout, &dp_cli_help_stat);
      return 0;
    case ':':
      return usage_error("missing value for", argv[optind - 1], NULL);
    default:
      return usage_error("unknown option", argv[optind - 1], NULL);
    }
  }
  if (optind >= argc)
    return usage_error("no DEVICE given", NULL, NULL);
  a->devices = argv + optind;
  a->ndev = (size_t)(argc - optind);
  return -1;
}

/* The devices watched and the tracker's state between reports. */
typedef struct {
  snapshot_t snap;
  char (*names)[DP_DISKSTATS_NAME_MAX]; /* kernel names, each once */
  size_t nnames;
  const char **patterns; /* the tracker's filter: names */
  dp_diskstats_slot_t *slots;
  dp_diskstats_metrics_t *out;
  dp_disk_identity_t *ids; /* per name: what the disk is (sysfs) */
  dp_diskstats_tracker_t tr;
  uint64_t t0_ns; /* the first read */
} stat_ctx_t;

static int stat_alloc(stat_ctx_t *s, size_t ndev) {
  s->names = calloc(ndev, sizeof(*s->names));
  s->patterns = calloc(ndev, sizeof(*s->patterns));
  s->slots = calloc(ndev, sizeof(*s->slots));
  s->out = calloc(ndev, sizeof(*s->out));
  s->ids = calloc(ndev, sizeof(*s->ids));
  if (!s->names || !s->patterns || !s->slots || !s->out || !s->ids) {
    fprintf(stderr, "diskprobe stat: out of memory\n");
    return -1;
  }
  return 0;
}

static void stat_free(stat_ctx_t *s) {
  free(s->snap.buf);
  free(s->names);
  free(s->patterns);
  free(s->slots);
  free(s->out);
  free(s->ids);
}

/* Adds a kernel name to s->names unless it is there already. */
static void stat_add_name(stat_ctx_t *s, const char *name) {
  for (size_t k = 0; k < s->nnames; k++)
    if (strcmp(s->names[k], name) == 0)
      return;
  memcpy(s->names[s->nnames++], name, sizeof(s->names[0]));
}

/* The first read: every DEVICE resolved to its kernel name. 0, or -1
 * after one line. */
static int stat_resolve(stat_ctx_t *s, char **devices, size_t ndev) {
  int rc = read_snapshot(&s->snap);
  s->t0_ns = dp_now_ns();
  if (rc < 0) {
    fprintf(stderr, "diskprobe stat: cannot read %s: %s\n", DISKSTATS_PATH,
            strerror(-rc));
    return -1;
  }
  int nrec = dp_diskstats_parse(s->snap.buf, s->snap.len, NULL, 0, NULL);
  dp_diskstats_rec_t *recs = calloc(nrec > 0 ? (size_t)nrec : 1, sizeof(*recs));
  if (recs == NULL) {
    fprintf(stderr, "diskprobe stat: out of memory\n");
    return -1;
  }
  nrec = dp_diskstats_parse(s->snap.buf, s->snap.len, recs, (size_t)nrec, NULL);
  rc = 0;
  for (size_t a = 0; a < ndev && rc == 0; a++) {
    const char *why = NULL;
    const dp_diskstats_rec_t *r = resolve(devices[a], recs, (size_t)nrec, &why);
    if (r == NULL) {
      fprintf(stderr, "diskprobe stat: unknown device '%s': %s\n", devices[a],
              why);
      rc = -1;
    } else {
      stat_add_name(s, r->name);
    }
  }
  free(recs);
  return rc;
}

/* What each named device is, read once; in text, one line each before
 * the first report ("sda: class \"...\": media hdd, model ..."). */
static void stat_identities(stat_ctx_t *s, int json) {
  char cls[DP_DISK_CLASS_MAX], words[1024];
  for (size_t k = 0; k < s->nnames; k++) {
    (void)dp_blockdev_identity(NULL, s->names[k], &s->ids[k]);
    if (json)
      continue;
    dp_blockdev_class(NULL, s->ids[k].model, cls, sizeof(cls));
    dp_blockdev_identity_describe(&s->ids[k], words, sizeof(words));
    printf("%s: class \"%s\"%s%s: %s\n", s->names[k], cls,
           strcmp(s->ids[k].disk, s->names[k]) ? ", on disk " : "",
           strcmp(s->ids[k].disk, s->names[k]) ? s->ids[k].disk : "", words);
  }
}

/* The tracker over the named devices, fed the first read. */
static void stat_start(stat_ctx_t *s) {
  for (size_t k = 0; k < s->nnames; k++)
    s->patterns[k] = s->names[k];
  dp_diskstats_tracker_init(&s->tr, s->slots, s->nnames);
  dp_diskstats_tracker_filter(&s->tr, s->patterns, s->nnames);
  dp_diskstats_tracker_feed(&s->tr, s->snap.buf, s->snap.len, s->t0_ns, s->out,
                            s->nnames);
}

/* Report number rep, at its deadline: 0, or 1 after one line. */
static int stat_report(stat_ctx_t *s, const stat_args_t *a, uint64_t rep) {
  sleep_until(s->t0_ns + rep * a->interval_ns);
  int rc = read_snapshot(&s->snap);
  uint64_t now = dp_now_ns();
  double wall = wall_now();
  if (rc < 0) {
    fprintf(stderr, "diskprobe stat: cannot read %s: %s\n", DISKSTATS_PATH,
            strerror(-rc));
    return 1;
  }
  int nout = dp_diskstats_tracker_feed(&s->tr, s->snap.buf, s->snap.len, now,
                                       s->out, s->nnames);
  if (nout < 0) {
    fprintf(stderr, "diskprobe stat: %s\n", strerror(-nout));
    return 1;
  }
  if (!a->json)
    print_text_header();
  /* in the order the devices were named, not the kernel's */
  for (size_t k = 0; k < s->nnames; k++)
    for (int j = 0; j < nout; j++)
      if (strcmp(s->out[j].name, s->names[k]) == 0) {
        if (a->json)
          print_json(&s->out[j], &s->ids[k], wall);
        else
          print_text(&s->out[j]);
      }
  if (!a->json)
    printf("\n");
  fflush(stdout);
  return 0;
}

int dp_cmd_stat(int argc, char **argv) {
  stat_args_t a;
  int status = stat_parse(argc, argv, &a);
  if (status >= 0)
    return status;
  stat_ctx_t s = {0};
  status =
      stat_alloc(&s, a.ndev) == 0 && stat_resolve(&s, a.devices, a.ndev) == 0
          ? 0
          : 1;
  if (status == 0) {
    stat_identities(&s, a.json);
    stat_start(&s);
    for (uint64_t rep = 1; status == 0 && (a.count == 0 || rep <= a.count);
         rep++)
      status = stat_report(&s, &a, rep);
  }
  stat_free(&s);
  return status;
}
