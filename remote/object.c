/* object.c -- one object: PUT (single request; multipart.c above
 * multipart_over), ranged GET streamed to a sink, HEAD, DELETE. */
#include "remote/object.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add_header(const rcurl_api *cu, struct curl_slist **h, const char *name, const char *value,
                      int encode)
{
    rbuf b = {0};
    int rc = rbuf_add(&b, name, strlen(name));
    if (!rc)
        rc = rbuf_add(&b, ": ", 2);
    if (!rc)
        rc = encode ? enc_add(&b, value, 0) : rbuf_add(&b, value, strlen(value));
    struct curl_slist *t = rc ? NULL : cu->slist_append(*h, b.p);
    rbuf_free(&b);
    if (!t)
        return ENOMEM;
    *h = t;
    return 0;
}

int meta_headers(const remote_conn *c, struct curl_slist **h, const remote_meta *m)
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

int remote_put(remote_conn *c, const char *name, uint64_t size, remote_source_fn src, void *arg,
               const remote_meta *meta)
{
    if (size > c->r->opt.multipart_over)
        return multipart_put(c, name, size, src, arg, meta);
    rq q = {.label = "PUT", .method = "PUT", .name = name, .src = src, .src_arg = arg,
            .src_len = size};
    int rc = meta_headers(c, &q.headers, meta);
    if (!rc)
        rc = rq_run(c, &q);
    c->r->cu->slist_free_all(q.headers);
    rbuf_free(&q.resp);
    return rc;
}

static int mem_source(void *arg, uint64_t off, void *buf, size_t len)
{
    memcpy(buf, (const char *)arg + off, len);
    return 0;
}

int remote_put_buf(remote_conn *c, const char *name, const void *buf, size_t len, const remote_meta *meta)
{
    return remote_put(c, name, len, mem_source, (void *)(uintptr_t)buf, meta);
}

int remote_get(remote_conn *c, const char *name, uint64_t off, uint64_t len, remote_sink_fn sink,
               void *arg, uint64_t *got)
{
    return remote_get_if(c, name, NULL, off, len, sink, arg, got);
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
    rq q = {.label = "GET", .method = "GET", .name = name, .ranged = 1, .range_off = off,
            .range_len = len, .sink = sink, .sink_arg = arg};
    if (etag)
        snprintf(q.etag, sizeof q.etag, "%s", etag);
    int rc = rq_run(c, &q);
    if (got)
        *got = q.delivered;
    rbuf_free(&q.resp);
    return rc;
}

typedef struct membuf {
    char *p;
    size_t cap, len;
} membuf;

static int mem_sink(void *arg, const void *data, size_t n)
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
    int rc = remote_get(c, name, off, cap, mem_sink, &m, NULL);
    if (got)
        *got = m.len;
    return rc;
}

/* The defaults of an answer's info. An original size is never below the
 * length (a cut only shrinks): a smaller or missing x-amz-meta-size means
 * the object's own. */
static void info_finish(remote_info *out)
{
    if (out->size < out->length)
        out->size = out->length;
    if (out->created == 0)
        out->created = out->mtime;
}

int remote_head(remote_conn *c, const char *name, remote_info *out)
{
    memset(out, 0, sizeof *out);
    rq q = {.label = "HEAD", .method = "HEAD", .name = name, .info = out};
    int rc = rq_run(c, &q);
    rbuf_free(&q.resp);
    if (rc) {
        remote_info_clear(out);
        return rc;
    }
    info_finish(out);
    return 0;
}

int remote_get_first(remote_conn *c, const char *name, uint64_t len, remote_sink_fn sink, void *arg,
                     uint64_t *got, remote_info *out)
{
    memset(out, 0, sizeof *out);
    *got = 0;
    if (len == 0)
        return remote_head(c, name, out);
    rq q = {.label = "GET", .method = "GET", .name = name, .ranged = 1, .range_len = len,
            .sink = sink, .sink_arg = arg, .info = out};
    int rc = rq_run(c, &q);
    rbuf_free(&q.resp);
    if (!rc && q.status == 416) { /* an empty object has no byte 0 */
        remote_info_clear(out);
        return remote_head(c, name, out);
    }
    if (rc) {
        remote_info_clear(out);
        return rc;
    }
    if (q.status == 206) {
        if (!q.range_total) { /* rq_run() checked every 206: not reached */
            rq_fail(c, &q, "a 206 answer without the object's length");
            remote_info_clear(out);
            return REMOTE_EPROTO;
        }
        out->length = q.range_total; /* Content-Length was the part's */
    }
    *got = q.delivered;
    info_finish(out);
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

int remote_delete(remote_conn *c, const char *name)
{
    rq q = {.label = "DELETE", .method = "DELETE", .name = name};
    int rc = rq_run(c, &q);
    rbuf_free(&q.resp);
    return rc == REMOTE_ENOTFOUND ? 0 : rc;
}
