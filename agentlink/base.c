/* base.c -- the library's small calls: version, memory, time stamps. */
#include "agentlink/internal.h"

#include <stdlib.h>
#include <time.h>

const char *al_version(void)
{
    return OFFLOADFS_VERSION;
}

void al_free(void *p)
{
    free(p);
}

char *al_time_format(uint64_t ns, char *buf, size_t size)
{
    time_t t = (time_t)(ns / 1000000000u);
    struct tm tm;
    if (size == 0)
        return buf;
    if (!gmtime_r(&t, &tm) || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        buf[0] = '\0';
    return buf;
}
