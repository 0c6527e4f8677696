/* peers.c - see peers.h. */
#include "peers.h"
#include "blockdev.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROUPS_MAX 16

typedef struct {
  char name[DP_DISKSTATS_NAME_MAX];
  char model[DP_BLOCKDEV_MODEL_MAX], serial[DP_BLOCKDEV_SERIAL_MAX];
  size_t group, index;
} disk_t;

typedef struct {
  dp_media_t media;
  char model[DP_BLOCKDEV_MODEL_MAX];
  size_t n;
  dp_failslow_t *d;
  dp_failslow_verdict_t *v;
} group_t;

struct dp_peers {
  disk_t *disks;
  size_t ndisks;
  group_t groups[GROUPS_MAX];
  size_t ngroups;
};

int dp_peers_new(dp_peers_t **out, const dp_diskstats_metrics_t *m, size_t n,
                 const char *sysroot, double interval_s, double window_s) {
  *out = NULL;
  dp_failslow_conf_t fc;
  dp_failslow_conf_init(&fc);
  if (dp_failslow_conf_for_window(&fc, interval_s, window_s) < 0)
    return -EINVAL;
  dp_peers_t *p = calloc(1, sizeof(*p));
  if (p == NULL || (p->disks = calloc(n ? n : 1, sizeof(*p->disks))) == NULL) {
    free(p);
    return -ENOMEM;
  }
  group_t cand[GROUPS_MAX];
  size_t ncand = 0;
  memset(cand, 0, sizeof(cand));
  for (size_t i = 0; i < n; i++) {
    if (!dp_blockdev_is_whole_disk(sysroot, m[i].name))
      continue;
    disk_t *d = &p->disks[p->ndisks];
    snprintf(d->name, sizeof(d->name), "%s", m[i].name);
    dp_blockdev_info_t info;
    (void)dp_blockdev_info(sysroot, d->name, &info); /* a whole disk */
    dp_media_t media = info.media;
    memcpy(d->model, info.model, sizeof(d->model));
    memcpy(d->serial, info.serial, sizeof(d->serial));
    size_t g = 0;
    while (g < ncand &&
           (cand[g].media != media || strcmp(cand[g].model, d->model) != 0))
      g++;
    if (g == ncand) {
      if (ncand == GROUPS_MAX)
        continue;
      cand[ncand].media = media;
      snprintf(cand[ncand].model, sizeof(cand[ncand].model), "%s", d->model);
      ncand++;
    }
    d->group = g;
    d->index = cand[g].n++;
    p->ndisks++;
  }
  /* keep the groups of three or more; renumber */
  size_t map[GROUPS_MAX];
  for (size_t g = 0; g < ncand; g++) {
    map[g] = SIZE_MAX;
    if (cand[g].n < 3)
      continue;
    group_t *G = &p->groups[p->ngroups];
    *G = cand[g];
    if (dp_failslow_new(&G->d, &fc, G->n) < 0 ||
        (G->v = calloc(G->n, sizeof(*G->v))) == NULL) {
      dp_peers_free(p);
      return -ENOMEM;
    }
    map[g] = p->ngroups++;
  }
  size_t kept = 0;
  for (size_t i = 0; i < p->ndisks; i++) {
    disk_t d = p->disks[i];
    if (map[d.group] == SIZE_MAX)
      continue;
    d.group = map[d.group];
    dp_failslow_set_device(p->groups[d.group].d, d.index, d.name);
    p->disks[kept++] = d;
  }
  p->ndisks = kept;
  *out = p;
  return 0;
}

void dp_peers_free(dp_peers_t *p) {
  if (p == NULL)
    return;
  for (size_t g = 0; g < p->ngroups; g++) {
    dp_failslow_free(p->groups[g].d);
    free(p->groups[g].v);
  }
  free(p->disks);
  free(p);
}

size_t dp_peers_ndevices(const dp_peers_t *p) { return p ? p->ndisks : 0; }

void dp_peers_feed(dp_peers_t *p, const dp_diskstats_metrics_t *m, size_t n,
                   double ts, dp_peers_fn each, dp_peers_fn changed,
                   void *arg) {
  if (p == NULL || p->ndisks == 0)
    return;
  /* The device view lists its devices in the same order every read, and
   * the disks were taken from it in that order: each search starts after
   * the last match: one comparison per judged disk instead of a pass
   * over all of them (a device that is no judged disk, e.g. a partition,
   * still costs a pass; any order is still found). */
  size_t next = 0;
  for (size_t i = 0; i < n; i++) {
    const dp_diskstats_metrics_t *x = &m[i];
    for (size_t j = 0; j < p->ndisks; j++) {
      size_t k = (next + j) % p->ndisks;
      disk_t *d = &p->disks[k];
      if (strcmp(d->name, x->name) != 0)
        continue;
      double r = (double)x->d_reads, w = (double)x->d_writes;
      double lat = dp_failslow_latency_per_io(
          r, r > 0 ? (double)x->d_read_ms / 1e3 / r : NAN, w,
          w > 0 ? (double)x->d_write_ms / 1e3 / w : NAN);
      dp_failslow_feed(p->groups[d->group].d, d->index,
                       x->read_bytes_per_s + x->write_bytes_per_s, lat);
      next = k + 1;
      break;
    }
  }
  for (size_t g = 0; g < p->ngroups; g++) {
    group_t *G = &p->groups[g];
    int closed = dp_failslow_step(G->d, ts, G->v) == 1;
    if (!closed && each == NULL)
      continue;
    for (size_t k = 0; k < p->ndisks; k++) {
      disk_t *d = &p->disks[k];
      if (d->group != g)
        continue;
      dp_peers_disk_t pd = {.device = d->name,
                            .model = d->model,
                            .serial = d->serial,
                            .media = G->media,
                            .group_size = G->n};
      if (closed) {
        pd.v = G->v[d->index];
        dp_failslow_describe(G->d, d->index, &pd.v, pd.words, sizeof(pd.words));
      } else {
        dp_failslow_verdict(G->d, d->index, &pd.v); /* changed = 0 */
      }
      if (each)
        each(&pd, arg);
      if (closed && pd.v.changed && changed)
        changed(&pd, arg);
    }
  }
}
