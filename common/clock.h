/* clock.h -- the monotonic clock (CLOCK_MONOTONIC), for deadlines and
 * durations: never the wall clock, which jumps. */
#ifndef OFFLOADFS_COMMON_CLOCK_H
#define OFFLOADFS_COMMON_CLOCK_H

#include <stdint.h>

/* Nanoseconds of CLOCK_MONOTONIC (from an unspecified start). Cannot fail. */
uint64_t common_clock_ns(void);

/* Milliseconds of CLOCK_MONOTONIC: common_clock_ns() / 1000000. */
uint64_t common_clock_ms(void);

#endif
