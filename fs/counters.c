/* counters.c -- the data path's counters (counters.h): the clock a fetch
 * is timed with and the histogram it is counted into. Nothing here
 * blocks or calls another file of fs/. */
#include "fs/counters.h"
#include "common/clock.h"

/* Upper bounds of offloadfs_remote_fetch_seconds' buckets: a GET from a
 * server on the same network answers in a few ms, one across a region in
 * tens, and a failing one takes up to the tier's bound (tier_bound_ms(),
 * logged at mount), so 1 ms to 10 s in 1-2.5-5 steps. Read-only. */
static const double fetch_bounds[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                      0.25,  0.5,    1.0,   2.5,  5.0,   10.0};
_Static_assert(sizeof fetch_bounds / sizeof fetch_bounds[0] == OFS_FETCH_BOUNDS,
               "counters.h's OFS_FETCH_BOUNDS counts fetch_bounds");

const double *ofs_fetch_bounds(void)
{
    return fetch_bounds;
}

void ofs_fetch_done(struct ofs_counters *c, uint64_t start, int failed)
{
    uint64_t now = common_clock_ns(), ns = now > start ? now - start : 0;
    double s = (double)ns / 1e9;
    unsigned i = 0;
    while (i < OFS_FETCH_BOUNDS && s > fetch_bounds[i]) /* le: a bound holds itself */
        i++;
    ofs_count(&c->fetch_buckets[i], 1);
    ofs_count(&c->fetch_ns, ns);
    if (failed)
        ofs_count(&c->fetch_errors, 1);
    ofs_count(&c->fetches, 1);
}
