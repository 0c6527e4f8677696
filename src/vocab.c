/* vocab.c - names of the shared vocabulary; see vocab.h. */
#include "vocab.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char *const pattern_names[DP_PATTERN_COUNT] = {
    [DP_PATTERN_RANDREAD] = "randread",   [DP_PATTERN_SEQREAD] = "seqread",
    [DP_PATTERN_RANDWRITE] = "randwrite", [DP_PATTERN_SEQWRITE] = "seqwrite",
    [DP_PATTERN_SYNCWRITE] = "syncwrite",
};

const char *dp_pattern_name(dp_pattern_t p) {
  if ((unsigned)p >= DP_PATTERN_COUNT)
    return NULL;
  return pattern_names[p];
}

int dp_pattern_parse(const char *name, dp_pattern_t *out) {
  for (unsigned i = 0; i < DP_PATTERN_COUNT; i++) {
    if (strcmp(name, pattern_names[i]) == 0) {
      *out = (dp_pattern_t)i;
      return 0;
    }
  }
  return -EINVAL;
}

int dp_pattern_writes(dp_pattern_t p) {
  return p == DP_PATTERN_RANDWRITE || p == DP_PATTERN_SEQWRITE ||
         p == DP_PATTERN_SYNCWRITE;
}

static const char *const media_names[DP_MEDIA_COUNT] = {
    "unknown", "nvme", "ssd", "hdd", "virtual"};

const char *dp_media_name(dp_media_t m) {
  return m < DP_MEDIA_COUNT ? media_names[m] : "?";
}

int dp_errf(char *err, size_t len, int rc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, len, fmt, ap);
  va_end(ap);
  return rc;
}

char *dp_escape(const char *in, char *out, size_t outlen) {
  size_t k = 0;
  if (outlen == 0)
    return out;
  for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
    char one[5];
    if (*p == '\\')
      snprintf(one, sizeof(one), "\\\\");
    else if (*p < 0x20 || *p >= 0x7f)
      snprintf(one, sizeof(one), "\\x%02x", *p);
    else
      snprintf(one, sizeof(one), "%c", *p);
    size_t n = strlen(one);
    if (k + n >= outlen)
      break;
    memcpy(out + k, one, n);
    k += n;
  }
  out[k] = '\0';
  return out;
}

const char *dp_file_kind(unsigned mode) {
  if (S_ISFIFO(mode))
    return "a FIFO (named pipe)";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISLNK(mode))
    return "a symlink";
  if (S_ISREG(mode))
    return "a regular file";
  return "of an unknown type";
}
