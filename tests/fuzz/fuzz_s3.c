/* fuzz_s3.c -- libFuzzer target: the readers of what an S3 server answers
 * (remote/answer.c, remote/text.c), which take every answer as hostile.
 *
 * The first byte of an input picks the reader, the rest is the answer:
 *   0  header lines (one per line) into a remote_info: any ETag kept is
 *      usable in an If-Match (remote_etag_ok), a number is a number
 *   1  a Content-Range checked against a range asked (from and to: the
 *      next 16 bytes): accepted means it is exactly that range, cut at the
 *      object's end
 *   2  a ListObjectsV2 page under "pfx/default/": every name handed on lies
 *      under it and is longer; a continuation token is 1 to
 *      REMOTE_TOKEN_MAX bytes
 *   3  an error body: its <Code>, once escaped, holds no control character
 *   4  the text escaper on raw bytes: no control character, no invalid
 *      UTF-8, nothing cut inside a character, within its buffer
 *   5  dates and numbers (HTTP date, ISO 8601, decimal)
 * Any violation aborts (a crash libFuzzer keeps). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/remote_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                  \
    do {                                                                          \
        if (!(c)) {                                                               \
            fprintf(stderr, "fuzz_s3: %s:%d: %s\n", __FILE__, __LINE__, #c);      \
            abort();                                                              \
        }                                                                         \
    } while (0)

/* 1 when S holds no C0 control, no DEL and is well-formed UTF-8 without C1
 * controls: what remote_text_escape() promises. */
static int clean(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        if (*p < 0x20 || *p == 0x7f)
            return 0;
        if (*p < 0x80) {
            p++;
            continue;
        }
        size_t k = *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc2 ? 2 : 0;
        if (k == 0 || *p > 0xf4)
            return 0;
        unsigned long cp = *p & (0x7fu >> k);
        for (size_t i = 1; i < k; i++) {
            if ((p[i] & 0xc0) != 0x80)
                return 0;
            cp = (cp << 6) | (p[i] & 0x3f);
        }
        if ((cp >= 0x80 && cp <= 0x9f) || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff ||
            (k == 3 && cp < 0x800) || (k == 4 && cp < 0x10000))
            return 0;
        p += k;
    }
    return 1;
}

static void headers(const char *s, size_t n)
{
    remote_info in;
    int oom = 0;
    memset(&in, 0, sizeof in);
    for (const char *line = s; line < s + n;) {
        const char *nl = memchr(line, '\n', (size_t)(s + n - line));
        size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line);
        remote_hdr_info(&in, line, len, &oom);
        char *v = remote_hdr_value(line, len, "content-range");
        if (v) {
            crange cr;
            (void)remote_crange_parse(v, &cr);
            free(v);
        }
        line += len ? len : 1;
    }
    CHECK(!in.etag || remote_etag_ok(in.etag));
    CHECK(!in.etag || strlen(in.etag) <= REMOTE_ETAG_MAX);
    remote_info_clear(&in);
}

static void content_range(const uint8_t *d, size_t n)
{
    uint64_t from = 0, to = 0;
    char why[256], *v;
    crange cr;
    if (n < 16)
        return;
    memcpy(&from, d, 8);
    memcpy(&to, d + 8, 8);
    from %= 1u << 20; /* small numbers meet the answer's more often */
    if (to != UINT64_MAX)
        to = from + to % (1u << 20);
    if (!(v = strndup((const char *)d + 16, n - 16)))
        return;
    if (remote_crange_check(v, from, to, &cr, why, sizeof why) == 0) {
        CHECK(cr.known && cr.first == from && cr.last >= cr.first && cr.last < cr.total);
        CHECK(cr.last == (to < cr.total - 1 ? to : cr.total - 1));
    } else {
        CHECK(why[0] != '\0');
    }
    free(v);
}

static int one_name(void *arg, const char *name, uint64_t size, int64_t mtime)
{
    (void)size;
    (void)mtime;
    ++*(unsigned *)arg;
    CHECK(strncmp(name, "default/", 8) == 0 && name[8] != '\0');
    return 0;
}

static void listing(const char *s, size_t n)
{
    char *token = NULL, why[160] = "";
    unsigned names = 0;
    int rc = remote_list_page_parse(s, n, "pfx/default/", 4, one_name, &names, &token, why, sizeof why);
    CHECK(rc == 0 || rc == REMOTE_EPROTO || rc == ENOMEM);
    CHECK(rc != REMOTE_EPROTO || why[0]);
    CHECK(!token || (rc == 0 && token[0] && strlen(token) <= REMOTE_TOKEN_MAX));
    free(token);
}

static void error_body(const char *s, size_t n)
{
    char code[64], out[REMOTE_MSG_MAX];
    remote_s3_error_code(s, n, code, sizeof code);
    remote_text_escape(out, sizeof out, code);
    CHECK(clean(out));
}

static void escape(const char *s)
{
    char small[17], big[REMOTE_MSG_MAX];
    size_t n = remote_text_escape(small, sizeof small, s);
    CHECK(n < sizeof small && strlen(small) == n && clean(small));
    n = remote_text_escape(big, sizeof big, s);
    CHECK(n < sizeof big && strlen(big) == n && clean(big));
}

static void numbers(const char *s, size_t n)
{
    uint64_t v;
    (void)remote_http_date_parse(s);
    (void)remote_iso8601_parse(s);
    if (remote_dec_parse(s, n, &v) == 0) {
        char back[24];
        snprintf(back, sizeof back, "%llu", (unsigned long long)v);
        CHECK(n >= strlen(back)); /* leading zeros only make it longer */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    /* The readers take NUL-terminated text, as libcurl's buffers are read. */
    char *s = malloc(size);
    if (!s)
        return 0;
    memcpy(s, data + 1, size - 1);
    s[size - 1] = '\0';
    size_t n = size - 1;
    switch (data[0] % 6) {
    case 0: headers(s, strlen(s)); break;
    case 1: content_range(data + 1, n); break;
    case 2: listing(s, n); break;
    case 3: error_body(s, n); break;
    case 4: escape(s); break;
    default: numbers(s, strlen(s)); break;
    }
    free(s);
    return 0;
}
