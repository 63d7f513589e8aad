/* get.c -- GET of one object: a range streamed to a sink (resumed after a
 * failure at the byte it reached, pinned to one version by its ETag), into
 * a buffer, and the first bytes with the object's info. An operation: it
 * uses the request core (request.c) and the leaves, never another
 * operation. */
#include "remote/remote_int.h"
#include "common/buf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

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
    int rc = remote_rq_run(c, &q);
    if (got)
        *got = q.delivered;
    common_buf_release(&q.resp);
    return rc;
}

int remote_get_buf(remote_conn *c, const char *name, uint64_t off, void *buf, size_t cap, size_t *got)
{
    common_fixbuf m = {buf, 0, cap};
    int rc = remote_get(c, name, off, cap, common_fixbuf_sink, &m, NULL);
    if (got)
        *got = m.len;
    return rc;
}

int remote_get_first(remote_conn *c, const char *name, uint64_t len, remote_sink_fn sink, void *arg,
                     uint64_t *got, remote_info *out)
{
    memset(out, 0, sizeof *out);
    *got = 0;
    if (len == 0)
        return remote_rq_head(c, name, out);
    rq q = {.label = "GET", .method = "GET", .name = name, .ranged = 1, .range_len = len,
            .sink = sink, .sink_arg = arg, .info = out};
    int rc = remote_rq_run(c, &q);
    common_buf_release(&q.resp);
    if (!rc && q.status == 416) { /* an empty object has no byte 0 */
        remote_info_clear(out);
        return remote_rq_head(c, name, out);
    }
    if (rc) {
        remote_info_clear(out);
        return rc;
    }
    if (q.status == 206) {
        if (!q.range_total) { /* remote_rq_run() checked every 206: not reached */
            remote_rq_fail(c, &q, "a 206 answer without the object's length");
            remote_info_clear(out);
            return REMOTE_EPROTO;
        }
        out->length = q.range_total; /* Content-Length was the part's */
    }
    *got = q.delivered;
    remote_info_finish(out);
    return 0;
}
