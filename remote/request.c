/* request.c -- one S3 request on a reused easy handle: URL, SigV4 signing
 * (libcurl's CURLOPT_AWS_SIGV4), bounds, retries with backoff, and the
 * mapping of answers to REMOTE_E* codes with a message that names the
 * operation and the object, never a credential. */
#include "remote/remote_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define RESP_CAP (16u << 20) /* a listing page is ~300 KiB; errors are small */

int rbuf_add(rbuf *b, const void *data, size_t n)
{
    size_t cap = b->cap ? b->cap : RESP_CAP;
    if (b->len + n > cap) {
        b->over = 1;
        n = cap - b->len;
    }
    if (b->len + n + 1 > b->size) {
        size_t sz = b->size ? b->size : 4096;
        while (sz < b->len + n + 1)
            sz *= 2;
        char *p = realloc(b->p, sz);
        if (!p)
            return ENOMEM;
        b->p = p;
        b->size = sz;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

void rbuf_free(rbuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

int remote_conn_new(remote_conn **out, remote *r)
{
    *out = NULL;
    remote_conn *c = calloc(1, sizeof *c);
    if (!c)
        return ENOMEM;
    c->r = r;
    c->h = r->cu->easy_init();
    if (!c->h) {
        free(c);
        return ENOMEM;
    }
    *out = c;
    return 0;
}

void remote_conn_free(remote_conn *c)
{
    if (!c)
        return;
    c->r->cu->easy_cleanup(c->h);
    free(c);
}

const char *remote_conn_message(const remote_conn *c) { return c->msg; }
unsigned remote_conn_attempts(const remote_conn *c) { return c->attempts; }

void rq_fail(remote_conn *c, const rq *q, const char *fmt, ...)
{
    const remote *r = c->r;
    int n = snprintf(c->msg, sizeof c->msg, "%s s3://%s%s%s%s%s: ", q->label, r->bucket,
                     *r->prefix || q->name ? "/" : "", r->prefix,
                     *r->prefix && q->name ? "/" : "", q->name ? q->name : "");
    if (n < 0 || (size_t)n >= sizeof c->msg)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg + n, sizeof c->msg - (size_t)n, fmt, ap);
    va_end(ap);
}

/* ---- URL -------------------------------------------------------------- */
int enc_add(rbuf *b, const char *s, int keep_slash)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        int plain = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
                    ch == '-' || ch == '.' || ch == '_' || ch == '~' || (keep_slash && ch == '/');
        char e[3] = {'%', hex[ch >> 4], hex[ch & 15]};
        int rc = plain ? rbuf_add(b, s, 1) : rbuf_add(b, e, 3);
        if (rc)
            return rc;
    }
    return 0;
}

static int build_url(const remote *r, const rq *q, rbuf *u)
{
    int rc = rbuf_add(u, r->endpoint, strlen(r->endpoint));
    if (!rc && !r->vhost) {
        rc = rbuf_add(u, "/", 1);
        if (!rc)
            rc = enc_add(u, r->bucket, 0);
    }
    if (!rc && q->name) {
        rc = rbuf_add(u, "/", 1);
        if (!rc && *r->prefix) {
            rc = enc_add(u, r->prefix, 1);
            if (!rc)
                rc = rbuf_add(u, "/", 1);
        }
        if (!rc)
            rc = enc_add(u, q->name, 1);
    } else if (!rc && r->vhost) {
        rc = rbuf_add(u, "/", 1);
    }
    if (!rc && q->query) {
        rc = rbuf_add(u, "?", 1);
        if (!rc)
            rc = rbuf_add(u, q->query, strlen(q->query));
    }
    return rc;
}

/* ---- callbacks -------------------------------------------------------- */
typedef struct att {
    remote_conn *c;
    rq *q;
    int oom;
} att;

static int status_ok(long s) { return s >= 200 && s < 300; }

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
    att *a = arg;
    rq *q = a->q;
    size_t n = size * nmemb;
    long status = 0;
    a->c->r->cu->easy_getinfo(a->c->h, CURLINFO_RESPONSE_CODE, &status);
    if (status_ok(status) && q->sink) {
        if (status == 200 && q->ranged && q->range_off + q->delivered > 0 && !q->range_ignored) {
            q->range_ignored = 1; /* the server sent the whole object */
            return 0;
        }
        if (q->sink(q->sink_arg, data, n) != 0) {
            q->sink_failed = 1;
            return 0;
        }
        q->delivered += n;
        return n;
    }
    if (rbuf_add(&q->resp, data, n) != 0) {
        a->oom = 1;
        return 0;
    }
    return n;
}

static size_t on_read(char *buf, size_t size, size_t nmemb, void *arg)
{
    rq *q = arg;
    size_t n = size * nmemb;
    if (q->src_len - q->src_pos < n)
        n = (size_t)(q->src_len - q->src_pos);
    if (n == 0)
        return 0;
    if (q->src(q->src_arg, q->src_off + q->src_pos, buf, n) != 0) {
        q->src_failed = 1;
        return CURL_READFUNC_ABORT;
    }
    q->src_pos += n;
    return n;
}

static char *header_value(const char *line, size_t n, const char *name)
{
    size_t k = strlen(name);
    if (n <= k + 1 || strncasecmp(line, name, k) != 0 || line[k] != ':')
        return NULL;
    const char *v = line + k + 1, *end = line + n;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
        end--;
    return strndup(v, (size_t)(end - v));
}

static void info_header(const rcurl_api *cu, remote_info *in, const char *line, size_t n, int *oom)
{
    char *v;
    if ((v = header_value(line, n, "content-length"))) {
        in->length = strtoull(v, NULL, 10);
    } else if ((v = header_value(line, n, "last-modified"))) {
        time_t t = cu->getdate(v, NULL);
        in->mtime = t > 0 ? (int64_t)t : 0;
    } else if ((v = header_value(line, n, "etag"))) {
        free(in->etag);
        in->etag = v;
        return;
    } else if ((v = header_value(line, n, "x-amz-meta-tool"))) {
        free(in->tool);
        if (!(in->tool = enc_decode(v, strlen(v))))
            *oom = 1;
    } else if ((v = header_value(line, n, "x-amz-meta-call-id"))) {
        free(in->call_id);
        if (!(in->call_id = enc_decode(v, strlen(v))))
            *oom = 1;
    } else if ((v = header_value(line, n, "x-amz-meta-size"))) {
        in->size = strtoull(v, NULL, 10);
    } else if ((v = header_value(line, n, "x-amz-meta-created"))) {
        in->created = strtoll(v, NULL, 10);
    }
    free(v);
}

static size_t on_header(char *line, size_t size, size_t nmemb, void *arg)
{
    att *a = arg;
    size_t n = size * nmemb;
    rq *q = a->q;
    char *etag;
    if (n >= 5 && strncmp(line, "HTTP/", 5) == 0 && q->info) {
        /* a new answer (after a 100 Continue too): start over */
        remote_info_clear(q->info);
        q->range_total = 0;
    } else if (q->info && (etag = header_value(line, n, "content-range"))) {
        const char *slash = strchr(etag, '/'); /* "bytes FIRST-LAST/TOTAL" */
        q->range_total = slash ? strtoull(slash + 1, NULL, 10) : 0;
        free(etag);
    } else if (q->info) {
        info_header(a->c->r->cu, q->info, line, n, &a->oom);
    }
    if (q->ranged && !q->etag[0] && (etag = header_value(line, n, "etag"))) {
        snprintf(q->etag, sizeof q->etag, "%s", etag);
        free(etag);
    }
    return n;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The stall limit. CURLOPT_LOW_SPEED_* averages over a window of seconds,
 * so a burst into the socket buffers (a PUT to a stopped server) keeps it
 * quiet for seconds more; this ends an attempt stall_s after the last
 * byte moved either way. */
static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    att *a = arg;
    rq *q = a->q;
    double t = now_s();
    (void)dltotal;
    (void)ultotal;
    if (dlnow + ulnow != q->moved || q->moved_at == 0) {
        q->moved = dlnow + ulnow;
        q->moved_at = t;
        return 0;
    }
    if (t - q->moved_at >= (double)a->c->r->opt.stall_s) {
        q->stalled = 1;
        return 1;
    }
    return 0;
}

/* ---- one attempt ------------------------------------------------------ */
static struct curl_slist *attempt_headers(const remote_conn *c, const rq *q, int *oom)
{
    const rcurl_api *cu = c->r->cu;
    struct curl_slist *h = NULL, *t;
    char range[80];
    /* curl 7.88 signs no payload hash: radosgw (and AWS) want this one.
     * (An empty "Expect:" to drop 100-continue breaks the signature: curl
     * signs the header it then leaves out.) */
    if ((t = cu->slist_append(h, "x-amz-content-sha256: UNSIGNED-PAYLOAD")))
        h = t;
    else
        *oom = 1;
    if (c->r->token) {
        size_t n = strlen(c->r->token) + 32;
        char *s = malloc(n);
        if (s) {
            snprintf(s, n, "x-amz-security-token: %s", c->r->token);
            if ((t = cu->slist_append(h, s)))
                h = t;
            else
                *oom = 1;
            memset(s, 0, n);
        } else
            *oom = 1;
        free(s);
    }
    if (q->ranged) {
        uint64_t from = q->range_off + q->delivered;
        if (q->range_len == UINT64_MAX)
            snprintf(range, sizeof range, "Range: bytes=%llu-", (unsigned long long)from);
        else
            snprintf(range, sizeof range, "Range: bytes=%llu-%llu", (unsigned long long)from,
                     (unsigned long long)(q->range_off + q->range_len - 1));
        if ((t = cu->slist_append(h, range)))
            h = t;
        else
            *oom = 1;
        if ((q->delivered > 0 || q->must_match) && q->etag[0]) { /* the same version only */
            char im[160];
            snprintf(im, sizeof im, "If-Match: %s", q->etag);
            if ((t = cu->slist_append(h, im)))
                h = t;
            else
                *oom = 1;
        }
    }
    for (const struct curl_slist *e = q->headers; e; e = e->next)
        if ((t = cu->slist_append(h, e->data)))
            h = t;
        else
            *oom = 1;
    return h;
}

static void attempt_setup(remote_conn *c, rq *q, att *a, const char *url, struct curl_slist *h)
{
    CURL *e = c->h;
    const remote_options *o = &c->r->opt;
    CURLcode (*set)(CURL *, CURLoption, ...) = c->r->cu->easy_setopt;
    c->r->cu->easy_reset(e);
    set(e, CURLOPT_URL, url);
    set(e, CURLOPT_AWS_SIGV4, c->r->sigv4);
    set(e, CURLOPT_USERNAME, c->r->access);
    set(e, CURLOPT_PASSWORD, c->r->secret);
    set(e, CURLOPT_HTTPHEADER, h);
    set(e, CURLOPT_ERRORBUFFER, c->errbuf);
    set(e, CURLOPT_NOSIGNAL, 1L);
    set(e, CURLOPT_TCP_NODELAY, 1L);
    set(e, CURLOPT_CONNECTTIMEOUT_MS, (long)o->connect_ms);
    set(e, CURLOPT_LOW_SPEED_LIMIT, (long)REMOTE_STALL_BYTES);
    set(e, CURLOPT_LOW_SPEED_TIME, (long)o->stall_s);
    set(e, CURLOPT_PROTOCOLS_STR, "http,https");
    set(e, CURLOPT_EXPECT_100_TIMEOUT_MS, 200L);
    set(e, CURLOPT_WRITEFUNCTION, on_body);
    set(e, CURLOPT_WRITEDATA, a);
    set(e, CURLOPT_HEADERFUNCTION, on_header);
    set(e, CURLOPT_HEADERDATA, a);
    set(e, CURLOPT_NOPROGRESS, 0L);
    set(e, CURLOPT_XFERINFOFUNCTION, on_progress);
    set(e, CURLOPT_XFERINFODATA, a);
    if (strcmp(q->method, "HEAD") == 0) {
        set(e, CURLOPT_NOBODY, 1L);
    } else if (strcmp(q->method, "PUT") == 0) {
        set(e, CURLOPT_UPLOAD, 1L);
        set(e, CURLOPT_READFUNCTION, on_read);
        set(e, CURLOPT_READDATA, q);
        set(e, CURLOPT_INFILESIZE_LARGE, (curl_off_t)q->src_len);
    } else if (strcmp(q->method, "POST") == 0) {
        set(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)q->body_len);
        set(e, CURLOPT_POSTFIELDS, q->body ? q->body : "");
    } else if (strcmp(q->method, "GET") != 0) {
        set(e, CURLOPT_CUSTOMREQUEST, q->method);
    }
}

/* The S3 error code of an error body ("NoSuchKey"), or "". */
static void error_code(const rbuf *b, char *out, size_t n)
{
    out[0] = '\0';
    if (!b->p)
        return;
    const char *p = b->p;
    int oom = 0;
    char *code = xml_take(&p, b->p + b->len, "Code", &oom);
    if (code)
        snprintf(out, n, "%s", code);
    free(code);
}

enum { A_OK, A_RETRY, A_FAIL };

/* Classifies one finished attempt; on A_FAIL sets *RC and the message. */
static int attempt_verdict(remote_conn *c, rq *q, CURLcode cc, att *a, int *rc)
{
    if (a->oom) {
        *rc = ENOMEM;
        rq_fail(c, q, "out of memory");
        return A_FAIL;
    }
    if (q->range_ignored) {
        *rc = REMOTE_EPROTO;
        rq_fail(c, q, "the server ignored the Range header");
        return A_FAIL;
    }
    if (q->sink_failed || q->src_failed) {
        *rc = REMOTE_ESOURCE;
        rq_fail(c, q, "the %s failed", q->sink_failed ? "reader" : "data source");
        return A_FAIL;
    }
    if (q->stalled) {
        *rc = REMOTE_EDOWN;
        rq_fail(c, q, "stalled, nothing moved for %u s", c->r->opt.stall_s);
        return A_RETRY;
    }
    if (cc != CURLE_OK) {
        int fatal = cc == CURLE_URL_MALFORMAT || cc == CURLE_UNSUPPORTED_PROTOCOL ||
                    cc == CURLE_OUT_OF_MEMORY;
        *rc = cc == CURLE_OUT_OF_MEMORY ? ENOMEM : REMOTE_EDOWN;
        rq_fail(c, q, "%s (curl %d)", c->errbuf[0] ? c->errbuf : c->r->cu->easy_strerror(cc), (int)cc);
        return fatal ? A_FAIL : A_RETRY;
    }
    c->r->cu->easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &q->status);
    if (status_ok(q->status) || (q->ranged && q->status == 416))
        return A_OK;
    char code[64];
    error_code(&q->resp, code, sizeof code);
    rq_fail(c, q, "HTTP %ld%s%s", q->status, code[0] ? " " : "", code);
    if (q->status == 429 || q->status >= 500) {
        *rc = REMOTE_EDOWN;
        return A_RETRY;
    }
    if (q->status == 412 && (q->delivered > 0 || q->must_match)) {
        *rc = REMOTE_ECHANGED;
        rq_fail(c, q, "the object was replaced%s", q->delivered ? " during the read" : "");
        return A_FAIL;
    }
    if (q->status == 404)
        *rc = strcmp(code, "NoSuchBucket") == 0 ? REMOTE_ENOBUCKET : REMOTE_ENOTFOUND;
    else if (q->status == 401 || q->status == 403)
        *rc = REMOTE_EDENIED;
    else
        *rc = REMOTE_EPROTO;
    return A_FAIL;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int rq_run(remote_conn *c, rq *q)
{
    rbuf url = {0};
    c->msg[0] = '\0';
    c->attempts = 0;
    q->must_match = q->etag[0] != '\0'; /* set by the caller: If-Match from the start */
    int rc = build_url(c->r, q, &url);
    if (rc)
        return rc;
    unsigned backoff = c->r->opt.backoff_ms;
    for (unsigned i = 0;; i++) {
        att a = {c, q, 0};
        int oom = 0;
        struct curl_slist *h = attempt_headers(c, q, &oom);
        rbuf_free(&q->resp);
        q->src_pos = 0;
        q->status = 0;
        q->stalled = 0;
        q->moved = 0;
        q->moved_at = 0;
        c->errbuf[0] = '\0';
        c->attempts++;
        attempt_setup(c, q, &a, url.p, h);
        CURLcode cc = oom ? CURLE_OUT_OF_MEMORY : c->r->cu->easy_perform(c->h);
        c->r->cu->slist_free_all(h);
        int v = attempt_verdict(c, q, cc, &a, &rc);
        if (v == A_OK) {
            c->msg[0] = '\0';
            rc = 0;
            break;
        }
        if (v == A_FAIL || i >= c->r->opt.retries)
            break;
        sleep_ms(backoff);
        backoff *= 4;
    }
    if (rc && c->attempts > 1) {
        size_t n = strlen(c->msg);
        snprintf(c->msg + n, sizeof c->msg - n, ", %u attempts", c->attempts);
    }
    rbuf_free(&url);
    return rc;
}
