/* reaper.c - children left behind, reaped later; see reaper.h. */
#include "reaper.h"

#include <pthread.h>
#include <stddef.h>
#include <sys/wait.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t kept[DP_REAPER_MAX];
static size_t nkept;

/* Lock held. */
static void poll_locked(void) {
  for (size_t i = 0; i < nkept;) {
    if (waitpid(kept[i], NULL, WNOHANG) == 0) {
      i++;
      continue;
    }
    /* reaped, or not ours to reap (SIGCHLD ignored: ECHILD) */
    kept[i] = kept[--nkept];
  }
}

void dp_reaper_leave(pid_t pid) {
  pthread_mutex_lock(&lock);
  if (pid > 0 && nkept < DP_REAPER_MAX)
    kept[nkept++] = pid;
  poll_locked();
  pthread_mutex_unlock(&lock);
}

void dp_reaper_poll(void) {
  pthread_mutex_lock(&lock);
  poll_locked();
  pthread_mutex_unlock(&lock);
}

int dp_reaper_holds(pid_t pid) {
  int held = 0;
  pthread_mutex_lock(&lock);
  poll_locked();
  for (size_t i = 0; i < nkept; i++)
    held |= kept[i] == pid;
  pthread_mutex_unlock(&lock);
  return held;
}

unsigned dp_reaper_kept(void) {
  pthread_mutex_lock(&lock);
  unsigned n = (unsigned)nkept;
  pthread_mutex_unlock(&lock);
  return n;
}
