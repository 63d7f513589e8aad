/* options.c -- a remote's request options: their defaults and the two
 * environment variables that set them, and the retry bound they give.
 * Shared with the in-memory remote (remote/mem/), so that both resolve
 * options and compute the bound with the same lines. */
#include "remote/remote.h"
#include "common/env.h"

#include <stdlib.h>

static unsigned env_uint(const char *name, unsigned long max)
{
    const char *v = common_env(name);
    char *end;
    unsigned long n = v ? strtoul(v, &end, 10) : 0;
    return v && !*end && v[0] != '-' && n <= max ? (unsigned)n : 0;
}

void remote_options_resolve(remote_options *o, const remote_options *in)
{
    if (in)
        *o = *in;
    /* Operators' knobs for programs that take no options (the library, the
     * CLI): OFFLOADFS_REMOTE_STALL_SECONDS, OFFLOADFS_REMOTE_RETRIES. */
    if (!o->stall_s)
        o->stall_s = env_uint("OFFLOADFS_REMOTE_STALL_SECONDS", 3600);
    if (!o->retries && common_env("OFFLOADFS_REMOTE_RETRIES"))
        o->retries = env_uint("OFFLOADFS_REMOTE_RETRIES", 10) ? env_uint("OFFLOADFS_REMOTE_RETRIES", 10)
                                                             : REMOTE_NO_RETRY;
    if (!o->connect_ms)
        o->connect_ms = 1000;
    if (!o->stall_s)
        o->stall_s = 2;
    if (!o->retries)
        o->retries = 2;
    else if (o->retries == REMOTE_NO_RETRY)
        o->retries = 0;
    if (!o->backoff_ms)
        o->backoff_ms = 100;
    if (!o->part_bytes)
        o->part_bytes = 16ull << 20;
    if (o->part_bytes < (5ull << 20))
        o->part_bytes = 5ull << 20;
    if (!o->multipart_over)
        o->multipart_over = 32ull << 20;
    if (!o->list_page || o->list_page > 1000)
        o->list_page = 1000;
}

uint64_t remote_options_bound_ms(const remote_options *o)
{
    uint64_t per = (uint64_t)o->connect_ms + 1000ull * o->stall_s, total = per, back = o->backoff_ms;
    for (unsigned i = 0; i < o->retries; i++, back *= 4)
        total += per + back;
    return total;
}
