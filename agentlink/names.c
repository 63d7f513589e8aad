/* names.c -- checks of keys and tool names. */
#include "agentlink/internal.h"
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
    const unsigned char *s = (const unsigned char *)tool;
    size_t len;
    if (!tool)
        return AL_ETOOL;
    len = strlen(tool);
    if (len == 0 || len > STORE_TOOL_MAX)
        return AL_ETOOL;
    for (size_t i = 0; i < len;) {
        size_t n = store_utf8_len(s + i, len - i);
        if (n == 0 || s[i] < 0x20 || s[i] == 0x7f)
            return AL_ETOOL;
        i += n;
    }
    return 0;
}
