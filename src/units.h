/*
 * units.h - parsing and printing of numbers, sizes and durations, shared by
 * the command line and the plugin's configuration. There is one number
 * parser: every integer, size, duration and decimal number goes through the
 * same scan of digits, which accepts exactly [0-9]+ (and for decimals
 * [0-9]*.[0-9]+) and nothing else: no sign, no leading or trailing spaces,
 * no base prefix, no exponent, no empty string, no overflow.
 */
#ifndef DP_UNITS_H
#define DP_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* "0", "4096", "007" into *out. -EINVAL for "", "-1", "+1", " 1", "1 ",
 * "1x", "0x10", "1.5"; -ERANGE above UINT64_MAX. */
int dp_parse_uint(const char *s, uint64_t *out);

/* "2", "0.5", ".25", "100." into *out. -EINVAL for anything else (signs,
 * spaces, exponents, "nan", "inf", "."); -ERANGE when the integer part
 * exceeds UINT64_MAX. */
int dp_parse_real(const char *s, double *out);

/* "8k", "8K", "8KiB", "8kB", "1M", "1G", "2T", "4096" into bytes; binary
 * multiples (k = 1024), a whole number. Returns 0, -EINVAL for anything
 * else, -ERANGE on overflow. */
int dp_parse_size(const char *s, uint64_t *out_bytes);

/* "2s", "500ms", "100us", "10ns", "1m", "1min", "1h", "1.5" (a bare number
 * is seconds) into nanoseconds, exactly (decimal arithmetic, rounded to
 * the nearest ns). Returns 0, -EINVAL for anything else, -ERANGE above 10
 * years. */
int dp_parse_duration(const char *s, uint64_t *out_ns);

/* Seconds as a double into nanoseconds: -EINVAL for negative or NaN,
 * -ERANGE above 10 years. */
int dp_seconds_to_ns(double s, uint64_t *out_ns);

/* Writes bytes as "8k", "1M", "1T" (exact binary units when they fit). */
void dp_format_size(uint64_t bytes, char *buf, size_t len);

#endif /* DP_UNITS_H */
