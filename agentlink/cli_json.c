/* cli_json.c -- bytes in --json output: a JSON string when they are UTF-8,
 * base64 otherwise (see cli_json.h). */
#include "agentlink/cli_json.h"
#include "agentlink/internal.h"

#include <errno.h>
#include <stdlib.h>

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

/* A JSON string literal, quotes included, that decodes to the LEN bytes
 * at S (valid UTF-8). */
static void add_json_string(al_buf *b, const unsigned char *s, size_t len)
{
    al_buf_addc(b, '"');
    for (size_t i = 0; i < len; i++) {
        unsigned char c = s[i];
        switch (c) {
        case '"': al_buf_adds(b, "\\\""); break;
        case '\\': al_buf_adds(b, "\\\\"); break;
        case '\n': al_buf_adds(b, "\\n"); break;
        case '\r': al_buf_adds(b, "\\r"); break;
        case '\t': al_buf_adds(b, "\\t"); break;
        default:
            if (c < 0x20)
                al_buf_addf(b, "\\u%04x", c);
            else
                al_buf_addc(b, (char)c);
        }
    }
    al_buf_addc(b, '"');
}

/* "..." holding the padded base64 of the LEN bytes at S. */
static void add_base64(al_buf *b, const unsigned char *s, size_t len)
{
    static const char abc[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char q[4];
    al_buf_addc(b, '"');
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
        al_buf_add(b, q, 4);
    }
    al_buf_addc(b, '"');
}

int cli_json_add_bytes(cJSON *obj, const char *name, const char *enc_name,
                       const void *data, size_t len)
{
    const unsigned char *s = data ? data : (const unsigned char *)"";
    int utf8 = is_utf8(s, len);
    al_buf b = {0};
    char *lit = NULL;
    cJSON *item;

    if (utf8)
        add_json_string(&b, s, len);
    else
        add_base64(&b, s, len);
    if (al_buf_detach(&b, &lit, NULL))
        return ENOMEM;
    /* A raw item is printed as it is: LIT is already a JSON string. */
    item = cJSON_AddRawToObject(obj, name, lit);
    free(lit);
    if (!item || !cJSON_AddStringToObject(obj, enc_name, utf8 ? "utf-8" : "base64"))
        return ENOMEM;
    return 0;
}
