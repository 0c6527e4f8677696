/*
 * job.h - from a configured probe and an opened target to an engine job,
 * and the checks that belong between them (the one place for both: the
 * plugin's scheduler and the command line use it).
 */
#ifndef DP_JOB_H
#define DP_JOB_H

#include "conf.h"
#include "engine.h"
#include "target.h"

#include <stddef.h>
#include <stdint.h>

/*
 * Fills *job for probe p on the opened target t with the target's
 * per-I/O timeout_ns: I/O goes only to t's data region, trimmed to a
 * multiple of the block size. -EINVAL with a one-line cause in err (without
 * the target's name) when the block size is not a multiple of the target's
 * O_DIRECT alignment or larger than the target; -EPERM for a write pattern
 * on a block device (write probes only ever run inside a probe file).
 * stop and counter are left NULL for the caller.
 */
int dp_job_build(const dp_probe_conf_t *p, const dp_target_t *t,
                 uint64_t timeout_ns, dp_job_t *job, char *err, size_t errlen);

#endif /* DP_JOB_H */
