/* env.c -- common_env(). */
#include "common/env.h"

#include <stdlib.h>

const char *common_env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}
