/*
 * fuzz_conf.c - libFuzzer target for the configuration model
 * (src/conf.h, and through it the option table of src/options.c).
 *
 * The input is read line by line, collectd-style:
 *   <Target NAME>      starts a target (dp_target_conf_init)
 *   <Probe NAME>       starts a probe in it (dp_probe_conf_init)
 *   </Probe>           dp_target_conf_add_probe
 *   </Target>          dp_target_conf_finish
 *   Key Value          (or Key=Value; quotes around Value are dropped)
 *                      set in the innermost open block: probe, target,
 *                      or the plugin (dp_*_conf_set)
 * Lines of more than 300 bytes are cut. Checked: only the documented
 * return codes; every refusal writes a NUL-terminated, non-empty message
 * (also into a 24-byte buffer: truncated, never overrun); a finished target
 * satisfies what the scheduler relies on (a valid name, 1 to DP_PROBES_MAX
 * probes with a block size and a queue depth of at least 1, each within the
 * buffer bound, probes shorter than the interval together).
 */
#include "conf.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#define CHECK(c)                                                               \
  do {                                                                         \
    if (!(c))                                                                  \
      __builtin_trap();                                                        \
  } while (0)

static size_t errlen;
static char err[256];

static void start_err(void) {
  memset(err, 'x', sizeof(err));
  err[0] = '\0';
}

static void check_rc(int rc) {
  CHECK(rc <= 0);
  if (rc < 0) {
    CHECK(memchr(err, '\0', errlen) != NULL);
    CHECK(err[0] != '\0');
    CHECK(errlen == sizeof(err) || err[errlen] == 'x'); /* no overrun */
  }
}

static void check_target(const dp_target_conf_t *t) {
  CHECK(dp_conf_name_ok(t->name));
  CHECK(t->has_path);
  CHECK(t->nprobes >= 1 && t->nprobes <= DP_PROBES_MAX);
  CHECK(memchr(t->path, '\0', sizeof(t->path)) != NULL);
  uint64_t total = 0;
  for (size_t i = 0; i < t->nprobes; i++) {
    const dp_probe_conf_t *p = &t->probes[i];
    CHECK(dp_conf_name_ok(p->name));
    CHECK(p->block_size >= 1 && p->queue_depth >= 1);
#ifdef DP_PROBE_BUFFER_MAX_BYTES
    CHECK((uint64_t)p->block_size * p->queue_depth <=
          DP_PROBE_BUFFER_MAX_BYTES);
#endif
    if (!t->is_device)
      CHECK(p->block_size <= t->file_size_bytes / 2);
    for (size_t j = 0; j < i; j++)
      CHECK(strcmp(t->probes[j].name, p->name) != 0);
    total += p->duration_ns;
  }
  CHECK(total < t->interval_ns);
}

/* "Key Value" / "Key=Value" / Key "Value" into key and val. */
static void split(char *line, char **key, char **val) {
  char *p = line;
  while (*p == ' ' || *p == '\t')
    p++;
  *key = p;
  while (*p && *p != ' ' && *p != '\t' && *p != '=')
    p++;
  if (*p)
    *p++ = '\0';
  while (*p == ' ' || *p == '\t' || *p == '=')
    p++;
  size_t n = strlen(p);
  while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
    p[--n] = '\0';
  if (n >= 2 && p[0] == '"' && p[n - 1] == '"') {
    p[n - 1] = '\0';
    p++;
  }
  *val = p;
}

/* "<Target NAME>" -> NAME (quotes dropped), or NULL. */
static char *block(char *line, const char *what) {
  size_t w = strlen(what);
  while (*line == ' ' || *line == '\t')
    line++;
  if (line[0] != '<' || strncasecmp(line + 1, what, w) != 0 ||
      (line[1 + w] != ' ' && line[1 + w] != '\t'))
    return NULL;
  char *name, *val;
  split(line + 1 + w, &name, &val);
  size_t n = strlen(name);
  if (n > 0 && name[n - 1] == '>')
    name[--n] = '\0';
  if (n >= 2 && name[0] == '"' && name[n - 1] == '"') {
    name[n - 1] = '\0';
    name++;
  }
  return name;
}

static int is_end(const char *line, const char *what) {
  while (*line == ' ' || *line == '\t')
    line++;
  size_t w = strlen(what);
  return line[0] == '<' && line[1] == '/' &&
         strncasecmp(line + 2, what, w) == 0 && line[2 + w] == '>';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static dp_target_conf_t t;
  static dp_probe_conf_t p;
  dp_plugin_conf_t pc;
  int in_target = 0, in_probe = 0;
  size_t lines = 0;
  dp_plugin_conf_init(&pc);
  const char *s = (const char *)data, *end = s + size;
  while (s < end) {
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    size_t ll = (size_t)((nl ? nl : end) - s);
    char line[301];
    if (ll > 300)
      ll = 300;
    memcpy(line, s, ll);
    line[ll] = '\0'; /* an embedded NUL ends the line early */
    s = nl ? nl + 1 : end;
    errlen = (lines++ % 3 == 2) ? 24 : sizeof(err);
    start_err();

    char *name;
    if ((name = block(line, "Target")) != NULL) {
      dp_target_conf_init(&t, name);
      in_target = 1;
      in_probe = 0;
    } else if ((name = block(line, "Probe")) != NULL) {
      dp_probe_conf_init(&p, name);
      in_probe = 1;
    } else if (is_end(line, "Probe")) {
      if (in_probe && in_target) {
        size_t before = t.nprobes;
        int rc = dp_target_conf_add_probe(&t, &p, err, errlen);
        CHECK(rc == 0 || rc == -EINVAL || rc == -EEXIST || rc == -ENOSPC);
        check_rc(rc);
        CHECK(t.nprobes == before + (rc == 0));
        CHECK(t.nprobes <= DP_PROBES_MAX);
      }
      in_probe = 0;
    } else if (is_end(line, "Target")) {
      if (in_target) {
        int rc = dp_target_conf_finish(&t, err, errlen);
        CHECK(rc == 0 || rc == -EINVAL);
        check_rc(rc);
        if (rc == 0)
          check_target(&t);
      }
      in_target = in_probe = 0;
    } else {
      char *key, *val;
      split(line, &key, &val);
      if (*key == '\0' || *key == '#')
        continue;
      int rc;
      if (in_probe)
        rc = dp_probe_conf_set(&p, key, val, err, errlen);
      else if (in_target)
        rc = dp_target_conf_set(&t, key, val, err, errlen);
      else
        rc = dp_plugin_conf_set(&pc, key, val, err, errlen);
      check_rc(rc);
    }
  }
  /* an unclosed target is finished too */
  if (in_target) {
    errlen = sizeof(err);
    start_err();
    int rc = dp_target_conf_finish(&t, err, errlen);
    check_rc(rc);
    if (rc == 0)
      check_target(&t);
  }
  return 0;
}
