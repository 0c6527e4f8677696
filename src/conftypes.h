/*
 * conftypes.h - the configuration's plain data: the structs a target, its
 * probes and the plugin-wide options are stored in, and their limits. No
 * functions: the option table (options.h) says where each option is
 * stored in these structs, and the configuration model (conf.h) fills
 * them through that table, so both read this header and neither needs
 * the other's (conf uses options, never the reverse).
 *
 * Units are in the member names (_ns, _bytes, _percent); strings are
 * NUL-terminated arrays owned by the struct.
 */
#ifndef DP_CONFTYPES_H
#define DP_CONFTYPES_H

#include "vocab.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* The most I/O buffer one probe may ask for (QueueDepth x BlockSize):
 * 256 MiB covers a deep sequential probe (64 x 4M) and keeps a mistyped
 * QueueDepth 256 x BlockSize 64M (16 GiB) from taking a host's memory. */
#define DP_PROBE_BUFFER_MAX_BYTES (256ull << 20)
#define DP_PROBES_MAX 16

/* How long the configuration waits for a path to answer (a stat of a
 * Device or StateDir, a target's probe file for the duplicate check, the
 * disk under a Path): each look runs in a child process (reaper.h) and a
 * path on a hung disk or a dead mount is left to the workers, said at
 * start. */
#define DP_CONF_ANSWER_NS 2000000000ull

typedef struct {
  char name[DP_NAME_MAX];
  int name_too_long; /* the name given did not fit: refused, never cut */
  dp_pattern_t pattern;
  uint32_t block_size;  /* bytes */
  uint32_t queue_depth; /* 1..DP_QD_MAX */
  uint64_t duration_ns;
  uint64_t max_ops; /* 0: none */
} dp_probe_conf_t;

typedef struct {
  char name[DP_NAME_MAX];
  int name_too_long;   /* the name given did not fit: refused, never cut */
  char path[PATH_MAX]; /* Path or Device */
  int is_device;       /* 1: Device (read-only block device) */
  int has_path;
  uint64_t file_size_bytes;
  uint64_t layout_rate_bytes; /* LayoutRate, bytes per second; 0: unbounded */
  uint64_t interval_ns;
  uint64_t timeout_ns;
  uint64_t ceiling_ns; /* LatencyCeiling; 0: the media class's default */
  char class_name[DP_NAME_MAX]; /* Class; "": the disk's model */
  dp_probe_conf_t probes[DP_PROBES_MAX];
  size_t nprobes;
} dp_target_conf_t;

/* Plugin-wide options (outside any Target): DutyCycle, Splay,
 * SaturationThreshold (see options.c; set with
 * dp_plugin_conf_set, conf.h). DeviceStats and <Target> blocks are
 * read by the plugin itself. */
typedef struct {
  double duty_cycle_percent;
  int splay;
  double saturation_percent;
  uint64_t arm_rounds;          /* ArmRounds */
  uint64_t baseline_horizon_ns; /* BaselineHorizon */
  uint64_t failslow_window_ns;  /* FailSlowWindow */
  char state_dir[PATH_MAX];     /* StateDir; "": collectd's BaseDir */
} dp_plugin_conf_t;

#endif /* DP_CONFTYPES_H */
