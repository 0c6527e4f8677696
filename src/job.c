/* job.c - see job.h. */
#include "job.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int dp_job_build(const dp_probe_conf_t *p, const dp_target_t *t,
                 uint64_t timeout_ns, dp_job_t *job, char *err, size_t errlen) {
  memset(job, 0, sizeof(*job));
  if (t->kind == DP_TARGET_BLOCK && dp_pattern_writes(p->pattern)) {
    snprintf(err, errlen,
             "refusing %s on a block device: write probes only run inside a "
             "probe file",
             dp_pattern_name(p->pattern));
    return -EPERM;
  }
  if (t->align == 0 || p->block_size % t->align != 0 ||
      p->block_size > t->data_bytes) {
    snprintf(err, errlen,
             "block size %u is not a multiple of the device's O_DIRECT "
             "alignment %u or exceeds the target",
             p->block_size, t->align);
    return -EINVAL;
  }
  job->pattern = p->pattern;
  job->block_size = p->block_size;
  job->queue_depth = p->queue_depth;
  job->duration_ns = p->duration_ns;
  job->max_ops = p->max_ops;
  job->timeout_ns = timeout_ns;
  job->region_offset = t->data_offset;
  job->region_bytes = t->data_bytes - t->data_bytes % p->block_size;
  return 0;
}
