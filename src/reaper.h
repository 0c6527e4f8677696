/*
 * reaper.h - child processes left behind on a hung disk, reaped later.
 *
 * A process whose I/O the kernel still holds cannot be waited for without
 * waiting for the disk. Who leaves such a child (the prober, the state
 * file's saver) hands its pid here; every later dp_reaper_poll (and every
 * dp_reaper_leave) reaps, without blocking, those that have exited, so a
 * long-running daemon does not collect zombies. What is still running when
 * the daemon exits is reaped by init. Up to DP_REAPER_MAX pids are kept
 * (beyond that a pid is left to init). Thread-safe. Nothing here logs.
 */
#ifndef DP_REAPER_H
#define DP_REAPER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define DP_REAPER_MAX 256

/* Reaps pid now if it has exited, else keeps it for later. */
void dp_reaper_leave(pid_t pid);

/* Reaps every kept child that has exited. */
void dp_reaper_poll(void);

/* 1 if pid is kept (left here and not yet exited), after reaping those
 * that have. */
int dp_reaper_holds(pid_t pid);

/* How many children are kept (not yet exited). */
unsigned dp_reaper_kept(void);

/*
 * A look at something that may not answer (a path on a hung disk or a
 * dead network mount: a stat() there waits for ever, uninterruptibly),
 * bounded: fn(arg, out, outlen) runs in a child process (fork; it keeps
 * no fd of the caller's but its result pipe, and default signals) and
 * writes its answer into out; the caller waits at most wait_ns
 * (CLOCK_MONOTONIC) for the outlen bytes. A child that has not answered
 * by then is left here (dp_reaper_leave), on the hung disk, alone.
 * fn must only do what is safe after fork in a threaded process
 * (system calls, snprintf; glibc's malloc is).
 * 0: out filled; -ETIMEDOUT: no answer in time; -EIO: the child ended
 * without one; -errno of pipe2 or fork.
 */
typedef void (*dp_reaper_fn_t)(void *arg, void *out, size_t outlen);
int dp_reaper_call(dp_reaper_fn_t fn, void *arg, void *out, size_t outlen,
                   uint64_t wait_ns);

/* dp_reaper_call for n arguments at once: n children, one deadline for
 * all (n hung paths cost wait_ns, not n times it). args[i] (an element of
 * argsize bytes) answers into outs[i] (outlen bytes each); rcs[i] as
 * dp_reaper_call's result. */
void dp_reaper_call_many(dp_reaper_fn_t fn, void *args, size_t argsize,
                         void *outs, size_t outlen, size_t n, uint64_t wait_ns,
                         int *rcs);

/* In a forked child: closes every fd but out (close_range, else one by
 * one up to RLIMIT_NOFILE, 65536 at most), sets the default disposition of
 * SIGTERM, SIGINT, SIGHUP, SIGPIPE and SIGUSR1 and unblocks every signal:
 * nothing of the parent's kept open (a probe file's lock, a socket: the
 * child may outlive the daemon on a hung disk), and a SIGTERM ends it. */
void dp_reaper_child_isolate(int out);

#endif /* DP_REAPER_H */
