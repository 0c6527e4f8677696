/*
 * units.h - parsing and printing of sizes and durations, shared by the
 * command line and the plugin's configuration.
 */
#ifndef DP_UNITS_H
#define DP_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* "8k", "8K", "8KiB", "1M", "1G", "4096" into bytes; binary multiples
 * (k = 1024). Returns 0, -EINVAL for anything else, -ERANGE on overflow. */
int dp_parse_size(const char *s, uint64_t *out_bytes);

/* "2s", "500ms", "100us", "1m", "1.5" (a bare number is seconds) into
 * nanoseconds. Returns 0, -EINVAL for anything else or a negative value,
 * -ERANGE above 10 years. */
int dp_parse_duration(const char *s, uint64_t *out_ns);

/* Seconds as a double into nanoseconds, with the same checks. */
int dp_seconds_to_ns(double s, uint64_t *out_ns);

/* Writes bytes as "8k", "1M", "1.5G" (exact binary units when they fit). */
void dp_format_size(uint64_t bytes, char *buf, size_t len);

#endif /* DP_UNITS_H */
