/* names.c -- checks of keys and tool names. */
#include "agentlink/internal.h"
#include "common/policy.h"
#include "store/store.h"

#include <errno.h>
#include <string.h>

int al_key_check(const char *key)
{
    if (!key)
        return EINVAL;
    return al_err_from_store(store_name_check(key, strlen(key)));
}

int al_tool_check(const char *tool)
{
    return common_tool_name_ok(tool) ? 0 : AL_ETOOL;
}
