/* prober.c - a target's disk I/O in the caller's thread or in a prober
 * process; see prober.h for the contract. */
#define _GNU_SOURCE /* memfd_create, posix_spawn_file_actions_addclosefrom_np  \
                     */
#include "prober.h"
#include "clock.h"
#include "reaper.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef DP_PROBER_PATH
#define DP_PROBER_PATH "/usr/libexec/diskprobe/diskprobe-prober"
#endif

extern char **environ;

/* Bumped whenever the shared page changes meaning; its size is checked
 * too. */
#define PROTOCOL 3

/* The page the daemon and its prober share. The daemon writes the command's
 * arguments before the command byte and reads the answer after the answer
 * byte; the prober the other way round. stop and counter are read and
 * written at any time, atomically. */
typedef struct {
  uint32_t protocol, size;
  atomic_int stop;
  dp_io_counter_t counter;
  atomic_uint_fast64_t progress; /* a layout's sign of life */
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
  int errfd;   /* its standard error, until the handshake */
  char answer; /* the last answer's byte */
  int killed;  /* and reaped, or left to the reaper */
  int hung;    /* killed for not answering in time */
  char *helper;
  char err[PATH_MAX + 256]; /* dp_prober_error */
};

const char *dp_prober_default_path(void) { return DP_PROBER_PATH; }

long dp_prober_pid(const dp_prober_t *p) { return p ? (long)p->pid : 0; }

const char *dp_prober_error(const dp_prober_t *p) { return p ? p->err : ""; }

int dp_prober_hung(const dp_prober_t *p) { return p ? p->hung : 0; }

static double secs(uint64_t ns) { return (double)ns / 1e9; }

/* Kills the prober and reaps it within wait_ns, else leaves it to the
 * reaper (it is still exiting, or the kernel still holds its I/O). What became
 * of it goes into how (may be NULL): "exit status N", "killed by signal N", or
 * "still held by the kernel". The socket is closed: the prober is gone. */
static void kill_prober(dp_prober_t *p, uint64_t wait_ns, char *how,
                        size_t len) {
  if (how != NULL && len > 0)
    how[0] = '\0';
  if (p->sock >= 0) {
    close(p->sock);
    p->sock = -1;
  }
  p->dead = 1;
  p->busy = 0;
  if (p->pid <= 0 || p->killed)
    return;
  p->killed = 1;
  kill(p->pid, SIGKILL);
  uint64_t until = dp_now_ns() + wait_ns;
  int st = 0;
  pid_t r;
  while ((r = waitpid(p->pid, &st, WNOHANG)) == 0 && dp_now_ns() < until)
    usleep(1000);
  if (r == 0)
    dp_reaper_leave(p->pid); /* in the kernel's hands: reaped later */
  if (how != NULL && len > 0) {
    if (r == 0)
      snprintf(how, len, "still held by the kernel");
    else if (r > 0 && WIFEXITED(st))
      snprintf(how, len, "exit status %d", WEXITSTATUS(st));
    else if (r > 0 && WIFSIGNALED(st))
      snprintf(how, len, "killed by signal %d", WTERMSIG(st));
  }
}

/* The first line of what the prober wrote to its standard error (at most
 * DP_PROBER_LAST_WORDS bytes read, 160 kept, printable ASCII only) as
 * ': it said "..."', or "". */
static void last_words(dp_prober_t *p, char *out, size_t len) {
  out[0] = '\0';
  if (p->errfd < 0)
    return;
  char buf[DP_PROBER_LAST_WORDS + 1];
  ssize_t n = read(p->errfd, buf, DP_PROBER_LAST_WORDS);
  if (n <= 0)
    return;
  char line[161];
  size_t k = 0;
  for (ssize_t i = 0; i < n && k < sizeof(line) - 1; i++) {
    unsigned char ch = (unsigned char)buf[i];
    if (ch == '\n') {
      if (k > 0)
        break;
      continue;
    }
    line[k++] = ch >= 0x20 && ch < 0x7f && ch != '"' ? (char)ch : '?';
  }
  line[k] = '\0';
  if (k > 0)
    snprintf(out, len, ": it said \"%s\"", line);
}

/* ---- the daemon's side ------------------------------------------------------
 */

static int await(dp_prober_t *p, const atomic_int *stop, dp_io_counter_t *c,
                 uint64_t deadline_ns, uint64_t idle_ns);

int dp_prober_start(dp_prober_t **out, const char *helper,
                    const atomic_int *stop, char *err, size_t len) {
  *out = NULL;
  dp_prober_t *p = calloc(1, sizeof(*p));
  if (p == NULL)
    return -ENOMEM;
  p->sock = -1;
  p->errfd = -1;
  dp_reaper_poll();
  if (helper == NULL) {
    *out = p;
    return 0;
  }
  if ((p->helper = strdup(helper)) == NULL) {
    free(p);
    return -ENOMEM;
  }
  int rc = 0, sv[2] = {-1, -1}, ep[2] = {-1, -1}, mfd = -1, hm = -1, hs = -1,
      he = -1;
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 ||
      pipe2(ep, O_CLOEXEC) < 0 ||
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
                  (hs = fcntl(sv[1], F_DUPFD_CLOEXEC, 10)) < 0 ||
                  (he = fcntl(ep[1], F_DUPFD_CLOEXEC, 10)) < 0 ||
                  fcntl(ep[0], F_SETFL, O_NONBLOCK) < 0))
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
    /* its output is not the daemon's: nothing it writes can fill
     * collectd's log; its standard error is read only if it fails */
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, he, 2);
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
  if (he >= 0)
    close(he);
  if (mfd >= 0)
    close(mfd);
  if (sv[1] >= 0)
    close(sv[1]);
  if (ep[1] >= 0)
    close(ep[1]);
  p->errfd = ep[0];
  p->sock = sv[0];
  if (rc == 0) {
    char a = OP_HELLO;
    if (send(p->sock, &a, 1, MSG_NOSIGNAL) != 1) {
      rc = -EPIPE;
    } else {
      p->busy = 1;
      rc = await(p, stop, NULL, dp_now_ns() + DP_PROBER_HELLO_NS, 0);
      if (rc == -ETIMEDOUT && stop != NULL && atomic_load(stop))
        rc = -ECANCELED;
      else if (rc == 0 && p->answer != OP_HELLO)
        rc = -EPROTO;
    }
    if (rc < 0) {
      char how[64], said[192];
      kill_prober(p, DP_PROBER_REAP_NS, how, sizeof(how));
      last_words(p, said, sizeof(said));
      if (rc == -EPROTO)
        snprintf(err, len,
                 "the prober %s is from another build of diskprobe: restart "
                 "collectd",
                 helper);
      else if (rc == -ETIMEDOUT)
        snprintf(err, len,
                 "the prober %s did not answer the handshake within %.0f s "
                 "(not a diskprobe prober, or a broken one): killed it%s",
                 helper, secs(DP_PROBER_HELLO_NS), said);
      else if (rc == -ECANCELED)
        snprintf(err, len, "the prober %s: stopped during the handshake",
                 helper);
      else
        snprintf(err, len, "the prober %s ended at once (%s)%s", helper,
                 how[0] ? how : "before answering the handshake", said);
    }
  }
  if (p->errfd >= 0) { /* from now on what it writes goes nowhere */
    close(p->errfd);
    p->errfd = -1;
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
 * Waits for the answer to the command in flight: 0 answered (its byte in
 * p->answer); -ETIMEDOUT when deadline_ns (0: none) passed, or idle_ns (0:
 * no such bound) passed without a sign of life (the live counter, a
 * layout's progress), or DP_PROBER_GRACE_NS after *stop was seen (the
 * prober is told to stop too); -EPIPE when the prober is gone. p->busy
 * stays set until the answer is read.
 */
static int await(dp_prober_t *p, const atomic_int *stop, dp_io_counter_t *c,
                 uint64_t deadline_ns, uint64_t idle_ns) {
  uint64_t stop_by = 0, moved = dp_now_ns();
  uint64_t life =
      atomic_load(&p->m->progress) + atomic_load(&p->m->counter.ios);
  for (;;) {
    struct pollfd pf = {.fd = p->sock, .events = POLLIN};
    int n = poll(&pf, 1, 50);
    pass_counter(p, c);
    if (n > 0) {
      char a;
      ssize_t r = read(p->sock, &a, 1);
      if (r == 1) {
        p->busy = 0;
        p->answer = a;
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
    uint64_t l = atomic_load(&p->m->progress) + atomic_load(&p->m->counter.ios);
    if (l != life) {
      life = l;
      moved = now;
    }
    if (stop != NULL && stop_by == 0 && atomic_load(stop)) {
      atomic_store(&p->m->stop, 1);
      stop_by = now + DP_PROBER_GRACE_NS;
    }
    if ((deadline_ns && now >= deadline_ns) || (stop_by && now >= stop_by) ||
        (idle_ns && now - moved >= idle_ns))
      return -ETIMEDOUT;
  }
}

/* Sends command op; -EBUSY while an earlier answer is due, -EPIPE when
 * the prober is gone. */
static int send_op(dp_prober_t *p, char op) {
  if (p->dead)
    return -EPIPE;
  if (p->busy && await(p, NULL, NULL, dp_now_ns() + 1, 0) == -ETIMEDOUT)
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

static const char *op_name(char op) {
  switch (op) {
  case OP_OPEN:
    return "the open";
  case OP_ENGINE:
    return "the AIO set-up";
  case OP_RUN:
    return "a probe";
  case OP_REAP:
    return "a reap";
  case OP_RELEASE:
    return "giving back its buffers";
  case OP_VERIFY:
    return "the check of the probe file";
  default:
    return "a command";
  }
}

/* A command and its answer: 0 with the prober's return value in *rc, or
 * the exchange's failure: -EBUSY (an earlier answer is due), -EPIPE (the
 * prober is gone), -ETIMEDOUT (no answer in time; it is due later),
 * -EBADMSG (an answer to another command: the prober is killed). */
static int call(dp_prober_t *p, char op, const atomic_int *stop,
                dp_io_counter_t *c, uint64_t deadline_ns, uint64_t idle_ns,
                int *rc) {
  if (stop != NULL)
    atomic_store(&p->m->stop, atomic_load(stop));
  int x = send_op(p, op);
  if (x == 0)
    x = await(p, stop, c, deadline_ns, idle_ns);
  if (x == 0 && p->answer != op) {
    snprintf(p->err, sizeof(p->err),
             "the prober %s (pid %ld) answered %s with another command's "
             "answer: killed it",
             p->helper, (long)p->pid, op_name(op));
    kill_prober(p, DP_PROBER_REAP_NS, NULL, 0);
    x = -EBADMSG;
  }
  if (x == -EPIPE && p->err[0] == '\0') {
    char how[64];
    long pid = (long)p->pid;
    /* reaped now, not left a zombie */
    kill_prober(p, DP_PROBER_REAP_NS, how, sizeof(how));
    snprintf(p->err, sizeof(p->err),
             "the prober %s (pid %ld) ended during %s (%s; killed?)", p->helper,
             pid, op_name(op), how[0] ? how : "gone");
  }
  *rc = x == 0 ? p->m->rc : x;
  return x;
}

/* A command that must be answered in time or the prober is killed: it
 * does no I/O a disk could hold, or it stopped showing progress. */
static int call_or_kill(dp_prober_t *p, char op, const atomic_int *stop,
                        uint64_t deadline_ns, uint64_t idle_ns, int *rc) {
  uint64_t t0 = dp_now_ns();
  int x = call(p, op, stop, NULL, deadline_ns, idle_ns, rc);
  if (x == -ETIMEDOUT) {
    int stopped = stop != NULL && atomic_load(stop);
    long pid = (long)p->pid;
    p->hung = 1;
    kill_prober(p, DP_PROBER_REAP_NS, NULL, 0);
    snprintf(p->err, sizeof(p->err),
             stopped   ? "the prober %s (pid %ld) did not answer %s %.0f s "
                         "after the stop: killed it"
             : idle_ns ? "the prober %s (pid %ld) neither answered %s nor "
                         "made progress for %.0f s (a hung disk, or a broken "
                         "prober): killed it"
                       : "the prober %s (pid %ld) did not answer %s within "
                         "%.0f s: killed it",
             p->helper, pid, op_name(op),
             secs(stopped   ? DP_PROBER_GRACE_NS
                  : idle_ns ? idle_ns
                            : deadline_ns - t0));
    *rc = x;
  }
  return x;
}

static void gone(dp_prober_t *p, dp_target_t *t, int rc) {
  if (p->err[0]) /* the program's path may not all fit */
    snprintf(t->err, sizeof(t->err), "%.*s", (int)sizeof(t->err) - 1, p->err);
  else
    snprintf(t->err, sizeof(t->err), "%s",
             rc == -EPIPE ? "the prober process ended (killed?)"
                          : "the prober process did not answer");
}

int dp_prober_open_target(dp_prober_t *p, const dp_prober_target_t *o,
                          dp_target_t *t) {
  if (p->helper == NULL) {
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
  if (p->dead) {
    gone(p, t, -EPIPE);
    return -EPIPE;
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
  /* A layout may take long, but shows progress at every chunk and every
   * pacing sleep: a prober silent for Timeout and a grace is not laying
   * out (a hung disk holds it, or it is no prober). */
  uint64_t idle = (o->timeout_ns ? o->timeout_ns : 30 * UINT64_C(1000000000)) +
                  DP_PROBER_GRACE_NS;
  int rc, x = call_or_kill(p, OP_OPEN, o->stop, 0, idle, &rc);
  if (x < 0) {
    gone(p, t, x);
    return x == -ETIMEDOUT && o->stop && atomic_load(o->stop) ? -ECANCELED : x;
  }
  *t = m->t;
  t->err[sizeof(t->err) - 1] = '\0';
  t->path[sizeof(t->path) - 1] = '\0';
  t->dev_members[sizeof(t->dev_members) - 1] = '\0';
  t->fd = -1; /* the prober's */
  return rc;
}

int dp_prober_open_engine(dp_prober_t *p, uint32_t max_qd,
                          uint32_t max_block_size) {
  if (p->helper == NULL)
    return dp_engine_open(&p->engine, p->target->fd, p->target->align, max_qd,
                          max_block_size);
  p->m->max_qd = max_qd;
  p->m->max_bs = max_block_size;
  int rc;
  call_or_kill(p, OP_ENGINE, NULL, dp_now_ns() + DP_PROBER_ANSWER_NS, 0, &rc);
  return rc;
}

static int finite_nonneg(double v) { return isfinite(v) && v >= 0; }

/*
 * Whether a prober's result can be true for the job sent, took_ns after it
 * was sent: 0, or -EBADMSG with the reason in why. Proportionate: what no
 * device and no engine can produce, not what merely looks unlikely.
 */
static int check_result(const dp_job_t *job, const dp_result_t *r,
                        const dp_hist_t *h, uint64_t took_ns, char *why,
                        size_t len) {
  double took = (double)took_ns / 1e9 + 0.5; /* both clocks' slack */
  /* each queue slot completes at most one I/O per DP_PROBER_MIN_IO_NS */
  uint64_t most =
      (uint64_t)job->queue_depth * (took_ns / DP_PROBER_MIN_IO_NS + 1);
  uint64_t errs = r->err_io + r->err_nospace + r->err_short;
  const struct {
    const char *name;
    double v;
  } d[] = {{"elapsed", r->elapsed_s},
           {"IOPS", r->iops},
           {"bytes/s", r->bytes_per_s},
           {"latency min", r->lat_min_s},
           {"latency mean", r->lat_mean_s},
           {"latency p50", r->lat_p50_s},
           {"latency p90", r->lat_p90_s},
           {"latency p99", r->lat_p99_s},
           {"latency p99.9", r->lat_p999_s},
           {"latency max", r->lat_max_s},
           {"achieved queue depth", r->achieved_qd},
           {"CPU user", r->cpu_user_s},
           {"CPU system", r->cpu_sys_s},
           {"wall time", r->wall_s}};
  if (r->pattern != job->pattern || r->block_size != job->block_size ||
      r->queue_depth != job->queue_depth) {
    snprintf(why, len, "a result for another job (BlockSize %u, QueueDepth %u)",
             r->block_size, r->queue_depth);
    return -EBADMSG;
  }
  for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
    if (!finite_nonneg(d[i].v) &&
        !(r->ops == 0 && strncmp(d[i].name, "latency", 7) == 0 &&
          !isnan(d[i].v) && d[i].v >= 0)) {
      snprintf(why, len, "%s %g", d[i].name, d[i].v);
      return -EBADMSG;
    }
  if (r->wall_s > took || r->elapsed_s > took) {
    snprintf(why, len, "a probe of %.3g s measured in %.3g s", r->wall_s,
             took - 0.5);
    return -EBADMSG;
  }
  if (r->ops > most || errs > most || r->err_timeout > most) {
    snprintf(why, len,
             "%llu I/Os (%llu failed) in %.3g s at QueueDepth %u: more than "
             "one every %u ns in each slot",
             (unsigned long long)r->ops, (unsigned long long)errs, took - 0.5,
             job->queue_depth, (unsigned)DP_PROBER_MIN_IO_NS);
    return -EBADMSG;
  }
  if (job->max_ops > 0 && r->ops > job->max_ops + job->queue_depth) {
    snprintf(why, len, "%llu I/Os counted for a job of %llu",
             (unsigned long long)r->ops, (unsigned long long)job->max_ops);
    return -EBADMSG;
  }
  if (r->bytes != r->ops * job->block_size || h->count != r->ops ||
      r->window_ops > r->ops || (r->stepped != 0 && r->stepped != 1) ||
      (r->throttled != 0 && r->throttled != 1) ||
      !finite_nonneg(r->burst_ops) ||
      (r->elapsed_s > 0 &&
       fabs(r->iops * r->elapsed_s - (double)r->window_ops) >
           1 + 1e-6 * (double)r->window_ops)) {
    snprintf(why, len,
             "%llu I/Os (%llu in the window), %llu bytes, %.6g IOPS over "
             "%.6g s and %llu in its histogram do not agree",
             (unsigned long long)r->ops, (unsigned long long)r->window_ops,
             (unsigned long long)r->bytes, r->iops, r->elapsed_s,
             (unsigned long long)h->count);
    return -EBADMSG;
  }
  if (r->ops > 0 && (r->lat_max_s > took || (double)h->max_ns / 1e9 > took ||
                     r->lat_min_s > r->lat_max_s)) {
    snprintf(why, len, "latencies %.3g..%.3g s in an exchange of %.3g s",
             r->lat_min_s, r->lat_max_s, took - 0.5);
    return -EBADMSG;
  }
  if ((r->stalled != 0 && r->stalled != 1) || r->first_error > 0) {
    snprintf(why, len, "stalled %d, first error %d", r->stalled,
             r->first_error);
    return -EBADMSG;
  }
  return 0;
}

int dp_prober_run(dp_prober_t *p, const dp_job_t *job, dp_result_t *res) {
  if (p->helper == NULL)
    return p->engine ? dp_engine_run(p->engine, job, res) : -EINVAL;
  shm_t *m = p->m;
  if (!p->dead)
    m->job = *job;
  m->job.stop = NULL;
  m->job.counter = NULL;
  uint64_t deadline = 0, idle = 0;
  uint64_t timeout =
      job->timeout_ns ? job->timeout_ns : 30 * UINT64_C(1000000000);
  uint64_t t0 = dp_now_ns();
  if (job->duration_ns > 0) /* the engine's own Timeout, and a grace */
    deadline = t0 + job->duration_ns + timeout + DP_PROBER_GRACE_NS;
  else /* no end known: completions at least every Timeout */
    idle = timeout + DP_PROBER_GRACE_NS;
  int rc, x = call(p, OP_RUN, job->stop, job->counter, deadline, idle, &rc);
  uint64_t took = dp_now_ns() - t0;
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
  char why[256];
  if (x == 0 &&
      check_result(job, &m->res, &m->hist, took, why, sizeof(why)) < 0) {
    snprintf(p->err, sizeof(p->err),
             "the prober %s (pid %ld) sent a result that cannot be true for "
             "the probe it was given (%s): refused",
             p->helper, (long)p->pid, why);
    x = rc = -EBADMSG;
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
  if (p->helper == NULL)
    return p->engine ? dp_engine_reap(p->engine, wait_ns) : 0;
  if (p->dead)
    return 0;    /* its I/O went with it */
  if (p->busy) { /* the answer of a probe that did not answer in time */
    int rc = await(p, NULL, NULL, dp_now_ns() + (wait_ns ? wait_ns : 1), 0);
    if (rc == -ETIMEDOUT)
      return (int)p->busy_qd;
    if (rc < 0)
      return 0;
    if (p->m->outstanding == 0)
      return 0;
  }
  p->m->wait_ns = wait_ns;
  int rc, x = call(p, OP_REAP, NULL, NULL,
                   dp_now_ns() + wait_ns + DP_PROBER_GRACE_NS, 0, &rc);
  if (x == -ETIMEDOUT || x == -EBUSY)
    return (int)p->busy_qd;
  return x == -EPIPE || x == -EBADMSG ? 0 : rc;
}

int dp_prober_release_buffers(dp_prober_t *p) {
  if (p->helper == NULL)
    return p->engine ? dp_engine_release_buffers(p->engine) : 0;
  int rc;
  call_or_kill(p, OP_RELEASE, NULL, dp_now_ns() + DP_PROBER_ANSWER_NS, 0, &rc);
  return rc;
}

unsigned dp_prober_outstanding(const dp_prober_t *p) {
  if (p == NULL)
    return 0;
  if (p->helper == NULL)
    return p->engine ? dp_engine_outstanding(p->engine) : 0;
  if (p->dead)
    return 0;
  return p->busy ? (p->busy_qd ? p->busy_qd : 1) : p->m->outstanding;
}

int dp_prober_verify(dp_prober_t *p, dp_target_t *t, uint64_t timeout_ns) {
  if (p->helper == NULL)
    return dp_target_verify(t);
  int rc, x = call(p, OP_VERIFY, NULL, NULL,
                   dp_now_ns() + (timeout_ns ? timeout_ns : DP_PROBER_GRACE_NS),
                   0, &rc);
  if (x < 0) {
    if (x == -ETIMEDOUT)
      p->busy_qd = 1;
    return x;
  }
  snprintf(t->err, sizeof(t->err), "%.*s", (int)sizeof(t->err) - 1,
           p->m->t.err);
  t->no_extent_map = p->m->t.no_extent_map;
  return rc;
}

void dp_prober_close(dp_prober_t *p, dp_target_t *t) {
  dp_prober_close_by(p, t, 0);
}

void dp_prober_close_by(dp_prober_t *p, dp_target_t *t, uint64_t deadline_ns) {
  if (p == NULL)
    return;
  if (p->helper == NULL) {
    dp_engine_close(p->engine);
    if (t != NULL)
      dp_target_close(t);
    free(p);
    return;
  }
  if (p->m != NULL)
    atomic_store(&p->m->stop, 1);
  /* Killed, whatever it does: one that ignores its closed socket (or
   * never read it) must not outlive us. Mid-probe or stuck in the kernel,
   * it goes once the kernel lets its I/O go (the reaper's). Not waited
   * for unless the caller gives a deadline (a stop): its exit may have
   * work to do (the last file of a filesystem unmounted lazily), and the
   * reaper takes it at the next start. */
  uint64_t now = dp_now_ns();
  kill_prober(p, deadline_ns > now ? deadline_ns - now : 0, NULL, 0);
  if (p->errfd >= 0)
    close(p->errfd);
  if (p->m != NULL)
    munmap(p->m, sizeof(shm_t));
  if (t != NULL)
    t->fd = -1;
  free(p->helper);
  free(p);
}

/* ---- the prober's side ------------------------------------------------------
 */

static int serve_one(shm_t *m, char op, dp_engine_t **e) {
  switch (op) {
  case OP_OPEN: {
    dp_layout_conf_t lc = {.stop = &m->stop,
                           .rate_bytes_per_s = m->layout_rate_bytes,
                           .progress = &m->progress};
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
  return dp_prober_serve_with(shm_fd, sock, NULL, NULL);
}

int dp_prober_serve_with(int shm_fd, int sock,
                         void (*after)(char op, dp_result_t *res, void *arg),
                         void *arg) {
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
      if (after != NULL)
        after(op, &m->res, arg);
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
