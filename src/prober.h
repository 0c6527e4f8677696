/*
 * prober.h - where a target's disk I/O runs: the scheduler's worker thread,
 * or a prober process of its own.
 *
 * The kernel waits for a process's outstanding AIO when the process exits
 * (exit_aio), and a thread blocked in a read of a hung disk cannot be
 * killed. A collectd whose probe I/O is stuck on a hung disk therefore
 * cannot exit, nor restart, until the disk answers -- for ever on a dead
 * path with no timeout. A prober process keeps every I/O of one target out
 * of the daemon: it opens (and lays out) the probe file, runs the engine's
 * probes, reaps a stalled probe and checks the file after each round. The
 * daemon only waits for its answers, never longer than a stop request (the
 * scheduler's stop flag) allows, and on close kills the prober and leaves
 * one whose I/O is still in the kernel to finish on its own: the kernel
 * reaps its I/O whenever the disk gives it back, and the reaper (or init,
 * once the daemon is gone) the process.
 *
 * Every wait for the prober is bounded, so that a prober that is broken
 * (or is no prober) cannot hold the daemon: the handshake
 * (DP_PROBER_HELLO_NS), the commands that do no disk I/O
 * (DP_PROBER_ANSWER_NS), the open (no progress for Timeout and
 * DP_PROBER_GRACE_NS: a layout shows progress at every chunk), a probe (its
 * Duration, Timeout and DP_PROBER_GRACE_NS: beyond, a stall, as the engine
 * would say), the check after a round (Timeout). A prober that misses the
 * first three is killed and reaped. Its standard output and error are not
 * the daemon's (see dp_prober_start), and its results are checked before
 * they are believed (dp_prober_run).
 *
 * The prober is a small program (diskprobe-prober, src/cli/prober_main.c)
 * started with posix_spawn, so it holds none of the daemon's memory and
 * none of its descriptors but two: 3 = a shared memory page (a memfd: the
 * job, the result and its histogram, the stop flag, the live I/O counter,
 * the target), 4 = the command socket. One byte per command and one per
 * answer; the prober opens the probe file itself. A prober program from
 * another build (a package upgraded under a running daemon) is refused
 * (-EPROTO) rather than misread.
 *
 * In process (helper == NULL) the same calls run the engine and the target
 * functions in the caller's thread, exactly as before the prober existed:
 * the unit suites that fake the kernel's AIO calls use that.
 *
 * Ownership: dp_prober_start allocates; dp_prober_close frees, and closes
 * the target's fd (in process) or the prober (then the caller's
 * dp_target_t holds fd -1). Thread-safety: one prober is used by one
 * thread at a time. Errors: 0 or a negative errno; nothing here logs --
 * causes go into the dp_target_t's err, as dp_target_open's do.
 */
#ifndef DP_PROBER_H
#define DP_PROBER_H

#include "engine.h"
#include "target.h"

#include <stdatomic.h>
#include <stdint.h>

typedef struct dp_prober dp_prober_t;

/* What dp_prober_open_target opens. */
typedef struct {
  const char *path;
  int is_device;            /* Device: a block device, read-only */
  uint64_t file_size_bytes; /* Path: the probe file's size */
  int writable;             /* Path: a write probe will run */
  uint64_t layout_rate_bytes;
  /* The scheduler's stop flag (may be NULL): a layout, a probe or a wait
   * for the prober's answer ends soon after it is set. */
  const atomic_int *stop;
  /* The target's Timeout (0: 30 s): an open (a layout) that neither
   * answers nor makes progress for this and DP_PROBER_GRACE_NS fails. */
  uint64_t timeout_ns;
} dp_prober_target_t;

/* The default prober program, set by the build (its libexec directory). */
const char *dp_prober_default_path(void);

/*
 * Starts a prober: helper is the prober program's path, or NULL for in
 * process. Its standard output goes to /dev/null; its standard error to a
 * pipe read (at most DP_PROBER_LAST_WORDS bytes, its first line quoted in
 * err) only when the start fails, and closed after the handshake, so
 * whatever it writes later goes nowhere. The handshake (one byte each way)
 * must come back within DP_PROBER_HELLO_NS; a prober that misses it, or
 * answers wrongly, is killed (SIGKILL) and reaped (reaper.h when it cannot
 * be at once). stop (may be NULL): set, the wait ends within
 * DP_PROBER_GRACE_NS, -ECANCELED. -ENOMEM; from the spawn: -ENOENT (no such
 * program), -EACCES, -EAGAIN (no process left), ...; -ETIMEDOUT (no answer
 * in time), -EPIPE (it ended), -EPROTO (another build's); the cause, naming
 * the program, in err (len bytes).
 */
int dp_prober_start(dp_prober_t **out, const char *helper,
                    const atomic_int *stop, char *err, size_t len);

/* Why the last exchange with the prober failed (it ended, it did not
 * answer in time and was killed, it sent a result that cannot be true),
 * naming the program: a line for the log; "" when none did. */
const char *dp_prober_error(const dp_prober_t *p);

/* Opens the target as dp_target_open does (a block device or a probe
 * file with its layout), in the prober. On success *t describes it (its fd
 * is -1 out of process: the prober holds the file). On failure t->err says
 * why. -EPIPE: the prober died; -ETIMEDOUT: it neither answered nor made
 * progress (a layout's chunks) within o->timeout_ns and DP_PROBER_GRACE_NS
 * and was killed (t->err says so); -ECANCELED: stopped. */
int dp_prober_open_target(dp_prober_t *p, const dp_prober_target_t *o,
                          dp_target_t *t);

/* Sets up the engine for the target's jobs (dp_engine_open). A prober
 * that does not answer within DP_PROBER_ANSWER_NS (no disk I/O is
 * involved) is killed: -ETIMEDOUT, the cause in dp_prober_error. */
int dp_prober_open_engine(dp_prober_t *p, uint32_t max_qd,
                          uint32_t max_block_size);

/*
 * dp_engine_run in the prober. job->stop and job->counter work as the
 * engine says (the counter grows while the probe runs, at most 50 ms
 * late). res->hist stays valid until the next run or the close. When the
 * prober does not answer within the job's timeout, its budget and
 * DP_PROBER_GRACE_NS (stuck in the kernel before the engine's own Timeout
 * could act: an io_submit blocked on a full queue), or within
 * DP_PROBER_GRACE_NS of a stop: res->stalled = 1, err_timeout =
 * queue_depth, and the prober counts queue_depth I/Os outstanding until it
 * answers. A job without a Duration (max_ops only) has no end to wait
 * for: there the prober must show progress (the live counter) at least
 * every timeout and DP_PROBER_GRACE_NS. -EPIPE: the prober died.
 * -EBADMSG: its result cannot be true for the job sent (a field out of
 * range, more I/Os than the queue depth allows in the time it took even
 * at DP_PROBER_MIN_IO_NS an I/O, a latency longer than the exchange);
 * res is then empty (ops 0, not stalled) and dp_prober_error says why.
 */
int dp_prober_run(dp_prober_t *p, const dp_job_t *job, dp_result_t *res);

/* dp_engine_reap: how many I/Os remain outstanding (0: usable again). */
int dp_prober_reap(dp_prober_t *p, uint64_t wait_ns);

/* dp_engine_release_buffers (DP_PROBER_ANSWER_NS, as the engine's set-up). */
int dp_prober_release_buffers(dp_prober_t *p);

/* dp_engine_outstanding. */
unsigned dp_prober_outstanding(const dp_prober_t *p);

/* dp_target_verify, run where the file is open; the cause goes into
 * t->err (and t->no_extent_map is kept up to date). A prober that does
 * not answer within Timeout (timeout_ns) is -ETIMEDOUT. */
int dp_prober_verify(dp_prober_t *p, dp_target_t *t, uint64_t timeout_ns);

/* Closes the target (in process: dp_engine_close, which blocks while I/O
 * is outstanding -- the caller waits for dp_prober_outstanding() == 0
 * first -- and dp_target_close). Out of process it never blocks: the
 * prober is killed (SIGKILL: one that ignores its closed socket goes too)
 * and left to the reaper (reaper.h), which takes it once it has exited
 * (once the kernel lets its I/O go). NULL is allowed. */
void dp_prober_close(dp_prober_t *p, dp_target_t *t);

/* The same, but a killed prober is waited for until deadline_ns
 * (CLOCK_MONOTONIC) at most, so that its file lock is gone when the
 * caller exits (a stop: the next process on the same probe file must not
 * find it held); one that has not exited by then is the reaper's. */
void dp_prober_close_by(dp_prober_t *p, dp_target_t *t, uint64_t deadline_ns);

/* 1 when the prober was killed for not answering in time (it may be
 * stuck in the kernel on a hung disk: see the reaper). */
int dp_prober_hung(const dp_prober_t *p);

/* Its process id (also once killed), or 0 in process. */
long dp_prober_pid(const dp_prober_t *p);

/* The prober program's body: serves commands on the shared page shm_fd and
 * the socket sock until the socket closes. Returns the exit status: 0, or 2
 * when the descriptors are not what a prober is started with. */
int dp_prober_serve(int shm_fd, int sock);

/* Test hook (tests/fakes/fake_prober.c, a prober that lies): the same,
 * with after(op, res, arg) called after each command is served and before
 * its answer (res: the probe's result, op 'R'). */
int dp_prober_serve_with(int shm_fd, int sock,
                         void (*after)(char op, dp_result_t *res, void *arg),
                         void *arg);

#define DP_PROBER_GRACE_NS (UINT64_C(2) * 1000000000)
/* The handshake's deadline: a prober program starts in milliseconds. */
#define DP_PROBER_HELLO_NS (UINT64_C(5) * 1000000000)
/* The deadline of a command that does no disk I/O (the engine's set-up,
 * giving its buffers back). */
#define DP_PROBER_ANSWER_NS (UINT64_C(5) * 1000000000)
/* How long a prober killed for missing a deadline (or ending) is waited
 * for, to reap it and say how it ended, before it is left to the reaper. */
#define DP_PROBER_REAP_NS (UINT64_C(100) * 1000000)
/* The fastest an I/O can complete, for the check of a prober's result: no
 * device completes one queue slot's I/O in less. */
#define DP_PROBER_MIN_IO_NS 1000
/* What is kept of a failed prober's standard error. */
#define DP_PROBER_LAST_WORDS 1024

#endif /* DP_PROBER_H */
