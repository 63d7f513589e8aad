/* request.c -- the request core of remote/: one S3 request on a reused
 * easy handle: URL, headers, SigV4 signing (libcurl's CURLOPT_AWS_SIGV4),
 * bounds, retries with backoff, and the mapping of answers to REMOTE_E*
 * codes with a message that names the operation and the object, never a
 * credential. Every operation (put.c, multipart.c, get.c, head.c,
 * delete.c, list.c) runs its requests through remote_rq_run(); this file
 * calls none of them, only the leaves (text.c, answer.c), common/ and
 * remote_strerror() (config.c). */
#include "remote/remote_int.h"
#include "common/clock.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

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

/* The message may quote the server (an error code, a Content-Range, a
 * token): it is escaped whole, so no answer writes control characters
 * into a log. */
void remote_rq_fail(remote_conn *c, const rq *q, const char *fmt, ...)
{
    const remote *r = c->r;
    char raw[REMOTE_MSG_MAX];
    int n = snprintf(raw, sizeof raw, "%s s3://%s%s%s%s%s: ", q->label, r->bucket,
                     *r->prefix || q->name ? "/" : "", r->prefix,
                     *r->prefix && q->name ? "/" : "", q->name ? q->name : "");
    if (n >= 0 && (size_t)n < sizeof raw) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(raw + n, sizeof raw - (size_t)n, fmt, ap);
        va_end(ap);
    }
    remote_text_escape(c->msg, sizeof c->msg, raw);
}

/* ---- headers ---------------------------------------------------------- */
static int add_header(const rcurl_api *cu, struct curl_slist **h, const char *name, const char *value,
                      int encode)
{
    common_buf b = {0};
    common_buf_adds(&b, name);
    common_buf_adds(&b, ": ");
    if (encode)
        remote_enc_add(&b, value, 0);
    else
        common_buf_adds(&b, value);
    struct curl_slist *t = b.failed ? NULL : cu->slist_append(*h, b.p);
    common_buf_release(&b);
    if (!t)
        return ENOMEM;
    *h = t;
    return 0;
}

int remote_rq_meta_headers(const remote_conn *c, struct curl_slist **h, const remote_meta *m)
{
    char num[32];
    int rc = 0;
    if (!m)
        return 0;
    if (m->tool)
        rc = add_header(c->r->cu, h, "x-amz-meta-tool", m->tool, 1);
    if (!rc && m->call_id)
        rc = add_header(c->r->cu, h, "x-amz-meta-call-id", m->call_id, 1);
    snprintf(num, sizeof num, "%llu", (unsigned long long)m->size);
    if (!rc)
        rc = add_header(c->r->cu, h, "x-amz-meta-size", num, 0);
    snprintf(num, sizeof num, "%lld", (long long)m->created);
    if (!rc)
        rc = add_header(c->r->cu, h, "x-amz-meta-created", num, 0);
    return rc;
}

/* ---- URL -------------------------------------------------------------- */
/* Returns 0, or ENOMEM (U failed). */
static int build_url(const remote *r, const rq *q, common_buf *u)
{
    common_buf_adds(u, r->endpoint);
    if (!r->vhost) {
        common_buf_addc(u, '/');
        remote_enc_add(u, r->bucket, 0);
    }
    if (q->name) {
        common_buf_addc(u, '/');
        if (*r->prefix) {
            remote_enc_add(u, r->prefix, 1);
            common_buf_addc(u, '/');
        }
        remote_enc_add(u, q->name, 1);
    } else if (r->vhost) {
        common_buf_addc(u, '/');
    }
    if (q->query) {
        common_buf_addc(u, '?');
        common_buf_adds(u, q->query);
    }
    return u->failed ? ENOMEM : 0;
}

/* ---- callbacks -------------------------------------------------------- */
typedef struct att {
    remote_conn *c;
    rq *q;
    int oom;
} att;

static int status_ok(long s) { return s >= 200 && s < 300; }

/* Checks this attempt's 206 against the range it asked for (answer.c):
 * 0, or -1 with q->bad set. Every 206 of one request must give the same
 * object length. */
static int range_answer_ok(rq *q)
{
    uint64_t to = q->range_len == UINT64_MAX ? UINT64_MAX : q->range_off + q->range_len - 1;
    q->range_checked = 1;
    if (remote_crange_check(q->crange, q->att_from, to, &q->cr, q->bad, sizeof q->bad))
        return -1;
    if (q->total_seen && q->cr.total != q->total_seen) {
        snprintf(q->bad, sizeof q->bad, "the object's length changed from %llu to %llu (Content-Range '%s')",
                 (unsigned long long)q->total_seen, (unsigned long long)q->cr.total, q->crange);
        return -1;
    }
    q->total_seen = q->range_total = q->cr.total;
    return 0;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
    att *a = arg;
    rq *q = a->q;
    size_t n = size * nmemb;
    long status = 0;
    a->c->r->cu->easy_getinfo(a->c->h, CURLINFO_RESPONSE_CODE, &status);
    if (status_ok(status) && q->sink) {
        if (status == 206 && q->ranged && !q->range_checked && range_answer_ok(q) != 0)
            return 0; /* not the bytes asked for: none reach the sink */
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
    size_t keep = n;
    if (keep > REMOTE_RESP_CAP - q->resp.len) {
        q->resp_over = 1; /* the rest is dropped, not kept */
        keep = REMOTE_RESP_CAP - q->resp.len;
    }
    common_buf_add(&q->resp, data, keep);
    if (q->resp.failed) {
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

static size_t on_header(char *line, size_t size, size_t nmemb, void *arg)
{
    att *a = arg;
    size_t n = size * nmemb;
    rq *q = a->q;
    char *etag;
    if (n >= 5 && strncmp(line, "HTTP/", 5) == 0) {
        /* a new answer (after a 100 Continue too): start over */
        if (q->info)
            remote_info_clear(q->info);
        q->crange[0] = '\0';
    } else if ((etag = remote_hdr_value(line, n, "content-range"))) {
        if (strlen(etag) < sizeof q->crange)
            memcpy(q->crange, etag, strlen(etag) + 1);
        else /* too long to be a range of ours: refused as malformed */
            snprintf(q->crange, sizeof q->crange, "%.60s...", etag);
        free(etag);
    } else if (q->info) {
        remote_hdr_info(q->info, line, n, &a->oom);
    }
    if (q->ranged && !q->etag[0] && (etag = remote_hdr_value(line, n, "etag"))) {
        if (remote_etag_ok(etag)) /* else none: a resumed read then stops (remote_rq_run) */
            memcpy(q->etag, etag, strlen(etag) + 1);
        free(etag);
    }
    return n;
}

/* The operation's own bounds (a listing's deadline, its caller's stop):
 * 0 to go on, else the value to end with (kept in q->stopped). */
int remote_rq_bounds(rq *q)
{
    if (!q->stopped && q->stop)
        q->stopped = q->stop(q->stop_arg);
    if (!q->stopped && q->deadline_ns && common_clock_ns() >= q->deadline_ns)
        q->stopped = REMOTE_ELIMIT;
    return q->stopped;
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
    double t = (double)common_clock_ns() / 1e9; /* monotonic seconds */
    (void)dltotal;
    (void)ultotal;
    if (remote_rq_bounds(q)) /* libcurl calls this at least once a second */
        return 1;
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
    set(e, CURLOPT_BUFFERSIZE, REMOTE_RECV_BUF);
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

enum { A_OK, A_RETRY, A_FAIL };

/* A 206 that came whole: its Content-Range was the range asked (checked
 * here when no body byte came) and the body is exactly that long. */
static int range_verdict(remote_conn *c, rq *q, int *rc)
{
    uint64_t got = q->delivered - q->att_delivered;
    if (!q->range_checked && range_answer_ok(q) != 0) {
        *rc = REMOTE_EPROTO;
        remote_rq_fail(c, q, "%s", q->bad);
        return A_FAIL;
    }
    if (got != q->cr.last - q->cr.first + 1) {
        *rc = REMOTE_EPROTO;
        remote_rq_fail(c, q, "%llu bytes came for Content-Range '%s'", (unsigned long long)got, q->crange);
        return A_FAIL;
    }
    return A_OK;
}

/* Classifies one finished attempt; on A_FAIL sets *RC and the message. */
static int attempt_verdict(remote_conn *c, rq *q, CURLcode cc, att *a, int *rc)
{
    if (a->oom) {
        *rc = ENOMEM;
        remote_rq_fail(c, q, "out of memory");
        return A_FAIL;
    }
    if (q->stopped) {
        *rc = q->stopped;
        if (q->stopped == REMOTE_ELIMIT)
            remote_rq_fail(c, q, "not finished within its time bound");
        else
            remote_rq_fail(c, q, "stopped by its caller (%s)", remote_strerror(q->stopped));
        return A_FAIL;
    }
    if (q->bad[0]) {
        *rc = REMOTE_EPROTO;
        remote_rq_fail(c, q, "%s", q->bad);
        return A_FAIL;
    }
    if (q->range_ignored) {
        *rc = REMOTE_EPROTO;
        remote_rq_fail(c, q, "the server ignored the Range header");
        return A_FAIL;
    }
    if (q->sink_failed || q->src_failed) {
        *rc = REMOTE_ESOURCE;
        remote_rq_fail(c, q, "the %s failed", q->sink_failed ? "reader" : "data source");
        return A_FAIL;
    }
    if (q->stalled) {
        *rc = REMOTE_EDOWN;
        remote_rq_fail(c, q, "stalled, nothing moved for %u s", c->r->opt.stall_s);
        return A_RETRY;
    }
    if (cc != CURLE_OK) {
        int fatal = cc == CURLE_URL_MALFORMAT || cc == CURLE_UNSUPPORTED_PROTOCOL ||
                    cc == CURLE_OUT_OF_MEMORY;
        *rc = cc == CURLE_OUT_OF_MEMORY ? ENOMEM : REMOTE_EDOWN;
        remote_rq_fail(c, q, "%s (curl %d)", c->errbuf[0] ? c->errbuf : c->r->cu->easy_strerror(cc), (int)cc);
        return fatal ? A_FAIL : A_RETRY;
    }
    c->r->cu->easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &q->status);
    if (q->status == 206 && q->ranged)
        return range_verdict(c, q, rc);
    if (status_ok(q->status) || (q->ranged && q->status == 416))
        return A_OK;
    char code[64];
    remote_s3_error_code(q->resp.p, q->resp.len, code, sizeof code);
    remote_rq_fail(c, q, "HTTP %ld%s%s", q->status, code[0] ? " " : "", code);
    if (q->status == 429 || q->status >= 500) {
        *rc = REMOTE_EDOWN;
        return A_RETRY;
    }
    if (q->status == 412 && (q->delivered > 0 || q->must_match)) {
        *rc = REMOTE_ECHANGED;
        remote_rq_fail(c, q, "the object was replaced%s", q->delivered ? " during the read" : "");
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

int remote_rq_run(remote_conn *c, rq *q)
{
    common_buf url = {0};
    c->msg[0] = '\0';
    c->attempts = 0;
    q->must_match = q->etag[0] != '\0'; /* set by the caller: If-Match from the start */
    int rc = build_url(c->r, q, &url);
    if (rc) {
        remote_rq_fail(c, q, "out of memory");
        common_buf_release(&url);
        return rc;
    }
    unsigned backoff = c->r->opt.backoff_ms;
    for (unsigned i = 0;; i++) {
        att a = {c, q, 0};
        int oom = 0;
        struct curl_slist *h = attempt_headers(c, q, &oom);
        common_buf_release(&q->resp);
        q->resp.failed = 0;
        q->resp_over = 0;
        q->src_pos = 0;
        q->status = 0;
        q->stalled = 0;
        q->moved = 0;
        q->moved_at = 0;
        q->att_from = q->range_off + q->delivered;
        q->att_delivered = q->delivered;
        q->range_checked = 0;
        q->crange[0] = '\0';
        q->bad[0] = '\0';
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
        if (v == A_FAIL || i >= c->r->opt.retries || remote_rq_bounds(q))
            break;
        if (q->ranged && q->delivered > 0 && !q->etag[0]) {
            /* Nothing pins the version the bytes so far came from: a
             * resumed GET could append another's. */
            size_t n = strlen(c->msg);
            snprintf(c->msg + n, sizeof c->msg - n, "; not resumed: the answer had no usable ETag");
            break;
        }
        sleep_ms(backoff);
        backoff *= 4;
    }
    if (rc && c->attempts > 1) {
        size_t n = strlen(c->msg);
        snprintf(c->msg + n, sizeof c->msg - n, ", %u attempts", c->attempts);
    }
    common_buf_release(&url);
    return rc;
}

int remote_rq_head(remote_conn *c, const char *name, remote_info *out)
{
    memset(out, 0, sizeof *out);
    rq q = {.label = "HEAD", .method = "HEAD", .name = name, .info = out};
    int rc = remote_rq_run(c, &q);
    common_buf_release(&q.resp);
    if (rc) {
        remote_info_clear(out);
        return rc;
    }
    remote_info_finish(out);
    return 0;
}
