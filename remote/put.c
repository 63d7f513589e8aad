/* put.c -- the single-request PUT of one object (up to multipart_over
 * bytes; upload.c chooses). An operation: it uses the request core
 * (request.c) and the leaves, never another operation. */
#include "remote/remote_int.h"

int remote_put_single(remote_conn *c, const char *name, uint64_t size, remote_source_fn src, void *arg,
                      const remote_meta *meta)
{
    rq q = {.label = "PUT", .method = "PUT", .name = name, .src = src, .src_arg = arg,
            .src_len = size};
    int rc = remote_rq_meta_headers(c, &q.headers, meta);
    if (!rc)
        rc = remote_rq_run(c, &q);
    c->r->cu->slist_free_all(q.headers);
    common_buf_release(&q.resp);
    return rc;
}
