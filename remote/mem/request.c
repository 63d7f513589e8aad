/* request.c -- the core of the in-memory remote: remote/remote.h's
 * handles, connections, codes and messages, and the attempt loop every
 * operation (object.c, list.c) runs, with the same retries, backoff and
 * bounds as remote/ against S3, so that tier/ and fs/ linked with
 * libremote_mem.a behave as they do against radosgw, minus the network.
 * The faults of the bucket decide an attempt's fate first (hook, delay or
 * stall, error), then the operation's attempt function answers from the
 * bucket. */
#include "remote/mem/mem_int.h"
#include "common/clock.h"
#include "common/env.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- messages, strings ------------------------------------------------ */
void remote_mem_fail(remote_conn *c, const remote_mem_rq *q, const char *fmt, ...)
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

/* The full key of NAME: "PREFIX/NAME" or NAME; NULL without memory. */
char *remote_mem_full_key(const remote *r, const char *name)
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
    remote_options_resolve(&r->opt, opt);
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

/* remote/config.c's bound, from the same options (remote/codes.c). */
uint64_t remote_bound_ms(const remote *r)
{
    return remote_options_bound_ms(&r->opt);
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
static void sleep_ms(uint64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* The operation's own bounds, as remote/request.c's remote_rq_bounds(). */
int remote_mem_bounds(remote_mem_rq *q)
{
    if (!q->stopped && q->stop)
        q->stopped = q->stop(q->stop_arg);
    if (!q->stopped && q->deadline_ns && common_clock_ns() >= q->deadline_ns)
        q->stopped = REMOTE_ELIMIT;
    return q->stopped;
}

static int stopped_fail(remote_conn *c, remote_mem_rq *q)
{
    if (q->stopped == REMOTE_ELIMIT)
        remote_mem_fail(c, q, "not finished within its time bound");
    else
        remote_mem_fail(c, q, "stopped by its caller (%s)", remote_strerror(q->stopped));
    return q->stopped;
}

/* The wait before the first byte: 0; the bounds' value; or, at the stall
 * limit, REMOTE_EDOWN after stall_s (transient) as libcurl's progress
 * check aborts a transfer where nothing moved. The bounds are asked every
 * 100 ms, as remote/request.c asks them at least once a second. */
static int first_byte(remote_conn *c, remote_mem_rq *q, unsigned ms)
{
    uint64_t limit = 1000ull * c->r->opt.stall_s, wait = ms < limit ? ms : limit;
    uint64_t end = common_clock_ns() + wait * 1000000u;
    for (uint64_t t; (t = common_clock_ns()) < end;) {
        if (remote_mem_bounds(q))
            return stopped_fail(c, q);
        uint64_t left = (end - t) / 1000000u + 1;
        sleep_ms(left < 100 ? left : 100);
    }
    if (ms < limit)
        return 0;
    q->retry = 1;
    remote_mem_fail(c, q, "stalled, nothing moved for %u s", c->r->opt.stall_s);
    return REMOTE_EDOWN;
}

static int injected(remote_conn *c, remote_mem_rq *q, int err)
{
    static const struct { int err; const char *what; } http[] = {
        {REMOTE_ENOTFOUND, "HTTP 404 NoSuchKey"}, {REMOTE_ENOBUCKET, "HTTP 404 NoSuchBucket"},
        {REMOTE_EDENIED, "HTTP 403 AccessDenied"}, {REMOTE_EDOWN, "HTTP 503 ServiceUnavailable"},
        {REMOTE_EPROTO, "HTTP 400 InvalidRequest"}, {REMOTE_ECHANGED, "HTTP 412 PreconditionFailed"}};
    const char *what = remote_strerror(err);
    for (size_t i = 0; i < sizeof http / sizeof http[0]; i++)
        if (http[i].err == err)
            what = http[i].what;
    remote_mem_fail(c, q, "%s (injected)", what);
    q->retry = err == REMOTE_EDOWN;
    return err;
}

static int one_attempt(remote_conn *c, remote_mem_rq *q, remote_mem_attempt_fn fn, void *ctx)
{
    mem_act a;
    remote_mem_lock();
    int rc = remote_mem_attempt(c->r->bucket, q->op, q->match, &a);
    remote_mem_unlock();
    if (rc) {
        remote_mem_fail(c, q, "out of memory");
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
        char *key = remote_mem_full_key(c->r, q->name);
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
 * connection's attempts and message as remote/request.c's remote_rq_run(). */
int remote_mem_run(remote_conn *c, remote_mem_rq *q, remote_mem_attempt_fn fn, void *ctx)
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
        if (!q->retry || i >= o->retries || remote_mem_bounds(q))
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
remote_mem *remote_mem_bucket_locked(remote_conn *c, remote_mem_rq *q)
{
    remote_mem_lock();
    remote_mem *m = remote_mem_find(c->r->bucket);
    if (m)
        return m;
    remote_mem_unlock();
    remote_mem_fail(c, q, q->op == REMOTE_MEM_HEAD ? "HTTP 404" : "HTTP 404 NoSuchBucket");
    return NULL;
}
