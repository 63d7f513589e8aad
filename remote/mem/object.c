/* object.c -- one object over the in-memory buckets: PUT (whole, whatever
 * the size), ranged GET streamed to a sink in pieces and resumed after a
 * cut pinned to its ETag, HEAD, get_first, DELETE. */
#include "remote/mem/mem_int.h"
#include "common/buf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PIECE 16384u /* bytes handed to a sink at once (libcurl's write size) */

/* ---- PUT -------------------------------------------------------------- */
typedef struct put_ctx {
    uint64_t size;
    remote_source_fn src;
    void *arg;
    const remote_meta *meta;
} put_ctx;

static int put_attempt(remote_conn *c, remote_mem_rq *q, const mem_act *a, void *ctx)
{
    put_ctx *p = ctx;
    (void)a;
    if (!remote_mem_bucket_locked(c, q))
        return REMOTE_ENOBUCKET;
    remote_mem_unlock();
    if (p->size >= SIZE_MAX / 2) {
        remote_mem_fail(c, q, "out of memory");
        return ENOMEM;
    }
    unsigned char *body = malloc((size_t)p->size + 1);
    if (!body) {
        remote_mem_fail(c, q, "out of memory");
        return ENOMEM;
    }
    for (uint64_t off = 0; off < p->size;) { /* the pieces libcurl asks for */
        size_t n = p->size - off < 65536 ? (size_t)(p->size - off) : 65536;
        if (p->src(p->arg, off, body + off, n) != 0) {
            free(body);
            remote_mem_fail(c, q, "the data source failed");
            return REMOTE_ESOURCE;
        }
        off += n;
    }
    char *key = remote_mem_full_key(c->r, q->name);
    const remote_options *opt = &c->r->opt;
    unsigned parts = p->size > opt->multipart_over
                         ? (unsigned)((p->size + opt->part_bytes - 1) / opt->part_bytes) : 0;
    mem_obj *o = key ? remote_mem_obj_new(NULL, body, (size_t)p->size, p->meta, 0, parts) : NULL;
    if (!key)
        free(body);
    int rc = o ? 0 : ENOMEM;
    remote_mem *m = rc ? NULL : remote_mem_bucket_locked(c, q);
    if (!rc && !m)
        rc = REMOTE_ENOBUCKET;
    else if (!rc) {
        rc = remote_mem_obj_set(m, key, o);
        remote_mem_unlock();
    }
    if (rc == ENOMEM)
        remote_mem_fail(c, q, "out of memory");
    if (rc)
        remote_mem_obj_unref(o);
    free(key);
    return rc;
}

int remote_put(remote_conn *c, const char *name, uint64_t size, remote_source_fn src, void *arg,
               const remote_meta *meta)
{
    remote_mem_rq q = {.label = "PUT", .op = REMOTE_MEM_PUT, .name = name, .match = name};
    put_ctx p = {size, src, arg, meta};
    return remote_mem_run(c, &q, put_attempt, &p);
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
static int obj_get(remote_conn *c, remote_mem_rq *q, mem_obj **o, remote_info *info)
{
    char *key = remote_mem_full_key(c->r, q->name);
    int rc = 0;
    *o = NULL;
    if (!key) {
        remote_mem_fail(c, q, "out of memory");
        return ENOMEM;
    }
    remote_mem *m = remote_mem_bucket_locked(c, q);
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
        remote_mem_fail(c, q, q->op == REMOTE_MEM_HEAD ? "HTTP 404" : "HTTP 404 NoSuchKey");
        return REMOTE_ENOTFOUND;
    }
    if (rc) {
        remote_mem_obj_unref(*o);
        *o = NULL;
        remote_mem_fail(c, q, "out of memory");
    }
    return rc;
}

static int get_attempt(remote_conn *c, remote_mem_rq *q, const mem_act *a, void *ctx)
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
        remote_mem_fail(c, q, "the object was replaced%s", q->delivered ? " during the read" : "");
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
            remote_mem_fail(c, q, "transfer closed with %llu bytes remaining to read (curl 18)",
                 (unsigned long long)(end - from));
            return REMOTE_EDOWN;
        }
        if (g->sink(g->arg, o->data + from, (size_t)n) != 0) {
            remote_mem_obj_unref(o);
            remote_mem_fail(c, q, "the reader failed");
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
    remote_mem_rq q = {.label = "GET", .op = REMOTE_MEM_GET, .name = name, .match = name};
    get_ctx g = {off, len, sink, arg, NULL, 0};
    if (etag)
        snprintf(q.etag, sizeof q.etag, "%s", etag);
    int rc = remote_mem_run(c, &q, get_attempt, &g);
    if (got)
        *got = q.delivered;
    return rc;
}

int remote_get(remote_conn *c, const char *name, uint64_t off, uint64_t len, remote_sink_fn sink,
               void *arg, uint64_t *got)
{
    return remote_get_if(c, name, NULL, off, len, sink, arg, got);
}

int remote_get_buf(remote_conn *c, const char *name, uint64_t off, void *buf, size_t cap, size_t *got)
{
    common_fixbuf m = {buf, 0, cap};
    int rc = remote_get(c, name, off, cap, common_fixbuf_sink, &m, NULL);
    if (got)
        *got = m.len;
    return rc;
}

static int head_attempt(remote_conn *c, remote_mem_rq *q, const mem_act *a, void *ctx)
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
    remote_mem_rq q = {.label = "HEAD", .op = REMOTE_MEM_HEAD, .name = name, .match = name};
    memset(out, 0, sizeof *out);
    int rc = remote_mem_run(c, &q, head_attempt, out);
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
    remote_mem_rq q = {.label = "GET", .op = REMOTE_MEM_GET, .name = name, .match = name};
    get_ctx g = {0, len, sink, arg, out, 0};
    int rc = remote_mem_run(c, &q, get_attempt, &g);
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
static int delete_attempt(remote_conn *c, remote_mem_rq *q, const mem_act *a, void *ctx)
{
    (void)a;
    (void)ctx;
    char *key = remote_mem_full_key(c->r, q->name);
    if (!key) {
        remote_mem_fail(c, q, "out of memory");
        return ENOMEM;
    }
    remote_mem *m = remote_mem_bucket_locked(c, q);
    if (m) {
        remote_mem_obj_del(m, key); /* a missing key too: S3 answers 204 */
        remote_mem_unlock();
    }
    free(key);
    return m ? 0 : REMOTE_ENOBUCKET;
}

int remote_delete(remote_conn *c, const char *name)
{
    remote_mem_rq q = {.label = "DELETE", .op = REMOTE_MEM_DELETE, .name = name, .match = name};
    int rc = remote_mem_run(c, &q, delete_attempt, NULL);
    return rc == REMOTE_ENOTFOUND ? 0 : rc;
}
