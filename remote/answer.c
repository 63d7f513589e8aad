/* answer.c -- reading what an S3 server answers: numbers and dates,
 * header lines (into a remote_info, which it also completes and clears),
 * the Content-Range of a 206, the <Code> of an error body and the pages of
 * a listing. A leaf over text.c: the request core and the operations call
 * it, it calls neither. Nothing here touches libcurl or the network, so
 * the fuzz target (tests/fuzz/fuzz_s3.c) drives these functions with any
 * bytes.
 *
 * Every answer is taken as hostile: numbers are read strictly (digits
 * only, no overflow), a 206 must be exactly the range asked, a listed key
 * must lie under the prefix asked, and a text shown in a message is
 * escaped (remote_text_escape()) by remote_rq_fail() before anyone logs it. */
#include "remote/remote_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ---- numbers and dates ------------------------------------------------ */

int remote_dec_parse(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    if (n == 0 || n > 20)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* The calendar arithmetic both date forms need, in one place: Y-MON-D
 * H:MI:S UTC (MON 0..11; fields out of range are carried the way
 * timegm() carries them) as Unix seconds, 0 before 1970. */
static int64_t utc_seconds(int y, int mon, int d, int h, int mi, int sec)
{
    struct tm tm = {0};
    tm.tm_year = y - 1900;
    tm.tm_mon = mon;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    time_t t = timegm(&tm);
    return t < 0 ? 0 : (int64_t)t;
}

int64_t remote_http_date_parse(const char *s)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    char wday[4], mon[4], zone[4];
    int d, y, h, mi, sec;
    /* IMF-fixdate (RFC 9110), the only form S3 servers send:
     * "Sun, 06 Nov 1994 08:49:37 GMT" */
    if (sscanf(s, "%3[A-Za-z], %2d %3[A-Za-z] %4d %2d:%2d:%2d %3s", wday, &d, mon, &y, &h, &mi, &sec,
               zone) != 8 ||
        strcmp(zone, "GMT") != 0)
        return 0;
    const char *m = strstr(months, mon);
    if (!m || (m - months) % 3 != 0 || y < 1970 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        return 0;
    return utc_seconds(y, (int)((m - months) / 3), d, h, mi, sec);
}

int64_t remote_iso8601_parse(const char *s)
{
    int y, mo, d, h, mi, sec;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &sec) != 6)
        return 0;
    return utc_seconds(y, mo - 1, d, h, mi, sec);
}

/* ---- header lines ----------------------------------------------------- */

char *remote_hdr_value(const char *line, size_t n, const char *name)
{
    size_t k = strlen(name);
    if (n <= k || strncasecmp(line, name, k) != 0 || line[k] != ':')
        return NULL;
    const char *v = line + k + 1, *end = line + n;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
        end--;
    return strndup(v, (size_t)(end - v));
}

int remote_etag_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > REMOTE_ETAG_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
            return 0;
    return 1;
}

static uint64_t num_or_zero(const char *v)
{
    uint64_t x = 0;
    return remote_dec_parse(v, strlen(v), &x) == 0 ? x : 0;
}

void remote_hdr_info(remote_info *in, const char *line, size_t n, int *oom)
{
    char *v;
    if ((v = remote_hdr_value(line, n, "content-length"))) {
        in->length = num_or_zero(v);
    } else if ((v = remote_hdr_value(line, n, "last-modified"))) {
        in->mtime = remote_http_date_parse(v);
    } else if ((v = remote_hdr_value(line, n, "etag"))) {
        free(in->etag);
        in->etag = NULL;
        if (remote_etag_ok(v)) { /* else none: an ETag that cannot go into If-Match pins nothing */
            in->etag = v;
            return;
        }
    } else if ((v = remote_hdr_value(line, n, "x-amz-meta-tool"))) {
        free(in->tool);
        if (!(in->tool = remote_enc_decode(v, strlen(v))))
            *oom = 1;
    } else if ((v = remote_hdr_value(line, n, "x-amz-meta-call-id"))) {
        free(in->call_id);
        if (!(in->call_id = remote_enc_decode(v, strlen(v))))
            *oom = 1;
    } else if ((v = remote_hdr_value(line, n, "x-amz-meta-size"))) {
        in->size = num_or_zero(v);
    } else if ((v = remote_hdr_value(line, n, "x-amz-meta-created"))) {
        uint64_t c = num_or_zero(v);
        in->created = c <= (uint64_t)INT64_MAX ? (int64_t)c : 0;
    }
    free(v);
}

void remote_info_finish(remote_info *out)
{
    if (out->size < out->length)
        out->size = out->length;
    if (out->created == 0)
        out->created = out->mtime;
}

void remote_info_clear(remote_info *info)
{
    if (!info)
        return;
    free(info->etag);
    free(info->tool);
    free(info->call_id);
    memset(info, 0, sizeof *info);
}

/* ---- Content-Range ---------------------------------------------------- */

int remote_crange_parse(const char *v, crange *out)
{
    memset(out, 0, sizeof *out);
    if (strncasecmp(v, "bytes ", 6) != 0)
        return -1;
    const char *a = v + 6, *dash = strchr(a, '-'), *slash = dash ? strchr(dash, '/') : NULL;
    if (!dash || !slash || remote_dec_parse(a, (size_t)(dash - a), &out->first) ||
        remote_dec_parse(dash + 1, (size_t)(slash - dash - 1), &out->last))
        return -1;
    if (strcmp(slash + 1, "*") == 0)
        return 1; /* the length unknown: a form S3 never sends */
    if (remote_dec_parse(slash + 1, strlen(slash + 1), &out->total))
        return -1;
    out->known = 1;
    return 0;
}

int remote_crange_check(const char *v, uint64_t from, uint64_t to, crange *out, char *why, size_t whylen)
{
    char asked[64];
    if (to == UINT64_MAX)
        snprintf(asked, sizeof asked, "bytes=%llu-", (unsigned long long)from);
    else
        snprintf(asked, sizeof asked, "bytes=%llu-%llu", (unsigned long long)from,
                 (unsigned long long)to);
    if (!v || !*v) {
        snprintf(why, whylen, "a 206 answer to %s without a Content-Range", asked);
        return -1;
    }
    int rc = remote_crange_parse(v, out);
    if (rc < 0) {
        snprintf(why, whylen, "a malformed Content-Range '%s' answering %s", v, asked);
        return -1;
    }
    if (rc > 0) {
        snprintf(why, whylen, "Content-Range '%s' answering %s gives no object length", v, asked);
        return -1;
    }
    /* The range asked, cut at the object's end: nothing else will do. */
    uint64_t want_last = out->total ? out->total - 1 : 0;
    if (to < want_last)
        want_last = to;
    if (out->first != from || out->last != want_last || out->last < out->first ||
        out->last >= out->total) {
        snprintf(why, whylen, "the server answered Content-Range '%s' to %s", v, asked);
        return -1;
    }
    return 0;
}

/* ---- error bodies ----------------------------------------------------- */

void remote_s3_error_code(const char *body, size_t n, char *out, size_t cap)
{
    const char *p = body;
    int oom = 0;
    out[0] = '\0';
    if (!body || cap == 0)
        return;
    char *code = remote_xml_take(&p, body + n, "Code", &oom);
    if (code)
        snprintf(out, cap, "%s", code); /* remote_rq_fail() escapes it */
    free(code);
}

/* ---- listing pages ---------------------------------------------------- */

int remote_list_page_parse(const char *body, size_t n, const char *want, size_t strip, remote_list_fn fn,
                           void *arg, char **token, char *why, size_t whylen)
{
    const char *p = body ? body : "", *end = p + n, *s, *e;
    size_t wn = strlen(want);
    int oom = 0, rc = 0;
    *token = NULL;
    if (!memmem(p, n, "<ListBucketResult", 17)) {
        snprintf(why, whylen, "the answer is not a ListBucketResult");
        return REMOTE_EPROTO;
    }
    while (rc == 0 && !oom && remote_xml_next(&p, end, "Contents", &s, &e)) {
        const char *q = s;
        char *key = remote_xml_take(&q, e, "Key", &oom);
        q = s;
        char *size = remote_xml_take(&q, e, "Size", &oom);
        q = s;
        char *mod = remote_xml_take(&q, e, "LastModified", &oom);
        /* Only keys under the prefix asked are answers: a server that
         * lists others (shorter ones too) is not believed about them. */
        if (key && strlen(key) > wn && strncmp(key, want, wn) == 0)
            rc = fn(arg, key + strip, size ? num_or_zero(size) : 0, mod ? remote_iso8601_parse(mod) : 0);
        free(key);
        free(size);
        free(mod);
    }
    p = body ? body : "";
    char *trunc = oom ? NULL : remote_xml_take(&p, end, "IsTruncated", &oom);
    if (rc == 0 && !oom && trunc && strcmp(trunc, "true") == 0) {
        p = body;
        *token = remote_xml_take(&p, end, "NextContinuationToken", &oom);
        if (!oom && (!*token || !**token || strlen(*token) > REMOTE_TOKEN_MAX)) {
            snprintf(why, whylen, "a truncated listing without a usable continuation token");
            rc = REMOTE_EPROTO;
        }
    }
    free(trunc);
    if (oom || rc) {
        free(*token);
        *token = NULL;
    }
    return oom ? ENOMEM : rc;
}
