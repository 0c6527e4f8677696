/*
 * common.c - what the subcommands share: their flags, usage text and
 * validation come from the option table (options.c) and go through the
 * same conf setters as the collectd plugin's config (the JSON they write:
 * json_out.c).
 */
#define _GNU_SOURCE
#include "cli.h"
#include "units.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

void dp_cli_conf_init(dp_cli_conf_t *c, const char *probe_name) {
  memset(c, 0, sizeof(*c));
  dp_plugin_conf_init(&c->plugin);
  dp_target_conf_init(&c->target, "cli");
  dp_probe_conf_init(&c->probe, probe_name);
}

/* The table's rows a command takes, probe options first. */
static size_t cli_rows(unsigned cmd, const dp_option_t **rows) {
  static const dp_opt_scope_t order[] = {DP_SCOPE_PROBE, DP_SCOPE_TARGET,
                                         DP_SCOPE_PLUGIN};
  size_t n, k = 0;
  const dp_option_t *t = dp_options(&n);
  for (size_t s = 0; s < 3; s++)
    for (size_t i = 0; i < n; i++)
      if (t[i].scope == order[s] && t[i].flag && (t[i].cli & cmd) &&
          k < DP_CLI_OPTS_MAX - 8)
        rows[k++] = &t[i];
  return k;
}

void dp_cli_longopts(unsigned cmd, const struct option *extra,
                     struct option *out) {
  const dp_option_t *rows[DP_CLI_OPTS_MAX];
  size_t n, k = cli_rows(cmd, rows), j = 0;
  const dp_option_t *t = dp_options(&n);
  for (size_t i = 0; i < k; i++)
    out[j++] = (struct option){rows[i]->flag,
                               rows[i]->kind == DP_OPT_BOOL ? no_argument
                                                            : required_argument,
                               NULL, DP_CLI_OPT_BASE + (int)(rows[i] - t)};
  for (; extra && extra->name && j < DP_CLI_OPTS_MAX - 1; extra++)
    out[j++] = *extra;
  out[j] = (struct option){NULL, 0, NULL, 0};
}

int dp_cli_apply(dp_cli_conf_t *c, const char *cmdname, int val,
                 const char *arg) {
  size_t n;
  const dp_option_t *o = &dp_options(&n)[val - DP_CLI_OPT_BASE];
  const char *v = o->kind == DP_OPT_BOOL ? "true" : arg;
  char err[512];
  int rc;
  switch (o->scope) {
  case DP_SCOPE_PROBE:
    rc = dp_probe_conf_set(&c->probe, o->key, v, err, sizeof(err));
    c->probe_set = 1;
    break;
  case DP_SCOPE_TARGET:
    rc = dp_target_conf_set(&c->target, o->key, v, err, sizeof(err));
    break;
  default:
    rc = dp_plugin_conf_set(&c->plugin, o->key, v, err, sizeof(err));
    break;
  }
  if (rc < 0) {
    fprintf(stderr, "diskprobe %s: --%s: %s\n", cmdname, o->flag, err);
    return -1;
  }
  return 0;
}

/* Appends word to a line wrapped at 78 columns, continuing at indent. */
static void wrap_word(FILE *f, size_t *col, size_t indent, const char *word) {
  size_t w = strlen(word);
  if (*col > indent && *col + 1 + w > 78) {
    fprintf(f, "\n%*s", (int)indent, "");
    *col = indent;
  } else if (*col > indent) {
    fputc(' ', f);
    (*col)++;
  }
  fputs(word, f);
  *col += w;
}

/* What a flag takes, for the synopsis: "8k", "N", "a|b|c", "" (bool). */
static void flag_arg(const dp_option_t *o, char *buf, size_t len) {
  buf[0] = '\0';
  switch (o->kind) {
  case DP_OPT_BOOL:
    return;
  case DP_OPT_ENUM: {
    size_t off = 0;
    for (int i = 0; o->choices[i] && off < len; i++)
      off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? "|" : "",
                              o->choices[i]);
    return;
  }
  case DP_OPT_INTEGER:
    snprintf(buf, len, "N");
    return;
  case DP_OPT_DURATION:
    snprintf(buf, len, "%ss", o->def);
    return;
  default:
    snprintf(buf, len, "%s", o->def ? o->def : "VALUE");
    return;
  }
}

/* Prints s word by word, wrapped, without markdown's backticks; a
 * bracketed group ("[--format text|json]") is kept on one line. */
static void plain(FILE *f, size_t *col, size_t indent, const char *s) {
  char word[256];
  while (*s) {
    size_t k = 0;
    int depth = 0;
    while (*s == ' ')
      s++;
    while (*s && (*s != ' ' || depth > 0) && k < sizeof(word) - 1) {
      depth += *s == '[' ? 1 : *s == ']' ? -1 : 0;
      if (*s != '`')
        word[k++] = *s;
      s++;
    }
    word[k] = '\0';
    if (k)
      wrap_word(f, col, indent, word);
  }
}

/* "  --flag ARG", then blanks (or a new line) to column 24. */
static size_t flag_col(FILE *f, const char *flag) {
  size_t col = (size_t)fprintf(f, "  %s", flag);
  if (col + 2 > 24)
    fprintf(f, "\n%24s", "");
  else
    fprintf(f, "%*s", (int)(24 - col), "");
  return 24;
}

/* A flag and its description from column 24, wrapped. */
static void opt_line(FILE *f, const char *flag, const char *help) {
  size_t col = flag_col(f, flag);
  plain(f, &col, 24, help);
  fputc('\n', f);
}

/* The table's rows for cmd, a line each with its key, range and default. */
static void table_help(FILE *f, unsigned cmd) {
  const dp_option_t *rows[DP_CLI_OPTS_MAX];
  size_t k = cli_rows(cmd, rows);
  char flag[320], arg[256], allowed[256], bracket[640];
  for (size_t i = 0; i < k; i++) {
    const dp_option_t *o = rows[i];
    flag_arg(o, arg, sizeof(arg));
    dp_option_allowed(o, allowed, sizeof(allowed));
    snprintf(flag, sizeof(flag), "--%s%s%s", o->flag, arg[0] ? " " : "", arg);
    snprintf(bracket, sizeof(bracket), "[%s: %s%s%s%s]", o->key, allowed,
             o->def ? "; default " : "", o->def ? o->def : "",
             o->def && o->kind == DP_OPT_DURATION ? " s" : "");
    size_t col = flag_col(f, flag);
    plain(f, &col, 24, o->help);
    /* word by word, without markdown's backticks: plain() would keep the
     * bracketed group on one line */
    for (char *r = bracket, *w = bracket;; r++)
      if (*r != '`' && (*w++ = *r) == '\0')
        break;
    for (char *w = strtok(bracket, " "); w; w = strtok(NULL, " "))
      wrap_word(f, &col, 24, w);
    fputc('\n', f);
  }
}

/* "usage: diskprobe NAME [--flag ARG]... extra" wrapped, from the table's
 * flags for cmd; extra holds the command's own flags and operands. */
static void table_synopsis(FILE *f, const char *lead, const char *name,
                           unsigned cmd, const char *extra) {
  const dp_option_t *rows[DP_CLI_OPTS_MAX];
  size_t k = cli_rows(cmd, rows);
  char word[512], arg[256];
  size_t col = (size_t)fprintf(f, "%sdiskprobe %s ", lead, name);
  size_t indent = col;
  for (size_t i = 0; i < k; i++) {
    flag_arg(rows[i], arg, sizeof(arg));
    snprintf(word, sizeof(word), "[--%s%s%s]", rows[i]->flag, arg[0] ? " " : "",
             arg);
    wrap_word(f, &col, indent, word);
  }
  plain(f, &col, indent, extra);
  fputc('\n', f);
}

/* ---- help ----------------------------------------------------------------
 */

void dp_cli_help_usage(FILE *f, const dp_cli_help_t *h) {
  for (size_t i = 0; h->usage[i] != NULL; i++) {
    const char *lead = i ? "       " : "usage: ";
    if (i == 0 && h->table) {
      table_synopsis(f, lead, h->name, h->table, h->usage[0]);
      continue;
    }
    size_t col = (size_t)fprintf(f, "%sdiskprobe %s ", lead, h->name);
    plain(f, &col, col, h->usage[i]);
    fputc('\n', f);
  }
}

/* text wrapped at 78 columns from column indent, a blank line between the
 * paragraphs ("\n\n") */
static void paragraphs(FILE *f, size_t indent, const char *text) {
  char para[2048];
  while (*text) {
    const char *e = strstr(text, "\n\n");
    size_t n = e ? (size_t)(e - text) : strlen(text);
    snprintf(para, sizeof(para), "%.*s", (int)n, text);
    for (char *c = para; *c; c++)
      if (*c == '\n')
        *c = ' ';
    size_t col = (size_t)fprintf(f, "%*s", (int)indent, "");
    plain(f, &col, indent, para);
    fputc('\n', f);
    text += n;
    if (*text) {
      text += 2;
      fputc('\n', f);
    }
  }
}

void dp_cli_help(FILE *f, const dp_cli_help_t *h) {
  fprintf(f, "diskprobe %s: %s\n\n", h->name, h->purpose);
  dp_cli_help_usage(f, h);
  fprintf(f, "\noptions:\n");
  for (const dp_cli_opt_help_t *o = h->opts; o && o->flag; o++)
    opt_line(f, o->flag, o->help);
  opt_line(f, "-h, --help", "this help");
  if (h->table) {
    fprintf(f, "\nprobe and target options (each sets the collectd option "
               "in brackets;\nsame ranges and defaults):\n");
    table_help(f, h->table);
  }
  if (h->notes) {
    fputc('\n', f);
    paragraphs(f, 0, h->notes);
  }
  fprintf(f, "\nexample%s:\n", h->examples[1] ? "s" : "");
  for (size_t i = 0; h->examples[i] != NULL; i++)
    fprintf(f, "  %s\n", h->examples[i]);
}

/* ---- figures for people --------------------------------------------------
 */

/* "1,234,567" from a whole number's digits (v >= 0, rounded). */
static void grouped(double v, char *buf, size_t len) {
  char d[64];
  snprintf(d, sizeof(d), "%.0f", v);
  size_t n = strlen(d), j = 0;
  for (size_t i = 0; i < n && j + 2 < len; i++) {
    if (i > 0 && (n - i) % 3 == 0)
      buf[j++] = ',';
    buf[j++] = d[i];
  }
  buf[j] = '\0';
}

/* v >= 0 with three significant figures (the whole number, grouped, from
 * 1000); returns the decimals used, or -1 for the grouped form. */
static int sig3(double v, char *buf, size_t len) {
  double a = fabs(v);
  int dec = a >= 99.95 ? 0 : a >= 9.995 ? 1 : a >= 0.9995 ? 2 : 3;
  if (a >= 999.5) {
    char g[64];
    grouped(a, g, sizeof(g));
    snprintf(buf, len, "%s%s", v < 0 ? "-" : "", g);
    return -1;
  }
  if (a > 0 && a < 0.9995) /* 0.0415, 0.00123: three figures after zeros */
    dec = 2 - (int)floor(log10(a)) > 3 ? 2 - (int)floor(log10(a)) : 3;
  snprintf(buf, len, "%.*f", dec, v);
  return dec;
}

const char *dp_cli_fmt_count(double v, char *buf, size_t len) {
  if (!isfinite(v))
    snprintf(buf, len, "-");
  else if (v == 0)
    snprintf(buf, len, "0");
  else
    sig3(v, buf, len);
  return buf;
}

const char *dp_cli_fmt_latency(double s, char *buf, size_t len) {
  static const struct {
    double scale, below;
    const char *unit;
  } u[] = {{1e9, 999.5e-9, "ns"},
           {1e6, 999.5e-6, "µs"},
           {1e3, 999.5e-3, "ms"},
           {1, INFINITY, "s"}};
  if (!isfinite(s)) {
    snprintf(buf, len, "-");
    return buf;
  }
  size_t i = 0;
  while (fabs(s) >= u[i].below)
    i++;
  char n[64];
  if (s == 0)
    snprintf(n, sizeof(n), "0");
  else
    sig3(s * u[i].scale, n, sizeof(n));
  snprintf(buf, len, "%s %s", n, u[i].unit);
  return buf;
}

const char *dp_cli_fmt_mbps(double bytes_per_s, int unit, char *buf,
                            size_t len) {
  char n[64];
  if (!isfinite(bytes_per_s)) {
    snprintf(buf, len, "-");
    return buf;
  }
  dp_cli_fmt_count(bytes_per_s / 1e6, n, sizeof(n));
  snprintf(buf, len, "%s%s", n, unit ? " MB/s" : "");
  return buf;
}

const char *dp_cli_fmt_ratio(double r, char *buf, size_t len) {
  if (!isfinite(r))
    snprintf(buf, len, "-");
  else if (r == 0)
    snprintf(buf, len, "0");
  else
    sig3(r, buf, len);
  return buf;
}

/* ---- names from the input, in text ---------------------------------------
 */

/* The length of the valid UTF-8 sequence at s that is not a control
 * character (C1 is U+0080-U+009F: C2 80..C2 9F), else 0. */
static size_t utf8_printable(const unsigned char *s) {
  if (s[0] < 0x80)
    return s[0] >= 0x20 && s[0] != 0x7f && s[0] != '\\';
  size_t n = s[0] >= 0xf0 && s[0] <= 0xf4   ? 4
             : s[0] >= 0xe0 && s[0] <= 0xef ? 3
             : s[0] >= 0xc2 && s[0] <= 0xdf ? 2
                                            : 0;
  for (size_t i = 1; i < n; i++)
    if ((s[i] & 0xc0) != 0x80)
      return 0;
  if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0) /* C1 */
    return 0;
  if (n == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || /* overlong */
                 (s[0] == 0xed && s[1] >= 0xa0))) /* surrogate */
    return 0;
  if (n == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || /* overlong */
                 (s[0] == 0xf4 && s[1] >= 0x90))) /* beyond U+10FFFF */
    return 0;
  return n;
}

/* The text for the unit at s into out (at least 5 bytes): the sequence
 * itself or its escape. Returns the bytes of s consumed. */
static size_t visible_unit(const char *s, char *out) {
  const unsigned char *u = (const unsigned char *)s;
  size_t n = utf8_printable(u);
  if (n > 0) {
    memcpy(out, s, n);
    out[n] = '\0';
    return n;
  }
  static const char named[] = "\a"
                              "a"
                              "\b"
                              "b"
                              "\t"
                              "t"
                              "\n"
                              "n"
                              "\v"
                              "v"
                              "\f"
                              "f"
                              "\r"
                              "r"
                              "\\"
                              "\\";
  for (const char *p = named; *p; p += 2)
    if (*p == s[0]) {
      snprintf(out, 5, "\\%c", p[1]);
      return 1;
    }
  snprintf(out, 5, "\\x%02x", u[0]);
  return 1;
}

const char *dp_cli_visible(const char *s, char *buf, size_t len) {
  char u[8];
  size_t need = 1, o = 0;
  if (len == 0)
    return buf;
  for (const char *p = s; *p;) {
    p += visible_unit(p, u);
    need += strlen(u);
  }
  /* cut short: whole escapes, then "..." */
  size_t room = need <= len ? len : len > 3 ? len - 3 : 0;
  while (*s) {
    size_t k = visible_unit(s, u), l = strlen(u);
    if (o + l + 1 > room)
      break;
    memcpy(buf + o, u, l);
    o += l;
    s += k;
  }
  snprintf(buf + o, len - o, "%s", need > len ? "..." : "");
  return buf;
}

void dp_cli_put_visible(FILE *f, const char *s) {
  while (*s) {
    char u[8];
    s += visible_unit(s, u);
    fputs(u, f);
  }
}

const char *dp_cli_file_kind(mode_t m) {
  if (S_ISFIFO(m))
    return "a FIFO";
  if (S_ISCHR(m))
    return "a character device";
  if (S_ISBLK(m))
    return "a block device";
  if (S_ISSOCK(m))
    return "a socket";
  return S_ISDIR(m) ? "a directory" : "of another kind";
}

void dp_cli_pad(FILE *f, const char *s, int width) {
  int cols = 0;
  for (const char *c = s; *c; c++)
    cols += ((unsigned char)*c & 0xC0) != 0x80;
  int w = width < 0 ? -width : width;
  if (width > 0)
    fprintf(f, "%*s", w > cols ? w - cols : 0, "");
  fputs(s, f);
  if (width < 0)
    fprintf(f, "%*s", w > cols ? w - cols : 0, "");
}

int dp_cli_getopt_error(const char *cmdname, int ch, char **argv) {
  extern int optind;
  const char *arg = argv[optind - 1];
  fprintf(stderr, "diskprobe %s: %s '%s' (see diskprobe %s --help)\n", cmdname,
          ch == ':' ? "missing value for" : "unknown option", arg, cmdname);
  return 2;
}

int dp_cli_since(const char *cmd, const char *arg, double *out_s) {
  uint64_t ns;
  if (dp_parse_duration(arg, &ns) != 0 || ns < 1000000000ULL) {
    fprintf(stderr,
            "diskprobe %s: --since '%s': a duration of 1s or more (24h, "
            "90min)\n",
            cmd, arg);
    return -1;
  }
  *out_s = (double)(ns / 1000000000ULL);
  return 0;
}

int dp_cli_prometheus_limit(const char *cmd, const char *arg, size_t *out) {
  uint64_t b;
  if (dp_parse_size(arg, &b) != 0 || b < 4096 || b > ((uint64_t)64 << 30)) {
    fprintf(stderr,
            "diskprobe %s: --prometheus-limit '%s': a size from 4k to 64G "
            "(64M, 512k)\n",
            cmd, arg);
    return -1;
  }
  *out = (size_t)b;
  return 0;
}
