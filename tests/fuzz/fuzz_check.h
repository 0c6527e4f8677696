/* fuzz_check.h - what the command readers' libFuzzer targets share:
 * CHECK(c), an invariant whose failure traps (libFuzzer keeps the input). */
#ifndef DP_FUZZ_CHECK_H
#define DP_FUZZ_CHECK_H

#define CHECK(c)                                                               \
  do {                                                                         \
    if (!(c))                                                                  \
      __builtin_trap();                                                        \
  } while (0)

#endif /* DP_FUZZ_CHECK_H */
