/* reaper.c - children left behind, reaped later; see reaper.h. */
#define _GNU_SOURCE
#include "reaper.h"
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* ---- bounded calls in a child ------------------------------------------- */

void dp_reaper_child_isolate(int out) {
  if ((out > 0 && close_range(0, (unsigned)out - 1, 0) != 0) ||
      close_range((unsigned)out + 1, ~0u, 0) != 0) {
    struct rlimit rl;
    int max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536
                  ? (int)rl.rlim_cur
                  : 65536;
    for (int fd = 0; fd < max; fd++)
      if (fd != out)
        close(fd);
  }
  static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGUSR1};
  for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
    signal(sigs[i], SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
}

static __attribute__((noreturn)) void child_run(dp_reaper_fn_t fn, void *arg,
                                                size_t outlen, int out) {
  dp_reaper_child_isolate(out);
  char *buf = calloc(1, outlen ? outlen : 1);
  if (buf == NULL)
    _exit(1);
  fn(arg, buf, outlen);
  size_t off = 0;
  while (off < outlen) {
    ssize_t w = write(out, buf + off, outlen - off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      _exit(1);
    off += (size_t)w;
  }
  _exit(0);
}

typedef struct {
  pid_t pid;
  int fd; /* -1: done */
  size_t got;
} call_t;

void dp_reaper_call_many(dp_reaper_fn_t fn, void *args, size_t argsize,
                         void *outs, size_t outlen, size_t n, uint64_t wait_ns,
                         int *rcs) {
  call_t *c = calloc(n ? n : 1, sizeof(*c));
  struct pollfd *pf = calloc(n ? n : 1, sizeof(*pf));
  if (c == NULL || pf == NULL) {
    for (size_t i = 0; i < n; i++)
      rcs[i] = -ENOMEM;
    free(c);
    free(pf);
    return;
  }
  dp_reaper_poll(); /* children an earlier hung call left */
  size_t open = 0;
  for (size_t i = 0; i < n; i++) {
    int p[2];
    c[i].fd = -1;
    c[i].pid = -1;
    rcs[i] = 0;
    if (pipe2(p, O_CLOEXEC) != 0) {
      rcs[i] = -errno;
      continue;
    }
    pid_t pid = fork();
    if (pid == 0)
      child_run(fn, (char *)args + i * argsize, outlen, p[1]);
    int e = errno;
    close(p[1]);
    if (pid < 0) {
      close(p[0]);
      rcs[i] = -e;
      continue;
    }
    c[i].pid = pid;
    c[i].fd = p[0];
    open++;
  }
  uint64_t deadline = dp_now_ns() + wait_ns;
  while (open > 0) {
    uint64_t now = dp_now_ns();
    if (now >= deadline)
      break;
    size_t np = 0;
    for (size_t i = 0; i < n; i++)
      if (c[i].fd >= 0)
        pf[np++] = (struct pollfd){.fd = c[i].fd, .events = POLLIN};
    int r = poll(pf, np, (int)((deadline - now + 999999) / 1000000));
    if (r < 0 && errno != EINTR)
      break;
    for (size_t k = 0, i = 0; r > 0 && k < np; k++) {
      if (pf[k].revents == 0)
        continue;
      while (c[i].fd != pf[k].fd)
        i++;
      char *o = (char *)outs + i * outlen;
      ssize_t got = read(c[i].fd, o + c[i].got, outlen - c[i].got);
      if (got < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (got > 0)
        c[i].got += (size_t)got;
      if (got <= 0 || c[i].got == outlen) {
        rcs[i] = c[i].got == outlen ? 0 : -EIO;
        close(c[i].fd);
        c[i].fd = -1;
        open--;
        while (waitpid(c[i].pid, NULL, 0) < 0 && errno == EINTR)
          ;
      }
    }
  }
  for (size_t i = 0; i < n; i++)
    if (c[i].fd >= 0) { /* no answer in time: left on the hung disk */
      close(c[i].fd);
      rcs[i] = -ETIMEDOUT;
      dp_reaper_leave(c[i].pid);
    }
  free(c);
  free(pf);
}

int dp_reaper_call(dp_reaper_fn_t fn, void *arg, void *out, size_t outlen,
                   uint64_t wait_ns) {
  int rc;
  dp_reaper_call_many(fn, arg, 0, out, outlen, 1, wait_ns, &rc);
  return rc;
}
