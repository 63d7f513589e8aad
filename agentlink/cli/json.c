/* json.c -- bytes in --json output: a JSON string when they are UTF-8,
 * base64 otherwise (see json.h). */
#include "agentlink/cli/cli.h"
#include "agentlink/internal.h"
#include "agentlink/mcp/mcp.h"
#include "common/buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int is_utf8(const unsigned char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        size_t n = s[i] < 0x80 ? 1 : store_utf8_len(s + i, len - i);
        if (n == 0)
            return 0;
        i += n;
    }
    return 1;
}

/* "..." holding the padded base64 of the LEN bytes at S. */
static void add_base64(common_buf *b, const unsigned char *s, size_t len)
{
    static const char abc[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char q[4];
    common_buf_addc(b, '"');
    for (size_t i = 0; i < len; i += 3) {
        unsigned v = (unsigned)s[i] << 16;
        if (i + 1 < len)
            v |= (unsigned)s[i + 1] << 8;
        if (i + 2 < len)
            v |= s[i + 2];
        q[0] = abc[(v >> 18) & 63];
        q[1] = abc[(v >> 12) & 63];
        q[2] = i + 1 < len ? abc[(v >> 6) & 63] : '=';
        q[3] = i + 2 < len ? abc[v & 63] : '=';
        common_buf_add(b, q, 4);
    }
    common_buf_addc(b, '"');
}

int cli_json_add_bytes(cJSON *obj, const char *name, const char *enc_name,
                       const void *data, size_t len)
{
    const unsigned char *s = data ? data : (const unsigned char *)"";
    int utf8 = is_utf8(s, len);
    common_buf b = {0};
    char *lit = NULL;
    cJSON *item;

    if (utf8)
        mcp_json_string_encode(&b, (const char *)s, len);
    else
        add_base64(&b, s, len);
    if (common_buf_detach(&b, &lit, NULL))
        return ENOMEM;
    /* A raw item is printed as it is: LIT is already a JSON string. */
    item = cJSON_AddRawToObject(obj, name, lit);
    free(lit);
    if (!item || !cJSON_AddStringToObject(obj, enc_name, utf8 ? "utf-8" : "base64"))
        return ENOMEM;
    return 0;
}

int cli_print_json(cJSON *j)
{
    char *s = j ? cJSON_PrintUnformatted(j) : NULL;
    int rc;
    cJSON_Delete(j);
    if (!s) {
        cli_msg("out of memory");
        return EX_FAIL;
    }
    rc = cli_write_all(s, strlen(s));
    if (rc == EX_OK)
        rc = cli_write_all("\n", 1);
    cJSON_free(s);
    return rc;
}

cJSON *cli_entry_json(const char *key, const al_entry *e)
{
    char when[40];
    cJSON *j = cJSON_CreateObject();
    if (!j)
        return NULL;
    cJSON_AddStringToObject(j, "key", key);
    cJSON_AddNumberToObject(j, "size", (double)e->size);
    if (e->has_tool)
        cJSON_AddStringToObject(j, "tool", e->tool);
    else
        cJSON_AddNullToObject(j, "tool");
    cJSON_AddStringToObject(j, "created", al_time_format(e->created_ns, when, sizeof when));
    cJSON_AddNumberToObject(j, "original_size", (double)e->original_size);
    cJSON_AddBoolToObject(j, "truncated", e->truncated);
    cJSON_AddStringToObject(j, "where", e->where == AL_WHERE_REMOTE ? "remote" : "here");
    /* "where" keeps its two values (the bytes are here); a copy says so apart */
    if (e->where == AL_WHERE_CACHED)
        cJSON_AddTrueToObject(j, "cached");
    return j;
}
