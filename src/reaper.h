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

#endif /* DP_REAPER_H */
