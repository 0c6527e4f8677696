/* statefile.c - the state file's safe I/O and its saver thread; see
 * statefile.h. */
#define _GNU_SOURCE
#include "statefile.h"
#include "clock.h"
#include "reaper.h"
#include "safepath.h"
#include "vocab.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WHAT "the state file"

/* The directory's verified O_PATH fd, or -errno + err. */
static int open_dir(const char *dir, char *err, size_t errlen) {
  char real[PATH_MAX];
  return dp_safepath_open_dir_for(dir, 0, WHAT, real, sizeof(real), err,
                                  errlen);
}

int dp_statefile_check_dir(const char *dir, char *err, size_t errlen) {
  int dfd = open_dir(dir, err, errlen);
  if (dfd < 0)
    return dfd;
  close(dfd);
  return 0;
}

/* ---- reading --------------------------------------------------------------
 */

/* What fstat says of the opened file: ours, regular, writable only by us,
 * small enough. */
static int check_file(const struct stat *st, const char *dir, const char *name,
                      size_t max_bytes, char *err, size_t errlen) {
  if (!S_ISREG(st->st_mode))
    return dp_errf(err, errlen, -EINVAL,
                   "%s/%s is %s, not a regular file: not reading it", dir, name,
                   dp_file_kind(st->st_mode));
  if (st->st_uid != geteuid())
    return dp_errf(err, errlen, -EPERM,
                   "%s/%s is owned by uid %u, not by us: not trusting it", dir,
                   name, (unsigned)st->st_uid);
  if (st->st_mode & (S_IWGRP | S_IWOTH))
    return dp_errf(err, errlen, -EPERM,
                   "%s/%s is writable by its group or others (mode %04o): "
                   "not trusting it",
                   dir, name, (unsigned)(st->st_mode & 07777));
  if ((uint64_t)st->st_size > max_bytes)
    return dp_errf(err, errlen, -EFBIG,
                   "%s/%s has %llu bytes, more than the %zu a state file "
                   "may have",
                   dir, name, (unsigned long long)st->st_size, max_bytes);
  return 0;
}

/* All of fd (at most max_bytes; more: -EFBIG) into a NUL-terminated
 * buffer. */
static int read_all(int fd, size_t max_bytes, char **text, size_t *len) {
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap + 1);
  for (;;) {
    if (buf == NULL)
      return -ENOMEM;
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      int e = errno;
      free(buf);
      return -e;
    }
    if (r == 0)
      break;
    n += (size_t)r;
    if (n > max_bytes) {
      free(buf);
      return -EFBIG;
    }
    if (n == cap) {
      cap *= 2;
      char *nb = realloc(buf, cap + 1);
      if (nb == NULL)
        free(buf);
      buf = nb;
    }
  }
  buf[n] = '\0';
  *text = buf;
  *len = n;
  return 0;
}

int dp_statefile_read(const char *dir, const char *name, size_t max_bytes,
                      char **text, size_t *len, char *err, size_t errlen) {
  *text = NULL;
  *len = 0;
  int dfd = open_dir(dir, err, errlen);
  if (dfd < 0)
    return dfd;
  int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  int e = errno;
  close(dfd);
  if (fd < 0)
    return dp_errf(err, errlen, -e, "cannot open %s/%s: %s", dir, name,
                   e == ELOOP ? "it is a symlink" : strerror(e));
  struct stat st;
  int rc = fstat(fd, &st) < 0 ? -errno : 0;
  if (rc < 0)
    dp_errf(err, errlen, rc, "cannot stat %s/%s: %s", dir, name, strerror(-rc));
  else
    rc = check_file(&st, dir, name, max_bytes, err, errlen);
  if (rc == 0 && (rc = read_all(fd, max_bytes, text, len)) < 0)
    dp_errf(err, errlen, rc, "cannot read %s/%s: %s", dir, name,
            rc == -EFBIG ? "it grew past the size a state file may have"
                         : strerror(-rc));
  close(fd);
  return rc;
}

/* ---- writing --------------------------------------------------------------
 */

static int write_all(int fd, const char *p, size_t len) {
  while (len > 0) {
    ssize_t w = write(fd, p, len);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      return -errno;
    p += w;
    len -= (size_t)w;
  }
  return 0;
}

/* A new temporary file in dfd, created exclusively: its fd, its name in
 * tmp. */
static int create_temp(int dfd, const char *name, char *tmp, size_t tmplen) {
  for (int tries = 0; tries < 16; tries++) {
    uint64_t r;
    if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
      r = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)clock();
    if (snprintf(tmp, tmplen, "%s.tmp.%ld.%016llx", name, (long)getpid(),
                 (unsigned long long)r) >= (int)tmplen)
      return -ENAMETOOLONG;
    int fd = openat(dfd, tmp,
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0 || errno != EEXIST)
      return fd >= 0 ? fd : -errno;
  }
  return -EEXIST;
}

/* The directory's entries on disk: fsync through a readable fd of it. */
static int sync_dir(int dfd) {
  int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  int rc = fsync(fd) == 0 || errno == EINVAL ? 0 : -errno;
  close(fd);
  return rc;
}

int dp_statefile_write(const char *dir, const char *name, const char *text,
                       size_t len, char *err, size_t errlen) {
  int dfd = open_dir(dir, err, errlen);
  if (dfd < 0)
    return dfd;
  char tmp[NAME_MAX + 1];
  int fd = create_temp(dfd, name, tmp, sizeof(tmp));
  if (fd < 0) {
    close(dfd);
    return dp_errf(err, errlen, fd, "cannot create a temporary file in %s: %s",
                   dir, strerror(-fd));
  }
  int rc = write_all(fd, text, len);
  if (rc == 0 && fsync(fd) != 0)
    rc = -errno;
  if (close(fd) != 0 && rc == 0)
    rc = -errno;
  if (rc < 0)
    dp_errf(err, errlen, rc, "cannot write %s/%s: %s", dir, tmp, strerror(-rc));
  else if (renameat(dfd, tmp, dfd, name) != 0)
    rc = dp_errf(err, errlen, -errno, "cannot rename %s/%s to %s: %s", dir, tmp,
                 name, strerror(errno));
  if (rc < 0)
    unlinkat(dfd, tmp, 0);
  else if ((rc = sync_dir(dfd)) < 0)
    dp_errf(err, errlen, rc, "cannot sync directory %s: %s", dir,
            strerror(-rc));
  close(dfd);
  return rc;
}

/* A temporary file of `name` left by a writer that no longer runs. */
static int stale_temp(const char *entry, const char *name) {
  size_t nl = strlen(name);
  if (strncmp(entry, name, nl) != 0 || strncmp(entry + nl, ".tmp", 4) != 0)
    return 0;
  const char *rest = entry + nl + 4;
  if (*rest == '\0')
    return 1; /* the fixed name of earlier versions */
  char *end;
  long pid = *rest == '.' ? strtol(rest + 1, &end, 10) : 0;
  return pid > 0 && *end == '.' && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

int dp_statefile_clean(const char *dir, const char *name, char *err,
                       size_t errlen) {
  int dfd = open_dir(dir, err, errlen);
  if (dfd < 0)
    return dfd;
  int lfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = lfd < 0 ? NULL : fdopendir(lfd);
  if (d == NULL) {
    int e = errno;
    if (lfd >= 0)
      close(lfd);
    close(dfd);
    return dp_errf(err, errlen, -e, "cannot list %s: %s", dir, strerror(e));
  }
  int removed = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    struct stat st;
    if (stale_temp(e->d_name, name) &&
        fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
        unlinkat(dfd, e->d_name, 0) == 0)
      removed++;
  }
  closedir(d);
  close(dfd);
  return removed;
}

/* ---- the saver thread -----------------------------------------------------
 */

struct dp_statefile_saver {
  pthread_mutex_t mu;
  pthread_cond_t cv; /* a save waiting, done, or the end asked */
  pthread_t thread;
  char dir[PATH_MAX];
  char name[NAME_MAX + 1];
  char *pending; /* the next text to write; NULL: none */
  size_t pending_len;
  int busy; /* a write in progress */
  int quit; /* the owner closed: end once nothing waits */
  int refs; /* the owner and the thread */
  int have_result, result;
  char result_err[512];
  unsigned long skipped;
};

#define NO_DEADLINE UINT64_MAX /* the saver's thread may wait for ever */

/* Reads exactly len bytes from fd before the deadline (CLOCK_MONOTONIC;
 * NO_DEADLINE: none): 0, -ETIMEDOUT, -EIO (the writer ended early). */
static int read_before(int fd, void *buf, size_t len, uint64_t deadline_ns) {
  size_t got = 0;
  while (got < len) {
    uint64_t now = dp_now_ns();
    if (now >= deadline_ns)
      return -ETIMEDOUT;
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    int ms = deadline_ns == NO_DEADLINE
                 ? -1
                 : (int)((deadline_ns - now + 999999) / 1000000);
    int n = poll(&pf, 1, ms);
    if (n < 0 && errno == EINTR)
      continue;
    if (n == 0)
      return -ETIMEDOUT;
    ssize_t r = read(fd, (char *)buf + got, len - got);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (r <= 0)
      return -EIO;
    got += (size_t)r;
  }
  return 0;
}

typedef struct {
  int rc;
  char err[512];
  size_t len;
} read_header_t;

/* What a child does: check the directory; remove a crash's temporary
 * files (if asked) and read the file; or write it (the saver). */
typedef enum { OP_CHECK, OP_READ, OP_CLEAN_READ, OP_WRITE } child_op_t;

static __attribute__((noreturn)) void
op_child(int out, child_op_t op, const char *dir, const char *name,
         size_t max_bytes, const char *text, size_t len) {
  /* nothing of the daemon's kept open (a probe file's lock, a socket: it
   * may outlive the daemon on a hung disk), a SIGTERM ends it */
  dp_reaper_child_isolate(out);
  read_header_t h = {0};
  char *t = NULL;
  if (op == OP_CHECK) {
    h.rc = dp_statefile_check_dir(dir, h.err, sizeof(h.err));
  } else if (op == OP_WRITE) {
    h.rc = dp_statefile_write(dir, name, text, len, h.err, sizeof(h.err));
  } else {
    if (op == OP_CLEAN_READ) {
      char ignored[256];
      dp_statefile_clean(dir, name, ignored, sizeof(ignored));
    }
    h.rc = dp_statefile_read(dir, name, max_bytes, &t, &h.len, h.err,
                             sizeof(h.err));
  }
  int ok = write_all(out, (const char *)&h, sizeof(h)) == 0 &&
           (h.rc < 0 || h.len == 0 || write_all(out, t, h.len) == 0);
  _exit(ok ? 0 : 1);
}

/* Runs op in a child process (an I/O the kernel does not let anyone
 * interrupt -- a hung disk's fsync, a FUSE request being served -- then
 * holds the child, never the daemon's exit) and waits at most wait_ns
 * (NO_DEADLINE: for ever) for its answer; -ETIMEDOUT leaves the child
 * behind on the hung disk, alone. in/inlen: what OP_WRITE writes; text,
 * len: what OP_READ read. */
static int in_child(child_op_t op, const char *dir, const char *name,
                    size_t max_bytes, const char *in, size_t inlen,
                    uint64_t wait_ns, char **text, size_t *len, char *err,
                    size_t errlen) {
  if (text != NULL) {
    *text = NULL;
    *len = 0;
  }
  dp_reaper_poll(); /* children an earlier hung call left */
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0)
    return dp_errf(err, errlen, -errno, "cannot make a pipe: %s",
                   strerror(errno));
  pid_t pid = fork();
  if (pid == 0)
    op_child(p[1], op, dir, name, max_bytes, in, inlen);
  int e = errno;
  close(p[1]);
  if (pid < 0) {
    close(p[0]);
    return dp_errf(err, errlen, -e, "cannot start a process to reach %s: %s",
                   dir, strerror(e));
  }
  uint64_t deadline =
      wait_ns == NO_DEADLINE ? NO_DEADLINE : dp_now_ns() + wait_ns;
  read_header_t h;
  int rc = read_before(p[0], &h, sizeof(h), deadline);
  char *buf = NULL;
  if (rc == 0 && h.rc == 0 && (op == OP_READ || op == OP_CLEAN_READ)) {
    if (h.len > max_bytes)
      rc = -EIO;
    else if ((buf = malloc(h.len + 1)) == NULL)
      rc = -ENOMEM;
    else if ((rc = read_before(p[0], buf, h.len, deadline)) == 0) {
      buf[h.len] = '\0';
      *text = buf;
      *len = h.len;
      buf = NULL;
    }
  }
  free(buf);
  close(p[0]);
  if (rc == -ETIMEDOUT) {
    dp_reaper_leave(pid); /* reaped once the disk lets it go */
    return dp_errf(err, errlen, rc, "%s did not answer within %.3g s", dir,
                   (double)wait_ns / 1e9);
  }
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
    ;
  if (rc < 0)
    return dp_errf(err, errlen, rc,
                   "the process reaching %s ended without "
                   "a result",
                   dir);
  if (h.rc < 0) {
    h.err[sizeof(h.err) - 1] = '\0';
    snprintf(err, errlen, "%s", h.err);
  }
  return h.rc;
}

int dp_statefile_read_bounded(const char *dir, const char *name,
                              size_t max_bytes, int clean, uint64_t wait_ns,
                              char **text, size_t *len, char *err,
                              size_t errlen) {
  return in_child(clean ? OP_CLEAN_READ : OP_READ, dir, name, max_bytes, NULL,
                  0, wait_ns, text, len, err, errlen);
}

int dp_statefile_check_dir_bounded(const char *dir, uint64_t wait_ns, char *err,
                                   size_t errlen) {
  return in_child(OP_CHECK, dir, "", 0, NULL, 0, wait_ns, NULL, NULL, err,
                  errlen);
}

static void saver_unref(dp_statefile_saver_t *s) {
  pthread_mutex_lock(&s->mu);
  int last = --s->refs == 0;
  pthread_mutex_unlock(&s->mu);
  if (!last)
    return;
  free(s->pending);
  pthread_cond_destroy(&s->cv);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

static void *saver_main(void *arg) {
  dp_statefile_saver_t *s = arg;
  pthread_setname_np(pthread_self(), "dp-statesave");
  pthread_mutex_lock(&s->mu);
  for (;;) {
    while (s->pending == NULL && !s->quit)
      pthread_cond_wait(&s->cv, &s->mu);
    if (s->pending == NULL)
      break;
    char *text = s->pending;
    size_t len = s->pending_len;
    s->pending = NULL;
    s->busy = 1;
    pthread_mutex_unlock(&s->mu);
    char err[sizeof(s->result_err)] = "";
    int rc = in_child(OP_WRITE, s->dir, s->name, 0, text, len, NO_DEADLINE,
                      NULL, NULL, err, sizeof(err));
    free(text);
    pthread_mutex_lock(&s->mu);
    s->busy = 0;
    s->have_result = 1;
    s->result = rc;
    memcpy(s->result_err, err, sizeof(err));
    pthread_cond_broadcast(&s->cv);
  }
  pthread_mutex_unlock(&s->mu);
  saver_unref(s);
  return NULL;
}

int dp_statefile_saver_new(dp_statefile_saver_t **out, const char *dir,
                           const char *name) {
  *out = NULL;
  dp_statefile_saver_t *s = calloc(1, sizeof(*s));
  if (s == NULL)
    return -ENOMEM;
  if (snprintf(s->dir, sizeof(s->dir), "%s", dir) >= (int)sizeof(s->dir) ||
      snprintf(s->name, sizeof(s->name), "%s", name) >= (int)sizeof(s->name)) {
    free(s);
    return -ENAMETOOLONG;
  }
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, &ca);
  pthread_condattr_destroy(&ca);
  s->refs = 2;
  /* as the scheduler's workers: the host's handlers run on its own
   * threads, so the saver starts with the asynchronous signals blocked */
  sigset_t async, old;
  sigfillset(&async);
  for (int sig = 1; sig < 32; sig++)
    if (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL ||
        sig == SIGTRAP || sig == SIGSYS)
      sigdelset(&async, sig);
  pthread_sigmask(SIG_BLOCK, &async, &old);
  int rc = pthread_create(&s->thread, NULL, saver_main, s);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) {
    s->refs = 1;
    saver_unref(s);
    return -rc;
  }
  *out = s;
  return 0;
}

int dp_statefile_saver_submit(dp_statefile_saver_t *s, char *text, size_t len,
                              int replace) {
  pthread_mutex_lock(&s->mu);
  int rc = 0;
  if (!replace && (s->busy || s->pending != NULL)) {
    s->skipped++;
    free(text);
    rc = -EBUSY;
  } else {
    free(s->pending);
    s->pending = text;
    s->pending_len = len;
    pthread_cond_broadcast(&s->cv);
  }
  pthread_mutex_unlock(&s->mu);
  return rc;
}

/* Under s->mu: the unfetched result into rc/err. */
static int take_result(dp_statefile_saver_t *s, int *rc, char *err,
                       size_t errlen) {
  if (!s->have_result)
    return 0;
  s->have_result = 0;
  if (rc != NULL)
    *rc = s->result;
  if (err != NULL && errlen > 0)
    snprintf(err, errlen, "%s", s->result_err);
  return 1;
}

int dp_statefile_saver_result(dp_statefile_saver_t *s, int *rc, char *err,
                              size_t errlen) {
  pthread_mutex_lock(&s->mu);
  int got = take_result(s, rc, err, errlen);
  pthread_mutex_unlock(&s->mu);
  return got;
}

unsigned long dp_statefile_saver_skipped(dp_statefile_saver_t *s) {
  pthread_mutex_lock(&s->mu);
  unsigned long n = s->skipped;
  pthread_mutex_unlock(&s->mu);
  return n;
}

int dp_statefile_saver_close(dp_statefile_saver_t *s, uint64_t wait_ns, int *rc,
                             char *err, size_t errlen) {
  struct timespec dl;
  clock_gettime(CLOCK_MONOTONIC, &dl);
  uint64_t ns = (uint64_t)dl.tv_nsec + wait_ns;
  dl.tv_sec += (time_t)(ns / 1000000000u);
  dl.tv_nsec = (long)(ns % 1000000000u);
  pthread_mutex_lock(&s->mu);
  s->quit = 1;
  pthread_cond_broadcast(&s->cv);
  int timed_out = 0;
  while ((s->busy || s->pending != NULL) && !timed_out)
    timed_out = pthread_cond_timedwait(&s->cv, &s->mu, &dl) == ETIMEDOUT;
  timed_out = s->busy || s->pending != NULL;
  if (!timed_out)
    take_result(s, rc, err, errlen);
  pthread_mutex_unlock(&s->mu);
  if (timed_out) {
    pthread_detach(s->thread);
    saver_unref(s);
    return -ETIMEDOUT;
  }
  pthread_join(s->thread, NULL);
  saver_unref(s);
  return 0;
}
