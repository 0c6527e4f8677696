/* diskstats.c - /proc/diskstats parser, derived metrics, tracker; see
 * diskstats.h. */
#include "diskstats.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

/* Counters after the name on the longest line format we know (20 fields). */
#define NCOUNTERS 17

static int is_space(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r'); /* \t \n \v \f \r */
}

int dp_diskstats_parse_line(const char *line, size_t len,
                            dp_diskstats_rec_t *out) {
  if (line == NULL || out == NULL)
    return -EINVAL;
  /* v[0] major, v[1] minor, v[2] unused (the name), v[3..] F1..F17 */
  uint64_t v[3 + NCOUNTERS] = {0};
  const char *name = NULL;
  size_t name_len = 0;
  unsigned nf = 0;
  const char *p = line, *end = line + len;
  for (;;) {
    while (p < end && is_space(*p))
      p++;
    if (p == end)
      break;
    const char *tok = p;
    if (nf == 2 || nf >= 3 + NCOUNTERS) {
      /* the name; or a field past the 20th (a future kernel): counted,
       * not read */
      while (p < end && !is_space(*p))
        p++;
      if (nf == 2) {
        name = tok;
        name_len = (size_t)(p - tok);
      }
    } else {
      /* digits only, in one pass: strtoull would take "-1" and leading
       * blanks, is locale-aware, and would make a second pass */
      uint64_t x = 0;
      for (; p < end; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (d > 9)
          break;
        if (__builtin_mul_overflow(x, 10, &x) ||
            __builtin_add_overflow(x, d, &x))
          return -EINVAL;
      }
      if (p == tok || (p < end && !is_space(*p)))
        return -EINVAL;
      v[nf] = x;
    }
    nf++;
  }
  if (nf == 0)
    return -ENODATA;
  if (nf != 14 && nf != 18 && nf < 20)
    return -EINVAL;
  if (v[0] > UINT32_MAX || v[1] > UINT32_MAX ||
      name_len >= DP_DISKSTATS_NAME_MAX)
    return -EINVAL;
  const uint64_t *c = v + 3;
  out->major = (unsigned)v[0];
  out->minor = (unsigned)v[1];
  memcpy(out->name, name, name_len);
  out->name[name_len] = '\0';
  out->fields = nf;
  out->reads = c[0];
  out->reads_merged = c[1];
  out->read_sectors = c[2];
  out->read_ms = c[3];
  out->writes = c[4];
  out->writes_merged = c[5];
  out->write_sectors = c[6];
  out->write_ms = c[7];
  out->in_flight = c[8];
  out->io_ms = c[9];
  out->weighted_ms = c[10];
  out->discards = c[11];
  out->discards_merged = c[12];
  out->discard_sectors = c[13];
  out->discard_ms = c[14];
  out->flushes = c[15];
  out->flush_ms = c[16];
  return 0;
}

/* The line at p (without its newline) and where the next one starts. */
static const char *next_line(const char *p, const char *end, size_t *len) {
  const char *nl = memchr(p, '\n', (size_t)(end - p));
  const char *stop = nl ? nl : end;
  *len = (size_t)(stop - p);
  return nl ? nl + 1 : end;
}

int dp_diskstats_parse(const char *buf, size_t len, dp_diskstats_rec_t *recs,
                       size_t cap, size_t *bad_lines) {
  if ((buf == NULL && len > 0) || (recs == NULL && cap > 0))
    return -EINVAL;
  size_t good = 0, bad = 0;
  const char *p = buf, *end = buf + len;
  dp_diskstats_rec_t scratch;
  while (p < end) {
    size_t ll;
    const char *line = p;
    p = next_line(p, end, &ll);
    int rc =
        dp_diskstats_parse_line(line, ll, good < cap ? &recs[good] : &scratch);
    if (rc == 0)
      good++;
    else if (rc != -ENODATA)
      bad++;
  }
  if (bad_lines)
    *bad_lines = bad;
  return good > INT32_MAX ? INT32_MAX : (int)good;
}

int dp_diskstats_read_file(const char *path, char *buf, size_t cap,
                           size_t *len) {
  if (path == NULL || buf == NULL || cap == 0 || len == NULL)
    return -EINVAL;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  size_t got = 0;
  int rc = 0;
  for (;;) {
    if (got == cap - 1) {
      /* full: one more byte tells whether the file ended exactly here */
      char extra;
      ssize_t r = read(fd, &extra, 1);
      if (r > 0)
        rc = -ENOBUFS;
      else if (r < 0 && errno != EINTR)
        rc = -errno;
      else if (r < 0)
        continue;
      break;
    }
    /* /proc files come a page at a time: loop until end of file */
    ssize_t r = read(fd, buf + got, cap - 1 - got);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      rc = -errno;
      break;
    }
    if (r == 0)
      break;
    got += (size_t)r;
  }
  close(fd);
  if (rc < 0)
    return rc;
  buf[got] = '\0';
  *len = got;
  return 0;
}

static double ratio(double num, uint64_t den) {
  return den ? num / (double)den : NAN;
}

/* The millisecond fields are printed as 32-bit unsigned and wrap. */
static uint64_t delta32(uint64_t cur, uint64_t prev) {
  return (uint32_t)((uint32_t)cur - (uint32_t)prev);
}

int dp_diskstats_derive(const dp_diskstats_rec_t *prev,
                        const dp_diskstats_rec_t *cur, uint64_t interval_ns,
                        dp_diskstats_metrics_t *out) {
  if (prev == NULL || cur == NULL || out == NULL || interval_ns == 0)
    return -EINVAL;
  if (prev->major != cur->major || prev->minor != cur->minor ||
      strcmp(prev->name, cur->name) != 0)
    return -ESTALE;
  unsigned fields = prev->fields < cur->fields ? prev->fields : cur->fields;
  int disc = fields >= 18, flush = fields >= 20;
  /* 64-bit counts only ever grow; going back means a new device behind the
   * same identity (a loop device re-attached, a disk hot-swapped). */
  if (cur->reads < prev->reads || cur->reads_merged < prev->reads_merged ||
      cur->read_sectors < prev->read_sectors || cur->writes < prev->writes ||
      cur->writes_merged < prev->writes_merged ||
      cur->write_sectors < prev->write_sectors)
    return -ESTALE;
  if (disc && (cur->discards < prev->discards ||
               cur->discards_merged < prev->discards_merged ||
               cur->discard_sectors < prev->discard_sectors))
    return -ESTALE;
  if (flush && cur->flushes < prev->flushes)
    return -ESTALE;
  /* io_ms grows at most as fast as the wall clock (give or take a slow
   * request on some kernels): a modular delta of 2^31 ms or more within an
   * interval shorter than that is the counter going back, i.e. a reset. */
  uint64_t d_io_ms = delta32(cur->io_ms, prev->io_ms);
  if (d_io_ms >= (UINT64_C(1) << 31) &&
      interval_ns / 1000000 < (UINT64_C(1) << 31))
    return -ESTALE;

  dp_diskstats_metrics_t m;
  memset(&m, 0, sizeof(m));
  m.major = cur->major;
  m.minor = cur->minor;
  memcpy(m.name, cur->name, sizeof(m.name));
  m.flags = (disc ? DP_DISKSTATS_HAVE_DISCARDS : 0u) |
            (flush ? DP_DISKSTATS_HAVE_FLUSHES : 0u);
  m.interval_ns = interval_ns;
  double dt = (double)interval_ns / 1e9;
  m.interval_s = dt;

  m.d_reads = cur->reads - prev->reads;
  m.d_reads_merged = cur->reads_merged - prev->reads_merged;
  m.d_read_sectors = cur->read_sectors - prev->read_sectors;
  m.d_read_ms = delta32(cur->read_ms, prev->read_ms);
  m.d_writes = cur->writes - prev->writes;
  m.d_writes_merged = cur->writes_merged - prev->writes_merged;
  m.d_write_sectors = cur->write_sectors - prev->write_sectors;
  m.d_write_ms = delta32(cur->write_ms, prev->write_ms);
  m.d_io_ms = d_io_ms;
  m.d_weighted_ms = delta32(cur->weighted_ms, prev->weighted_ms);
  if (disc) {
    m.d_discards = cur->discards - prev->discards;
    m.d_discards_merged = cur->discards_merged - prev->discards_merged;
    m.d_discard_sectors = cur->discard_sectors - prev->discard_sectors;
    m.d_discard_ms = delta32(cur->discard_ms, prev->discard_ms);
  }
  if (flush) {
    m.d_flushes = cur->flushes - prev->flushes;
    m.d_flush_ms = delta32(cur->flush_ms, prev->flush_ms);
  }
  m.d_ios = m.d_reads + m.d_writes + m.d_discards + m.d_flushes;

  const double sb = DP_DISKSTATS_SECTOR_BYTES;
  m.reads_per_s = (double)m.d_reads / dt;
  m.writes_per_s = (double)m.d_writes / dt;
  m.reads_merged_per_s = (double)m.d_reads_merged / dt;
  m.writes_merged_per_s = (double)m.d_writes_merged / dt;
  m.read_bytes_per_s = (double)m.d_read_sectors * sb / dt;
  m.write_bytes_per_s = (double)m.d_write_sectors * sb / dt;
  m.avg_read_size_bytes = ratio((double)m.d_read_sectors * sb, m.d_reads);
  m.avg_write_size_bytes = ratio((double)m.d_write_sectors * sb, m.d_writes);
  m.read_await_s = ratio((double)m.d_read_ms / 1000.0, m.d_reads);
  m.write_await_s = ratio((double)m.d_write_ms / 1000.0, m.d_writes);
  m.iops = (double)m.d_ios / dt;
  m.await_s = ratio(
      (double)(m.d_read_ms + m.d_write_ms + m.d_discard_ms + m.d_flush_ms) /
          1000.0,
      m.d_ios);
  m.avg_queue_length = (double)m.d_weighted_ms / (1000.0 * dt);
  m.util_percent = (double)m.d_io_ms / (10.0 * dt);
  m.service_time_s = ratio((double)m.d_io_ms / 1000.0, m.d_ios);
  m.in_flight = cur->in_flight;

  if (disc) {
    m.discards_per_s = (double)m.d_discards / dt;
    m.discards_merged_per_s = (double)m.d_discards_merged / dt;
    m.discard_bytes_per_s = (double)m.d_discard_sectors * sb / dt;
    m.avg_discard_size_bytes =
        ratio((double)m.d_discard_sectors * sb, m.d_discards);
    m.discard_await_s = ratio((double)m.d_discard_ms / 1000.0, m.d_discards);
  } else {
    m.discards_per_s = m.discards_merged_per_s = m.discard_bytes_per_s = NAN;
    m.avg_discard_size_bytes = m.discard_await_s = NAN;
  }
  if (flush) {
    m.flushes_per_s = (double)m.d_flushes / dt;
    m.flush_await_s = ratio((double)m.d_flush_ms / 1000.0, m.d_flushes);
  } else {
    m.flushes_per_s = m.flush_await_s = NAN;
  }
  m.probe_ios_share = m.probe_bytes_share = NAN;
  *out = m;
  return 0;
}

void dp_diskstats_probe_share(dp_diskstats_metrics_t *m, uint64_t probe_ios,
                              uint64_t probe_bytes) {
  if (m == NULL)
    return;
  m->probe_ios_share = ratio((double)probe_ios, m->d_reads + m->d_writes);
  m->probe_bytes_share =
      ratio((double)probe_bytes, (m->d_read_sectors + m->d_write_sectors) *
                                     DP_DISKSTATS_SECTOR_BYTES);
}

double dp_diskstats_little(const dp_diskstats_metrics_t *m, double *lhs,
                           double *rhs) {
  if (lhs)
    *lhs = m->avg_queue_length;
  if (rhs)
    *rhs = m->d_ios ? m->iops * m->await_s : 0.0;
  /* each of the k time fields summed is floored on its own, F11 once */
  unsigned k = 2;
  if (m->flags & DP_DISKSTATS_HAVE_DISCARDS)
    k++;
  if (m->flags & DP_DISKSTATS_HAVE_FLUSHES)
    k++;
  return (double)(k - 1) / (1000.0 * m->interval_s);
}

void dp_diskstats_tracker_init(dp_diskstats_tracker_t *t,
                               dp_diskstats_slot_t *slots, size_t cap) {
  memset(t, 0, sizeof(*t));
  t->slots = slots;
  t->cap = slots ? cap : 0;
}

void dp_diskstats_tracker_filter(dp_diskstats_tracker_t *t,
                                 const char *const *patterns, size_t n) {
  t->patterns = patterns;
  t->n_patterns = patterns ? n : 0;
}

int dp_diskstats_tracker_wants(const dp_diskstats_tracker_t *t,
                               const char *name) {
  if (t->n_patterns == 0)
    return 1;
  for (size_t i = 0; i < t->n_patterns; i++)
    if (fnmatch(t->patterns[i], name, 0) == 0)
      return 1;
  return 0;
}

/* The slot of major:minor, searched from the cursor (0..n): the kernel
 * lists devices in a stable order, so the next device is almost always at
 * the cursor and a snapshot costs O(devices). */
static dp_diskstats_slot_t *lookup(dp_diskstats_tracker_t *t, unsigned major,
                                   unsigned minor) {
  size_t i = t->cursor < t->n ? t->cursor : 0;
  for (size_t k = 0; k < t->n; k++, i = i + 1 < t->n ? i + 1 : 0) {
    dp_diskstats_slot_t *s = &t->slots[i];
    if (s->rec.major == major && s->rec.minor == minor) {
      t->cursor = i + 1;
      return s;
    }
  }
  return NULL;
}

static void begin(dp_diskstats_tracker_t *t) {
  t->gen++;
  t->cursor = 0;
  t->dropped = t->rebased = t->bad_lines = 0;
}

static void track(dp_diskstats_tracker_t *t, const dp_diskstats_rec_t *rec,
                  uint64_t now_ns, dp_diskstats_metrics_t *out, size_t out_cap,
                  size_t *nout) {
  if (!dp_diskstats_tracker_wants(t, rec->name))
    return;
  size_t at = t->cursor; /* where a new device goes: after its predecessor */
  dp_diskstats_slot_t *s = lookup(t, rec->major, rec->minor);
  if (s == NULL) {
    if (t->n == t->cap) {
      t->dropped++;
      return;
    }
    /* keep kernel order so the cursor keeps hitting; moves happen only
     * when a device appears in the middle of the list */
    memmove(&t->slots[at + 1], &t->slots[at],
            (t->n - at) * sizeof(t->slots[0]));
    t->n++;
    s = &t->slots[at];
    s->rec = *rec;
    s->ts_ns = now_ns;
    s->gen = t->gen;
    t->cursor = at + 1;
    return;
  }
  if (s->gen == t->gen) { /* the same device twice in one snapshot */
    t->dropped++;
    return;
  }
  dp_diskstats_metrics_t spare;
  dp_diskstats_metrics_t *m = *nout < out_cap ? &out[*nout] : &spare;
  int rc = dp_diskstats_derive(&s->rec, rec, now_ns - s->ts_ns, m);
  if (rc == 0) {
    if (*nout < out_cap)
      (*nout)++;
    else
      t->dropped++;
  } else {
    t->rebased++;
  }
  s->rec = *rec;
  s->ts_ns = now_ns;
  s->gen = t->gen;
}

/* Forgets devices the last snapshot did not list (vanished, or filtered
 * out): when one comes back, its first sample emits nothing. */
static void sweep(dp_diskstats_tracker_t *t, uint64_t now_ns) {
  size_t w = 0;
  for (size_t r = 0; r < t->n; r++) {
    if (t->slots[r].gen != t->gen)
      continue;
    if (w != r)
      t->slots[w] = t->slots[r];
    w++;
  }
  t->n = w;
  t->cursor = 0;
  t->last_ns = now_ns;
}

static int check_time(const dp_diskstats_tracker_t *t, uint64_t now_ns) {
  return (t->gen > 0 && now_ns <= t->last_ns) ? -EINVAL : 0;
}

static int clamp_count(size_t n) { return n > INT32_MAX ? INT32_MAX : (int)n; }

int dp_diskstats_tracker_update(dp_diskstats_tracker_t *t,
                                const dp_diskstats_rec_t *recs, size_t n,
                                uint64_t now_ns, dp_diskstats_metrics_t *out,
                                size_t out_cap) {
  if (t == NULL || (recs == NULL && n > 0) || (out == NULL && out_cap > 0))
    return -EINVAL;
  if (check_time(t, now_ns) < 0)
    return -EINVAL;
  begin(t);
  size_t nout = 0;
  for (size_t i = 0; i < n; i++)
    track(t, &recs[i], now_ns, out, out_cap, &nout);
  sweep(t, now_ns);
  return clamp_count(nout);
}

int dp_diskstats_tracker_feed(dp_diskstats_tracker_t *t, const char *buf,
                              size_t len, uint64_t now_ns,
                              dp_diskstats_metrics_t *out, size_t out_cap) {
  if (t == NULL || (buf == NULL && len > 0) || (out == NULL && out_cap > 0))
    return -EINVAL;
  if (check_time(t, now_ns) < 0)
    return -EINVAL;
  begin(t);
  size_t nout = 0, bad = 0;
  const char *p = buf, *end = buf + len;
  while (p < end) {
    size_t ll;
    const char *line = p;
    p = next_line(p, end, &ll);
    dp_diskstats_rec_t rec;
    int rc = dp_diskstats_parse_line(line, ll, &rec);
    if (rc == 0)
      track(t, &rec, now_ns, out, out_cap, &nout);
    else if (rc != -ENODATA)
      bad++;
  }
  sweep(t, now_ns);
  t->bad_lines = bad;
  return clamp_count(nout);
}

const dp_diskstats_rec_t *
dp_diskstats_tracker_find(const dp_diskstats_tracker_t *t, const char *name) {
  for (size_t i = 0; i < t->n; i++)
    if (strcmp(t->slots[i].rec.name, name) == 0)
      return &t->slots[i].rec;
  return NULL;
}

int dp_diskstats_saturated(const dp_diskstats_metrics_t *m,
                           double threshold_percent) {
  return m->util_percent >= threshold_percent && !(m->probe_bytes_share >= 0.5);
}
