/* prober.c - a target's disk I/O in the caller's thread or in a prober
 * process; see prober.h for the contract. */
#define _GNU_SOURCE /* memfd_create, posix_spawn_file_actions_addclosefrom_np  \
                     */
#include "prober.h"
#include "clock.h"
#include "reaper.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef DP_PROBER_PATH
#define DP_PROBER_PATH "/usr/libexec/diskprobe/diskprobe-prober"
#endif

extern char **environ;

/* Bumped whenever the shared page changes meaning; its size is checked
 * too. */
#define PROTOCOL 1

/* The page the daemon and its prober share. The daemon writes the command's
 * arguments before the command byte and reads the answer after the answer
 * byte; the prober the other way round. stop and counter are read and
 * written at any time, atomically. */
typedef struct {
  uint32_t protocol, size;
  atomic_int stop;
  dp_io_counter_t counter;
  int rc;
  unsigned outstanding;
  /* arguments */
  uint64_t wait_ns;
  uint32_t max_qd, max_bs;
  char path[PATH_MAX];
  int is_device, writable;
  uint64_t file_size_bytes, layout_rate_bytes;
  dp_job_t job; /* its pointers are the prober's own */
  /* answers */
  dp_target_t t; /* the prober's target, its fd the prober's */
  dp_result_t res;
  dp_hist_t hist;
} shm_t;

enum {
  OP_HELLO = 'H',
  OP_OPEN = 'O',
  OP_ENGINE = 'E',
  OP_RUN = 'R',
  OP_REAP = 'P',
  OP_RELEASE = 'B',
  OP_VERIFY = 'V',
  ANSWER_FOREIGN = '!', /* to OP_HELLO: another build's page */
};

struct dp_prober {
  /* in process */
  dp_engine_t *engine;
  dp_target_t *target; /* the caller's, kept for the close */
  /* out of process */
  pid_t pid;
  int sock;
  shm_t *m;
  int busy;          /* a command sent, its answer not read yet */
  unsigned busy_qd;  /* I/Os that may be in flight meanwhile */
  int dead;          /* the socket closed: the prober is gone */
  uint64_t seen_ios; /* of m->counter, already passed on */
  uint64_t seen_bytes;
};

const char *dp_prober_default_path(void) { return DP_PROBER_PATH; }

long dp_prober_pid(const dp_prober_t *p) { return p ? (long)p->pid : 0; }

/* ---- the daemon's side ------------------------------------------------------
 */

int dp_prober_start(dp_prober_t **out, const char *helper, char *err,
                    size_t len) {
  *out = NULL;
  dp_prober_t *p = calloc(1, sizeof(*p));
  if (p == NULL)
    return -ENOMEM;
  p->sock = -1;
  dp_reaper_poll();
  if (helper == NULL) {
    *out = p;
    return 0;
  }
  int rc = 0, sv[2] = {-1, -1}, mfd = -1, hm = -1, hs = -1;
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 ||
      (mfd = memfd_create("diskprobe-prober", MFD_CLOEXEC)) < 0 ||
      ftruncate(mfd, sizeof(shm_t)) < 0)
    rc = -errno;
  if (rc == 0) {
    p->m =
        mmap(NULL, sizeof(shm_t), PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    if (p->m == MAP_FAILED) {
      p->m = NULL;
      rc = -errno;
    }
  }
  /* above 4, so that the dup2s below cannot overwrite each other */
  if (rc == 0 && ((hm = fcntl(mfd, F_DUPFD_CLOEXEC, 10)) < 0 ||
                  (hs = fcntl(sv[1], F_DUPFD_CLOEXEC, 10)) < 0))
    rc = -errno;
  if (rc < 0) {
    snprintf(err, len, "cannot set up the prober's page and socket: %s",
             strerror(-rc));
  } else {
    p->m->protocol = PROTOCOL;
    p->m->size = sizeof(shm_t);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, hm, 3);
    posix_spawn_file_actions_adddup2(&fa, hs, 4);
    posix_spawn_file_actions_addclosefrom_np(&fa, 5);
    posix_spawnattr_init(&at);
    /* the worker's mask blocks every signal, and the daemon's handlers
     * mean nothing in the prober */
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setflags(&at,
                             POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    char *argv[] = {(char *)"diskprobe-prober", NULL};
    int e = posix_spawn(&p->pid, helper, &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (e != 0) {
      rc = -e;
      p->pid = 0;
      snprintf(err, len, "cannot start the prober %s: %s", helper, strerror(e));
    }
  }
  if (hm >= 0)
    close(hm);
  if (hs >= 0)
    close(hs);
  if (mfd >= 0)
    close(mfd);
  if (sv[1] >= 0)
    close(sv[1]);
  p->sock = sv[0];
  if (rc == 0) {
    char a = OP_HELLO;
    if (send(p->sock, &a, 1, MSG_NOSIGNAL) != 1 || read(p->sock, &a, 1) != 1)
      rc = -EPIPE;
    else if (a != OP_HELLO)
      rc = -EPROTO;
    if (rc < 0)
      snprintf(err, len,
               rc == -EPROTO ? "the prober %s is from another build of "
                               "diskprobe: restart collectd"
                             : "the prober %s ended at once",
               helper);
  }
  if (rc < 0) {
    dp_prober_close(p, NULL);
    return rc;
  }
  *out = p;
  return 0;
}

/* Passes the prober's completions on to the job's counter. */
static void pass_counter(dp_prober_t *p, dp_io_counter_t *c) {
  uint64_t ios = atomic_load(&p->m->counter.ios);
  uint64_t bytes = atomic_load(&p->m->counter.bytes);
  if (c != NULL) {
    atomic_fetch_add(&c->ios, ios - p->seen_ios);
    atomic_fetch_add(&c->bytes, bytes - p->seen_bytes);
  }
  p->seen_ios = ios;
  p->seen_bytes = bytes;
}

/*
 * Waits for the answer to the command in flight: 0 answered; -ETIMEDOUT
 * when deadline_ns (0: none) passed, or DP_PROBER_GRACE_NS after *stop was
 * seen (the prober is told to stop too); -EPIPE when the prober is gone.
 * p->busy stays set until the answer is read.
 */
static int await(dp_prober_t *p, const atomic_int *stop, dp_io_counter_t *c,
                 uint64_t deadline_ns) {
  uint64_t stop_by = 0;
  for (;;) {
    struct pollfd pf = {.fd = p->sock, .events = POLLIN};
    int n = poll(&pf, 1, 50);
    pass_counter(p, c);
    if (n > 0) {
      char a;
      ssize_t r = read(p->sock, &a, 1);
      if (r == 1) {
        p->busy = 0;
        return 0;
      }
      if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        p->dead = 1;
        p->busy = 0;
        return -EPIPE;
      }
    } else if (n < 0 && errno != EINTR) {
      p->dead = 1;
      p->busy = 0;
      return -EPIPE;
    }
    uint64_t now = dp_now_ns();
    if (stop != NULL && stop_by == 0 && atomic_load(stop)) {
      atomic_store(&p->m->stop, 1);
      stop_by = now + DP_PROBER_GRACE_NS;
    }
    if ((deadline_ns && now >= deadline_ns) || (stop_by && now >= stop_by))
      return -ETIMEDOUT;
  }
}

/* Sends command op; -EBUSY while an earlier answer is due, -EPIPE when
 * the prober is gone. */
static int send_op(dp_prober_t *p, char op) {
  if (p->dead)
    return -EPIPE;
  if (p->busy && await(p, NULL, NULL, dp_now_ns() + 1) == -ETIMEDOUT)
    return -EBUSY;
  if (p->dead)
    return -EPIPE;
  ssize_t w;
  while ((w = send(p->sock, &op, 1, MSG_NOSIGNAL)) < 0 && errno == EINTR)
    ;
  if (w != 1) {
    p->dead = 1;
    return -EPIPE;
  }
  p->busy = 1;
  p->busy_qd = p->m->outstanding;
  return 0;
}

/* A command and its answer: 0 with the prober's return value in *rc, or
 * the exchange's failure: -EBUSY (an earlier answer is due), -EPIPE (the
 * prober is gone), -ETIMEDOUT (no answer in time; it is due later). */
static int call(dp_prober_t *p, char op, const atomic_int *stop,
                dp_io_counter_t *c, uint64_t deadline_ns, int *rc) {
  if (stop != NULL)
    atomic_store(&p->m->stop, atomic_load(stop));
  int x = send_op(p, op);
  if (x == 0)
    x = await(p, stop, c, deadline_ns);
  *rc = x == 0 ? p->m->rc : x;
  return x;
}

static void gone(dp_target_t *t, int rc) {
  snprintf(t->err, sizeof(t->err), "%s",
           rc == -EPIPE ? "the prober process ended (killed?)"
                        : "the prober process did not answer");
}

int dp_prober_open_target(dp_prober_t *p, const dp_prober_target_t *o,
                          dp_target_t *t) {
  if (p->sock < 0) {
    dp_layout_conf_t lc = {.stop = o->stop,
                           .rate_bytes_per_s = o->layout_rate_bytes};
    int rc = o->is_device
                 ? dp_target_open_block(o->path, t)
                 : dp_target_open_file_layout(o->path, o->file_size_bytes,
                                              o->writable, &lc, t);
    if (rc == 0)
      p->target = t;
    return rc;
  }
  shm_t *m = p->m;
  if (strlen(o->path) >= sizeof(m->path)) {
    snprintf(t->err, sizeof(t->err), "path too long");
    return -ENAMETOOLONG;
  }
  snprintf(m->path, sizeof(m->path), "%s", o->path);
  m->is_device = o->is_device;
  m->writable = o->writable;
  m->file_size_bytes = o->file_size_bytes;
  m->layout_rate_bytes = o->layout_rate_bytes;
  m->t = *t; /* what an interrupted layout left (resumed_bytes) */
  int rc, x = call(p, OP_OPEN, o->stop, NULL, 0, &rc);
  if (x < 0) {
    gone(t, x);
    return x == -ETIMEDOUT && o->stop && atomic_load(o->stop) ? -ECANCELED : x;
  }
  *t = m->t;
  t->fd = -1; /* the prober's */
  return rc;
}

int dp_prober_open_engine(dp_prober_t *p, uint32_t max_qd,
                          uint32_t max_block_size) {
  if (p->sock < 0)
    return dp_engine_open(&p->engine, p->target->fd, p->target->align, max_qd,
                          max_block_size);
  p->m->max_qd = max_qd;
  p->m->max_bs = max_block_size;
  int rc;
  call(p, OP_ENGINE, NULL, NULL, 0, &rc);
  return rc;
}

int dp_prober_run(dp_prober_t *p, const dp_job_t *job, dp_result_t *res) {
  if (p->sock < 0)
    return p->engine ? dp_engine_run(p->engine, job, res) : -EINVAL;
  shm_t *m = p->m;
  m->job = *job;
  m->job.stop = NULL;
  m->job.counter = NULL;
  uint64_t deadline = 0;
  if (job->duration_ns > 0) /* the engine's own Timeout, and a grace */
    deadline = dp_now_ns() + job->duration_ns +
               (job->timeout_ns ? job->timeout_ns : 30 * UINT64_C(1000000000)) +
               DP_PROBER_GRACE_NS;
  int rc, x = call(p, OP_RUN, job->stop, job->counter, deadline, &rc);
  if (x == -ETIMEDOUT) { /* stuck in the kernel: a stall */
    memset(res, 0, sizeof(*res));
    res->pattern = job->pattern;
    res->block_size = job->block_size;
    res->queue_depth = job->queue_depth;
    res->stalled = 1;
    res->err_timeout = job->queue_depth;
    res->first_error = -ETIMEDOUT;
    res->hist = NULL;
    p->busy_qd = job->queue_depth;
    return 0;
  }
  if (x < 0) {
    memset(res, 0, sizeof(*res));
    res->pattern = job->pattern;
    res->hist = NULL;
    return rc;
  }
  *res = m->res;
  res->hist = &m->hist;
  return rc;
}

int dp_prober_reap(dp_prober_t *p, uint64_t wait_ns) {
  if (p->sock < 0)
    return p->engine ? dp_engine_reap(p->engine, wait_ns) : 0;
  if (p->dead)
    return 0;    /* its I/O went with it */
  if (p->busy) { /* the answer of a probe that did not answer in time */
    int rc = await(p, NULL, NULL, dp_now_ns() + (wait_ns ? wait_ns : 1));
    if (rc == -ETIMEDOUT)
      return (int)p->busy_qd;
    if (rc < 0)
      return 0;
    if (p->m->outstanding == 0)
      return 0;
  }
  p->m->wait_ns = wait_ns;
  int rc, x = call(p, OP_REAP, NULL, NULL,
                   dp_now_ns() + wait_ns + DP_PROBER_GRACE_NS, &rc);
  if (x == -ETIMEDOUT || x == -EBUSY)
    return (int)p->busy_qd;
  return x == -EPIPE ? 0 : rc;
}

int dp_prober_release_buffers(dp_prober_t *p) {
  if (p->sock < 0)
    return p->engine ? dp_engine_release_buffers(p->engine) : 0;
  int rc;
  call(p, OP_RELEASE, NULL, NULL, 0, &rc);
  return rc;
}

unsigned dp_prober_outstanding(const dp_prober_t *p) {
  if (p == NULL)
    return 0;
  if (p->sock < 0)
    return p->engine ? dp_engine_outstanding(p->engine) : 0;
  if (p->dead)
    return 0;
  return p->busy ? (p->busy_qd ? p->busy_qd : 1) : p->m->outstanding;
}

int dp_prober_verify(dp_prober_t *p, dp_target_t *t, uint64_t timeout_ns) {
  if (p->sock < 0)
    return dp_target_verify(t);
  int rc, x = call(p, OP_VERIFY, NULL, NULL,
                   dp_now_ns() + (timeout_ns ? timeout_ns : DP_PROBER_GRACE_NS),
                   &rc);
  if (x < 0) {
    if (x == -ETIMEDOUT)
      p->busy_qd = 1;
    return x;
  }
  snprintf(t->err, sizeof(t->err), "%s", p->m->t.err);
  t->no_extent_map = p->m->t.no_extent_map;
  return rc;
}

void dp_prober_close(dp_prober_t *p, dp_target_t *t) {
  if (p == NULL)
    return;
  if (p->sock < 0 && p->pid == 0) {
    dp_engine_close(p->engine);
    if (t != NULL)
      dp_target_close(t);
    free(p);
    return;
  }
  if (p->m != NULL)
    atomic_store(&p->m->stop, 1);
  if (p->sock >= 0)
    close(p->sock); /* the prober's next read ends it */
  if (p->pid > 0) {
    if (p->busy) /* mid-probe or stuck in the kernel: now, not after it */
      kill(p->pid, SIGKILL);
    dp_reaper_leave(p->pid); /* reaped now, or once the kernel lets it go */
  }
  if (p->m != NULL)
    munmap(p->m, sizeof(shm_t));
  if (t != NULL)
    t->fd = -1;
  free(p);
}

/* ---- the prober's side ------------------------------------------------------
 */

static int serve_one(shm_t *m, char op, dp_engine_t **e) {
  switch (op) {
  case OP_OPEN: {
    dp_layout_conf_t lc = {.stop = &m->stop,
                           .rate_bytes_per_s = m->layout_rate_bytes};
    if (m->t.fd >= 0 || *e != NULL)
      return -EBUSY; /* one target per prober */
    return m->is_device
               ? dp_target_open_block(m->path, &m->t)
               : dp_target_open_file_layout(m->path, m->file_size_bytes,
                                            m->writable, &lc, &m->t);
  }
  case OP_ENGINE:
    if (*e != NULL || m->t.fd < 0)
      return -EINVAL;
    return dp_engine_open(e, m->t.fd, m->t.align, m->max_qd, m->max_bs);
  case OP_RUN: {
    memset(&m->res, 0, sizeof(m->res));
    if (*e == NULL)
      return -EINVAL;
    dp_job_t job = m->job;
    job.stop = &m->stop;
    job.counter = &m->counter;
    int rc = dp_engine_run(*e, &job, &m->res);
    if (m->res.hist != NULL)
      m->hist = *m->res.hist;
    else
      dp_hist_reset(&m->hist);
    m->res.hist = NULL;
    return rc;
  }
  case OP_REAP:
    return *e ? dp_engine_reap(*e, m->wait_ns) : 0;
  case OP_RELEASE:
    return *e ? dp_engine_release_buffers(*e) : 0;
  case OP_VERIFY:
    return dp_target_verify(&m->t);
  default:
    return -EINVAL;
  }
}

int dp_prober_serve(int shm_fd, int sock) {
  struct stat st;
  if (fstat(shm_fd, &st) < 0 || st.st_size < (off_t)sizeof(shm_t) ||
      fstat(sock, &st) < 0 || !S_ISSOCK(st.st_mode))
    return 2;
  shm_t *m =
      mmap(NULL, sizeof(shm_t), PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd, 0);
  if (m == MAP_FAILED)
    return 2;
  close(shm_fd);
  signal(SIGPIPE, SIG_IGN);
  dp_engine_t *e = NULL;
  m->t.fd = -1;
  for (;;) {
    char op;
    ssize_t n = read(sock, &op, 1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n != 1)
      break; /* the daemon closed us, or is gone */
    if (op == OP_HELLO) {
      if (m->protocol != PROTOCOL || m->size != sizeof(shm_t))
        op = ANSWER_FOREIGN;
    } else {
      m->rc = serve_one(m, op, &e);
      m->outstanding = e ? dp_engine_outstanding(e) : 0;
    }
    if (write(sock, &op, 1) != 1)
      break;
  }
  /* I/O still in the kernel: exit, and let the kernel wait for it here,
   * not in the daemon */
  if (e != NULL && dp_engine_outstanding(e) == 0)
    dp_engine_close(e);
  return 0;
}
