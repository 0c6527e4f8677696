/*
 * rng.h - fast pseudo-random numbers for offsets, write data and the
 * probe-file layout (xorshift64*): not cryptographic, but its output does
 * not compress or deduplicate, which is what a storage probe needs.
 * The state is the caller's; 0 is replaced by a fixed non-zero seed.
 */
#ifndef DP_RNG_H
#define DP_RNG_H

#include <stddef.h>
#include <stdint.h>

/* The next 64 random bits; advances *state. */
uint64_t dp_rng_next(uint64_t *state);

/* Fills buf with len random bytes; advances *state. */
void dp_fill_random(void *buf, size_t len, uint64_t *state);

#endif /* DP_RNG_H */
