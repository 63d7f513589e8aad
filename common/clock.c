/* clock.c -- common_clock_ns(), common_clock_ms(). */
#include "common/clock.h"

#include <time.h>

uint64_t common_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t common_clock_ms(void)
{
    return common_clock_ns() / 1000000u;
}
