/* request.c -- remote/remote.h over the in-memory buckets of bucket.c:
 * the same functions with the same codes, messages, retries and bounds
 * as remote/ gives against S3, so that tier/ and fs/ linked with
 * libremote_mem.a behave as they do against radosgw, minus the network.
 * Each operation is a loop of attempts (run()): the faults of the bucket
 * decide an attempt's fate first (hook, delay or stall, error), then the
 * operation's own attempt function answers from the bucket. */
#include "remote/mem/mem_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MSG_MAX 512
#define PIECE 16384u /* bytes handed to a sink at once (libcurl's write size) */

struct remote {
    char *bucket, *prefix; /* prefix "" or "a/b" */
    remote_options opt;
};

struct remote_conn {
    remote *r;
    unsigned attempts;
    char msg[MSG_MAX];
};

/* One operation: what run() needs to retry and bound it. */
typedef struct rq {
    const char *label;    /* in messages: "PUT", "GET", "LIST", ... */
    remote_mem_op op;
    const char *name;     /* relative name, NULL for a listing */
    const char *match;    /* what faults match: the name, or the listing's prefix */
    int retry;            /* the last attempt failed transiently */
    /* a ranged GET */
    char etag[128];       /* pinned version ("" none yet) */
    int must_match;       /* the caller gave the ETag */
    uint64_t delivered;   /* bytes handed to the sink over every attempt */
    /* a listing's bounds */
    uint64_t deadline_ns;
    int (*stop)(void *arg);
    void *stop_arg;
    int stopped;
} rq;

typedef int (*attempt_fn)(remote_conn *c, rq *q, const mem_act *a, void *ctx);

/* ---- messages, strings ------------------------------------------------ */
static void fail(remote_conn *c, const rq *q, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(remote_conn *c, const rq *q, const char *fmt, ...)
{
    const remote *r = c->r;
    int n = snprintf(c->msg, sizeof c->msg, "%s s3://%s%s%s%s%s: ", q->label, r->bucket,
                     *r->prefix || q->name ? "/" : "", r->prefix, *r->prefix && q->name ? "/" : "",
                     q->name ? q->name : "");
    if (n >= 0 && (size_t)n < sizeof c->msg) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->msg + n, sizeof c->msg - (size_t)n, fmt, ap);
        va_end(ap);
    }
}

const char *remote_strerror(int err)
{
    switch (err) {
    case 0: return "success";
    case REMOTE_ENOTFOUND: return "no such object on the remote";
    case REMOTE_ENOBUCKET: return "no such bucket on the remote";
    case REMOTE_EDENIED: return "the remote refused the credentials or the access";
    case REMOTE_EDOWN: return "the remote is unreachable or not answering";
    case REMOTE_ECONFIG: return "bad remote configuration";
    case REMOTE_EPROTO: return "unexpected answer from the remote";
    case REMOTE_ESOURCE: return "the data source or sink failed";
    case REMOTE_ECHANGED: return "the object was replaced on the remote";
    case REMOTE_ELIMIT: return "the remote's listing went past its bound of pages or time";
    default: return err > 0 ? strerror(err) : "unknown remote error";
    }
}

int remote_err_transient(int err) { return err == REMOTE_EDOWN; }

/* The full key of NAME: "PREFIX/NAME" or NAME; NULL without memory. */
static char *full_key(const remote *r, const char *name)
{
    size_t n = strlen(r->prefix) + strlen(name) + 2;
    char *k = malloc(n);
    if (k)
        snprintf(k, n, "%s%s%s", r->prefix, *r->prefix ? "/" : "", name);
    return k;
}

/* ---- opening ---------------------------------------------------------- */
/* remote/config.c's rules for an s3:// URL. */
static int url_split(const char *url, char **bucket, char **prefix, char *msg, size_t msglen)
{
    *bucket = *prefix = NULL;
    if (!url || strncmp(url, "s3://", 5) != 0) {
        if (msg && msglen)
            snprintf(msg, msglen, "remote '%s' does not start with s3://", url ? url : "");
        return REMOTE_ECONFIG;
    }
    const char *b = url + 5, *slash = strchr(b, '/');
    size_t bn = slash ? (size_t)(slash - b) : strlen(b);
    int ok = bn >= 3 && bn <= 63;
    for (size_t i = 0; ok && i < bn; i++) {
        int alnum = (b[i] >= 'a' && b[i] <= 'z') || (b[i] >= '0' && b[i] <= '9');
        ok = alnum || ((b[i] == '.' || b[i] == '-' || b[i] == '_') && i != 0 && i != bn - 1);
    }
    if (!ok) {
        if (msg && msglen)
            snprintf(msg, msglen, "remote '%s': bucket name '%.*s' is not 3-63 of a-z, 0-9, '.', '-'", url,
                     (int)bn, b);
        return REMOTE_ECONFIG;
    }
    const char *p = slash ? slash : b + bn;
    while (*p == '/')
        p++;
    size_t pn = strlen(p);
    while (pn > 0 && p[pn - 1] == '/')
        pn--;
    for (size_t i = 0; i < pn; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch < 0x20 || ch == 0x7f || (ch == '/' && p[i + 1] == '/')) {
            if (msg && msglen)
                snprintf(msg, msglen, "remote '%s': the prefix holds a control character or '//'", url);
            return REMOTE_ECONFIG;
        }
    }
    *bucket = strndup(b, bn);
    *prefix = strndup(p, pn);
    if (!*bucket || !*prefix) {
        free(*bucket);
        free(*prefix);
        *bucket = *prefix = NULL;
        return ENOMEM;
    }
    return 0;
}

int remote_url_check(const char *url, char *msg, size_t msglen)
{
    char *b, *p;
    int rc = url_split(url, &b, &p, msg, msglen);
    free(b);
    free(p);
    return rc;
}

static unsigned env_uint(const char *name, unsigned long max)
{
    const char *v = getenv(name);
    char *end;
    unsigned long n = v && *v ? strtoul(v, &end, 10) : 0;
    return v && *v && !*end && v[0] != '-' && n <= max ? (unsigned)n : 0;
}

/* remote/config.c's defaults, with the same two variables. */
static void options_fill(remote_options *o, const remote_options *in)
{
    const char *rv = getenv("OFFLOADFS_REMOTE_RETRIES");
    if (in)
        *o = *in;
    if (!o->stall_s)
        o->stall_s = env_uint("OFFLOADFS_REMOTE_STALL_SECONDS", 3600);
    if (!o->retries && rv && *rv)
        o->retries = env_uint("OFFLOADFS_REMOTE_RETRIES", 10) ? env_uint("OFFLOADFS_REMOTE_RETRIES", 10)
                                                             : REMOTE_NO_RETRY;
    if (!o->connect_ms)
        o->connect_ms = 1000;
    if (!o->stall_s)
        o->stall_s = 2;
    if (!o->retries)
        o->retries = 2;
    else if (o->retries == REMOTE_NO_RETRY)
        o->retries = 0;
    if (!o->backoff_ms)
        o->backoff_ms = 100;
    if (!o->part_bytes)
        o->part_bytes = 16ull << 20;
    if (o->part_bytes < (5ull << 20))
        o->part_bytes = 5ull << 20;
    if (!o->multipart_over)
        o->multipart_over = 32ull << 20;
    if (!o->list_page || o->list_page > 1000)
        o->list_page = 1000;
}

int remote_open(remote **out, const char *url, const remote_options *opt, char *msg, size_t msglen)
{
    *out = NULL;
    if (msg && msglen)
        msg[0] = '\0';
    remote *r = calloc(1, sizeof *r);
    if (!r)
        return ENOMEM;
    int rc = url_split(url, &r->bucket, &r->prefix, msg, msglen);
    if (rc) {
        free(r);
        return rc;
    }
    options_fill(&r->opt, opt);
    *out = r;
    return 0;
}

void remote_close(remote *r)
{
    if (!r)
        return;
    free(r->bucket);
    free(r->prefix);
    free(r);
}

const char *remote_bucket(const remote *r) { return r->bucket; }
const char *remote_prefix(const remote *r) { return r->prefix; }
const char *remote_endpoint(const remote *r)
{
    (void)r;
    return "mem://in-process";
}

/* remote/config.c's bound, from the same options. */
uint64_t remote_bound_ms(const remote *r)
{
    const remote_options *o = &r->opt;
    uint64_t per = (uint64_t)o->connect_ms + 1000ull * o->stall_s, total = per, back = o->backoff_ms;
    for (unsigned i = 0; i < o->retries; i++, back *= 4)
        total += per + back;
    return total;
}

int remote_conn_new(remote_conn **out, remote *r)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return ENOMEM;
    (*out)->r = r;
    return 0;
}

void remote_conn_free(remote_conn *c) { free(c); }
const char *remote_conn_message(const remote_conn *c) { return c->msg; }
unsigned remote_conn_attempts(const remote_conn *c) { return c->attempts; }

/* ---- the attempt loop ------------------------------------------------- */
static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(uint64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* The operation's own bounds, as remote/request.c's rq_bounds(). */
static int bounds(rq *q)
{
    if (!q->stopped && q->stop)
        q->stopped = q->stop(q->stop_arg);
    if (!q->stopped && q->deadline_ns && now_ns() >= q->deadline_ns)
        q->stopped = REMOTE_ELIMIT;
    return q->stopped;
}

static int stopped_fail(remote_conn *c, rq *q)
{
    if (q->stopped == REMOTE_ELIMIT)
        fail(c, q, "not finished within its time bound");
    else
        fail(c, q, "stopped by its caller (%s)", remote_strerror(q->stopped));
    return q->stopped;
}

/* The wait before the first byte: 0; the bounds' value; or, at the stall
 * limit, REMOTE_EDOWN after stall_s (transient) as libcurl's progress
 * check aborts a transfer where nothing moved. The bounds are asked every
 * 100 ms, as remote/request.c asks them at least once a second. */
static int first_byte(remote_conn *c, rq *q, unsigned ms)
{
    uint64_t limit = 1000ull * c->r->opt.stall_s, wait = ms < limit ? ms : limit;
    uint64_t end = now_ns() + wait * 1000000u;
    for (uint64_t t; (t = now_ns()) < end;) {
        if (bounds(q))
            return stopped_fail(c, q);
        uint64_t left = (end - t) / 1000000u + 1;
        sleep_ms(left < 100 ? left : 100);
    }
    if (ms < limit)
        return 0;
    q->retry = 1;
    fail(c, q, "stalled, nothing moved for %u s", c->r->opt.stall_s);
    return REMOTE_EDOWN;
}

static int injected(remote_conn *c, rq *q, int err)
{
    static const struct { int err; const char *what; } http[] = {
        {REMOTE_ENOTFOUND, "HTTP 404 NoSuchKey"}, {REMOTE_ENOBUCKET, "HTTP 404 NoSuchBucket"},
        {REMOTE_EDENIED, "HTTP 403 AccessDenied"}, {REMOTE_EDOWN, "HTTP 503 ServiceUnavailable"},
        {REMOTE_EPROTO, "HTTP 400 InvalidRequest"}, {REMOTE_ECHANGED, "HTTP 412 PreconditionFailed"}};
    const char *what = remote_strerror(err);
    for (size_t i = 0; i < sizeof http / sizeof http[0]; i++)
        if (http[i].err == err)
            what = http[i].what;
    fail(c, q, "%s (injected)", what);
    q->retry = err == REMOTE_EDOWN;
    return err;
}

static int one_attempt(remote_conn *c, rq *q, attempt_fn fn, void *ctx)
{
    mem_act a;
    remote_mem_lock();
    int rc = remote_mem_attempt(c->r->bucket, q->op, q->match, &a);
    remote_mem_unlock();
    if (rc) {
        fail(c, q, "out of memory");
        return rc;
    }
    if (a.hook && (rc = a.hook(a.hook_arg, q->op, q->match)))
        rc = injected(c, q, rc);
    if (!rc && a.delay_ms)
        rc = first_byte(c, q, a.delay_ms);
    if (!rc && a.err)
        rc = injected(c, q, a.err);
    if (!rc)
        rc = fn(c, q, &a, ctx);
    if (a.replace && q->name) { /* another host's write, after this answer */
        char *key = full_key(c->r, q->name);
        mem_obj *o = key ? remote_mem_obj_new(a.replace, NULL, a.replace_len, NULL, 0, 0) : NULL;
        remote_mem_lock();
        remote_mem *m = remote_mem_find(c->r->bucket);
        int set = o && m ? remote_mem_obj_set(m, key, o) == 0 : 0;
        remote_mem_unlock();
        if (!set)
            remote_mem_obj_unref(o);
        free(key);
    }
    free(a.replace);
    return rc;
}

/* Runs Q's attempts: retries a transient failure up to the options'
 * retries with the growing backoff, unless the bounds end it; sets the
 * connection's attempts and message as remote/request.c's rq_run(). */
static int run(remote_conn *c, rq *q, attempt_fn fn, void *ctx)
{
    const remote_options *o = &c->r->opt;
    uint64_t backoff = o->backoff_ms;
    int rc;
    c->msg[0] = '\0';
    c->attempts = 0;
    q->must_match = q->etag[0] != '\0';
    for (unsigned i = 0;; i++) {
        q->retry = 0;
        c->attempts++;
        rc = one_attempt(c, q, fn, ctx);
        if (!rc) {
            c->msg[0] = '\0';
            break;
        }
        if (!q->retry || i >= o->retries || bounds(q))
            break;
        sleep_ms(backoff);
        backoff *= 4;
    }
    if (rc && c->attempts > 1) {
        size_t n = strlen(c->msg);
        snprintf(c->msg + n, sizeof c->msg - n, ", %u attempts", c->attempts);
    }
    return rc;
}

/* The live bucket of C locked, or NULL (unlocked) with the 404 of a
 * missing bucket written (HEAD: no code, as a HEAD answer has no body). */
static remote_mem *bucket_locked(remote_conn *c, rq *q)
{
    remote_mem_lock();
    remote_mem *m = remote_mem_find(c->r->bucket);
    if (m)
        return m;
    remote_mem_unlock();
    fail(c, q, q->op == REMOTE_MEM_HEAD ? "HTTP 404" : "HTTP 404 NoSuchBucket");
    return NULL;
}

/* ---- PUT -------------------------------------------------------------- */
typedef struct put_ctx {
    uint64_t size;
    remote_source_fn src;
    void *arg;
    const remote_meta *meta;
} put_ctx;

static int put_attempt(remote_conn *c, rq *q, const mem_act *a, void *ctx)
{
    put_ctx *p = ctx;
    (void)a;
    if (!bucket_locked(c, q))
        return REMOTE_ENOBUCKET;
    remote_mem_unlock();
    if (p->size >= SIZE_MAX / 2) {
        fail(c, q, "out of memory");
        return ENOMEM;
    }
    unsigned char *body = malloc((size_t)p->size + 1);
    if (!body) {
        fail(c, q, "out of memory");
        return ENOMEM;
    }
    for (uint64_t off = 0; off < p->size;) { /* the pieces libcurl asks for */
        size_t n = p->size - off < 65536 ? (size_t)(p->size - off) : 65536;
        if (p->src(p->arg, off, body + off, n) != 0) {
            free(body);
            fail(c, q, "the data source failed");
            return REMOTE_ESOURCE;
        }
        off += n;
    }
    char *key = full_key(c->r, q->name);
    const remote_options *opt = &c->r->opt;
    unsigned parts = p->size > opt->multipart_over
                         ? (unsigned)((p->size + opt->part_bytes - 1) / opt->part_bytes) : 0;
    mem_obj *o = key ? remote_mem_obj_new(NULL, body, (size_t)p->size, p->meta, 0, parts) : NULL;
    if (!key)
        free(body);
    int rc = o ? 0 : ENOMEM;
    remote_mem *m = rc ? NULL : bucket_locked(c, q);
    if (!rc && !m)
        rc = REMOTE_ENOBUCKET;
    else if (!rc) {
        rc = remote_mem_obj_set(m, key, o);
        remote_mem_unlock();
    }
    if (rc == ENOMEM)
        fail(c, q, "out of memory");
    if (rc)
        remote_mem_obj_unref(o);
    free(key);
    return rc;
}

int remote_put(remote_conn *c, const char *name, uint64_t size, remote_source_fn src, void *arg,
               const remote_meta *meta)
{
    rq q = {.label = "PUT", .op = REMOTE_MEM_PUT, .name = name, .match = name};
    put_ctx p = {size, src, arg, meta};
    return run(c, &q, put_attempt, &p);
}

static int buf_source(void *arg, uint64_t off, void *buf, size_t len)
{
    memcpy(buf, (const char *)arg + off, len);
    return 0;
}

int remote_put_buf(remote_conn *c, const char *name, const void *buf, size_t len, const remote_meta *meta)
{
    return remote_put(c, name, len, buf_source, (void *)(uintptr_t)buf, meta);
}

/* ---- GET, HEAD -------------------------------------------------------- */
typedef struct get_ctx {
    uint64_t off, len;     /* len UINT64_MAX: to the end */
    remote_sink_fn sink;
    void *arg;
    remote_info *info;     /* remote_get_first(): the answer's headers */
    int empty;             /* answered 416: nothing at or past the range's start */
} get_ctx;

/* The object of Q's name in C's bucket, referenced: 0, or the 404. */
static int obj_get(remote_conn *c, rq *q, mem_obj **o, remote_info *info)
{
    char *key = full_key(c->r, q->name);
    int rc = 0;
    *o = NULL;
    if (!key) {
        fail(c, q, "out of memory");
        return ENOMEM;
    }
    remote_mem *m = bucket_locked(c, q);
    if (m) {
        *o = remote_mem_obj_ref(m, key);
        if (*o && info)
            rc = remote_mem_obj_info(*o, info);
        remote_mem_unlock();
    }
    free(key);
    if (!m)
        return q->op == REMOTE_MEM_HEAD ? REMOTE_ENOTFOUND : REMOTE_ENOBUCKET;
    if (!*o) {
        fail(c, q, q->op == REMOTE_MEM_HEAD ? "HTTP 404" : "HTTP 404 NoSuchKey");
        return REMOTE_ENOTFOUND;
    }
    if (rc) {
        remote_mem_obj_unref(*o);
        *o = NULL;
        fail(c, q, "out of memory");
    }
    return rc;
}

static int get_attempt(remote_conn *c, rq *q, const mem_act *a, void *ctx)
{
    get_ctx *g = ctx;
    mem_obj *o;
    remote_info_clear(g->info);
    int rc = obj_get(c, q, &o, g->info);
    if (rc)
        return rc;
    if ((q->must_match || q->delivered > 0) && q->etag[0] && strcmp(q->etag, o->etag) != 0) {
        remote_mem_obj_unref(o); /* If-Match: 412 */
        remote_info_clear(g->info);
        fail(c, q, "the object was replaced%s", q->delivered ? " during the read" : "");
        return REMOTE_ECHANGED;
    }
    uint64_t from = g->off + q->delivered;
    if (from >= o->len) { /* 416: nothing there */
        g->empty = 1;
        remote_mem_obj_unref(o);
        return 0;
    }
    if (!q->etag[0])
        memcpy(q->etag, o->etag, sizeof o->etag);
    uint64_t end = g->len == UINT64_MAX || g->off + g->len > o->len ? o->len : g->off + g->len;
    uint64_t sent = 0;
    while (from < end) {
        uint64_t n = end - from < PIECE ? end - from : PIECE;
        if (a->cut && sent + n > a->cut)
            n = a->cut - sent;
        if (n == 0) {
            remote_mem_obj_unref(o);
            q->retry = 1;
            fail(c, q, "transfer closed with %llu bytes remaining to read (curl 18)",
                 (unsigned long long)(end - from));
            return REMOTE_EDOWN;
        }
        if (g->sink(g->arg, o->data + from, (size_t)n) != 0) {
            remote_mem_obj_unref(o);
            fail(c, q, "the reader failed");
            return REMOTE_ESOURCE;
        }
        q->delivered += n;
        sent += n;
        from += n;
    }
    remote_mem_obj_unref(o);
    return 0;
}

int remote_get_if(remote_conn *c, const char *name, const char *etag, uint64_t off, uint64_t len,
                  remote_sink_fn sink, void *arg, uint64_t *got)
{
    if (got)
        *got = 0;
    if (len == 0)
        return 0;
    if (len != UINT64_MAX && off + len < off)
        return EINVAL;
    rq q = {.label = "GET", .op = REMOTE_MEM_GET, .name = name, .match = name};
    get_ctx g = {off, len, sink, arg, NULL, 0};
    if (etag)
        snprintf(q.etag, sizeof q.etag, "%s", etag);
    int rc = run(c, &q, get_attempt, &g);
    if (got)
        *got = q.delivered;
    return rc;
}

int remote_get(remote_conn *c, const char *name, uint64_t off, uint64_t len, remote_sink_fn sink,
               void *arg, uint64_t *got)
{
    return remote_get_if(c, name, NULL, off, len, sink, arg, got);
}

typedef struct membuf {
    char *p;
    size_t cap, len;
} membuf;

static int buf_sink(void *arg, const void *data, size_t n)
{
    membuf *m = arg;
    if (n > m->cap - m->len)
        return -1;
    memcpy(m->p + m->len, data, n);
    m->len += n;
    return 0;
}

int remote_get_buf(remote_conn *c, const char *name, uint64_t off, void *buf, size_t cap, size_t *got)
{
    membuf m = {buf, cap, 0};
    int rc = remote_get(c, name, off, cap, buf_sink, &m, NULL);
    if (got)
        *got = m.len;
    return rc;
}

static int head_attempt(remote_conn *c, rq *q, const mem_act *a, void *ctx)
{
    mem_obj *o;
    (void)a;
    remote_info_clear(ctx);
    int rc = obj_get(c, q, &o, ctx);
    remote_mem_obj_unref(o);
    return rc;
}

int remote_head(remote_conn *c, const char *name, remote_info *out)
{
    rq q = {.label = "HEAD", .op = REMOTE_MEM_HEAD, .name = name, .match = name};
    memset(out, 0, sizeof *out);
    int rc = run(c, &q, head_attempt, out);
    if (rc)
        remote_info_clear(out);
    return rc;
}

int remote_get_first(remote_conn *c, const char *name, uint64_t len, remote_sink_fn sink, void *arg,
                     uint64_t *got, remote_info *out)
{
    memset(out, 0, sizeof *out);
    *got = 0;
    if (len == 0)
        return remote_head(c, name, out);
    rq q = {.label = "GET", .op = REMOTE_MEM_GET, .name = name, .match = name};
    get_ctx g = {0, len, sink, arg, out, 0};
    int rc = run(c, &q, get_attempt, &g);
    if (!rc && g.empty) { /* an empty object has no byte 0 */
        remote_info_clear(out);
        return remote_head(c, name, out);
    }
    if (rc) {
        remote_info_clear(out);
        return rc;
    }
    *got = q.delivered;
    return 0;
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

/* ---- DELETE ----------------------------------------------------------- */
static int delete_attempt(remote_conn *c, rq *q, const mem_act *a, void *ctx)
{
    (void)a;
    (void)ctx;
    char *key = full_key(c->r, q->name);
    if (!key) {
        fail(c, q, "out of memory");
        return ENOMEM;
    }
    remote_mem *m = bucket_locked(c, q);
    if (m) {
        remote_mem_obj_del(m, key); /* a missing key too: S3 answers 204 */
        remote_mem_unlock();
    }
    free(key);
    return m ? 0 : REMOTE_ENOBUCKET;
}

int remote_delete(remote_conn *c, const char *name)
{
    rq q = {.label = "DELETE", .op = REMOTE_MEM_DELETE, .name = name, .match = name};
    int rc = run(c, &q, delete_attempt, NULL);
    return rc == REMOTE_ENOTFOUND ? 0 : rc;
}

/* ---- listings --------------------------------------------------------- */
typedef struct page_ctx {
    const char *prefix;   /* full prefix */
    const char *token;    /* asked with, NULL first */
    unsigned max;
    mem_entry *v;         /* the answer */
    size_t n;
    char *next;           /* its continuation token (malloc), NULL last page */
} page_ctx;

static int page_attempt(remote_conn *c, rq *q, const mem_act *a, void *ctx)
{
    page_ctx *p = ctx;
    int more = 0;
    remote_mem_entries_free(p->v, p->n);
    p->v = NULL;
    p->n = 0;
    free(p->next);
    p->next = NULL;
    remote_mem *m = bucket_locked(c, q);
    if (!m)
        return REMOTE_ENOBUCKET;
    int rc = remote_mem_obj_list(m, p->prefix, p->token, p->max, &p->v, &p->n, &more);
    remote_mem_unlock();
    /* The token is the last key handed (S3's are opaque; start-after). */
    const char *next = !more ? NULL : a->repeat_token && p->token ? p->token : p->v[p->n - 1].key;
    if (!rc && next && !(p->next = strdup(next)))
        rc = ENOMEM;
    if (rc)
        fail(c, q, "out of memory");
    return rc;
}

typedef struct seen {
    char **v;
    size_t n;
} seen;

/* 1 when TOKEN was used before, else records it: 0, or ENOMEM. */
static int seen_add(seen *s, const char *token)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], token) == 0)
            return 1;
    char **v = realloc(s->v, (s->n + 1) * sizeof *v);
    if (!v)
        return ENOMEM;
    s->v = v;
    if (!(s->v[s->n] = strdup(token)))
        return ENOMEM;
    s->n++;
    return 0;
}

/* remote/list.c's loop: pages until the last, a repeated token, the page
 * bound, the time bound or the caller's stop. */
static int list_pages(remote_conn *c, const char *sub, unsigned max, int one_page, const remote_list_bounds *b,
                      remote_list_fn fn, void *arg)
{
    unsigned pages = 0, max_pages = b && b->max_pages ? b->max_pages : REMOTE_LIST_PAGES;
    rq q = {.label = one_page ? "CHECK" : "LIST", .op = one_page ? REMOTE_MEM_CHECK : REMOTE_MEM_LIST,
            .match = sub};
    if (b) {
        q.stop = b->stop;
        q.stop_arg = b->stop_arg;
        q.deadline_ns = b->max_ms ? now_ns() + b->max_ms * 1000000u : 0;
    }
    seen used = {0};
    char *prefix = full_key(c->r, sub), *token = NULL;
    size_t strip = *c->r->prefix ? strlen(c->r->prefix) + 1 : 0;
    int rc = prefix ? 0 : ENOMEM;
    if (rc)
        fail(c, &q, "out of memory");
    while (rc == 0) {
        page_ctx p = {prefix, token, max, NULL, 0, NULL};
        rc = run(c, &q, page_attempt, &p);
        for (size_t i = 0; !rc && i < p.n; i++)
            rc = fn(arg, p.v[i].key + strip, p.v[i].size, p.v[i].mtime);
        remote_mem_entries_free(p.v, p.n);
        free(token);
        token = p.next;
        if (rc || !token || one_page)
            break;
        if ((rc = seen_add(&used, token)) != 0) {
            if (rc == 1)
                fail(c, &q, "the server repeated continuation token '%.100s': the listing would never end",
                     token);
            else
                fail(c, &q, "out of memory");
            rc = rc == 1 ? REMOTE_EPROTO : rc;
        } else if (++pages >= max_pages) {
            fail(c, &q, "more than %u pages: past the listing's bound", max_pages);
            rc = REMOTE_ELIMIT;
        } else if ((rc = bounds(&q)) == REMOTE_ELIMIT) {
            fail(c, &q, "not finished within its time bound (%llu ms)",
                 (unsigned long long)(b ? b->max_ms : 0));
        } else if (rc) {
            fail(c, &q, "stopped by its caller (%s)", remote_strerror(rc));
        }
    }
    free(token);
    for (size_t i = 0; i < used.n; i++)
        free(used.v[i]);
    free(used.v);
    free(prefix);
    return rc;
}

int remote_list(remote_conn *c, const char *prefix, remote_list_fn fn, void *arg)
{
    return remote_list_bounded(c, prefix, NULL, fn, arg);
}

int remote_list_bounded(remote_conn *c, const char *prefix, const remote_list_bounds *b,
                        remote_list_fn fn, void *arg)
{
    return list_pages(c, prefix ? prefix : "", c->r->opt.list_page, 0, b, fn, arg);
}

static int count_one(void *arg, const char *name, uint64_t size, int64_t mtime)
{
    (void)name;
    (void)size;
    (void)mtime;
    ++*(unsigned *)arg;
    return 0;
}

int remote_check(remote_conn *c)
{
    unsigned n = 0;
    return list_pages(c, "", 1, 1, NULL, count_one, &n);
}
