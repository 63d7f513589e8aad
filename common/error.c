/* error.c -- common_strerror(). */
#include "common/error.h"

#include <string.h>

const char *common_strerror(int err)
{
    if (err == 0)
        return "success";
    if (err == COMMON_ECONFIG)
        return "offload policy refused";
    return err > 0 ? strerror(err) : "unknown error";
}
