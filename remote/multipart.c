/* multipart.c -- large uploads in parts (above multipart_over bytes;
 * upload.c chooses): each part is its own request, retried on its own, so
 * a failure late in a large upload repeats one part, not the whole
 * object. An operation: it uses the request core (request.c) and the
 * leaves, never another operation. Query parameters are written sorted:
 * curl 7.88 signs the query as given (curl/curl#9717). */
#include "remote/remote_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mp {
    remote_conn *c;
    const char *name;
    char *id;      /* UploadId */
    common_buf idq;  /* "uploadId=ENC" */
    common_buf done; /* the CompleteMultipartUpload body */
} mp;

static int mp_start(mp *m, const remote_meta *meta)
{
    rq q = {.label = "PUT (multipart start)", .method = "POST", .name = m->name,
            .query = "uploads="};
    int rc = remote_rq_meta_headers(m->c, &q.headers, meta);
    if (!rc)
        rc = remote_rq_run(m->c, &q);
    if (!rc) {
        const char *p = q.resp.p ? q.resp.p : "";
        int oom = 0;
        m->id = remote_xml_take(&p, p + q.resp.len, "UploadId", &oom);
        if (!m->id) {
            rc = oom ? ENOMEM : REMOTE_EPROTO;
            if (!oom)
                remote_rq_fail(m->c, &q, "no UploadId in the answer");
        }
    }
    if (!rc) {
        common_buf_adds(&m->idq, "uploadId=");
        rc = remote_enc_add(&m->idq, m->id, 0);
    }
    m->c->r->cu->slist_free_all(q.headers);
    common_buf_release(&q.resp);
    return rc;
}

static int mp_part(mp *m, unsigned n, uint64_t off, uint64_t len, remote_source_fn src, void *arg)
{
    char label[48], query[32];
    snprintf(label, sizeof label, "PUT (part %u)", n);
    snprintf(query, sizeof query, "partNumber=%u&", n);
    common_buf qs = {0};
    remote_info info = {0};
    common_buf_adds(&qs, query);
    common_buf_add(&qs, m->idq.p, m->idq.len);
    int rc = qs.failed ? ENOMEM : 0;
    rq q = {.label = label, .method = "PUT", .name = m->name, .query = qs.p, .src = src,
            .src_arg = arg, .src_off = off, .src_len = len, .info = &info};
    if (!rc)
        rc = remote_rq_run(m->c, &q);
    if (!rc && !info.etag) {
        remote_rq_fail(m->c, &q, "no ETag in the answer");
        rc = REMOTE_EPROTO;
    }
    if (!rc) {
        char head[64];
        snprintf(head, sizeof head, "<Part><PartNumber>%u</PartNumber><ETag>", n);
        common_buf_adds(&m->done, head);
        for (const char *e = info.etag; *e; e++) /* quotes as entities */
            common_buf_add(&m->done, *e == '"' ? "&quot;" : e, *e == '"' ? 6 : 1);
        common_buf_adds(&m->done, "</ETag></Part>");
        rc = m->done.failed ? ENOMEM : 0;
    }
    remote_info_clear(&info);
    common_buf_release(&q.resp);
    common_buf_release(&qs);
    return rc;
}

static int mp_complete(mp *m)
{
    common_buf_adds(&m->done, "</CompleteMultipartUpload>");
    int rc = m->done.failed ? ENOMEM : 0;
    rq q = {.label = "PUT (multipart complete)", .method = "POST", .name = m->name,
            .query = m->idq.p, .body = m->done.p, .body_len = m->done.len};
    if (!rc)
        rc = remote_rq_run(m->c, &q);
    /* S3 may answer 200 and report the failure in the body */
    if (!rc && q.resp.p && strstr(q.resp.p, "<Error>")) {
        const char *p = q.resp.p;
        int oom = 0;
        char *code = remote_xml_take(&p, p + q.resp.len, "Code", &oom);
        remote_rq_fail(m->c, &q, "HTTP 200 with error %s", code ? code : "?");
        free(code);
        rc = REMOTE_EPROTO;
    }
    common_buf_release(&q.resp);
    return rc;
}

/* Best effort: the upload's parts are dropped; the first error stays the
 * message. */
static void mp_abort(mp *m)
{
    char keep[REMOTE_MSG_MAX];
    unsigned attempts = m->c->attempts;
    memcpy(keep, m->c->msg, sizeof keep);
    rq q = {.label = "PUT (multipart abort)", .method = "DELETE", .name = m->name,
            .query = m->idq.p};
    (void)remote_rq_run(m->c, &q);
    common_buf_release(&q.resp);
    memcpy(m->c->msg, keep, sizeof keep);
    m->c->attempts = attempts;
}

int remote_put_multipart(remote_conn *c, const char *name, uint64_t size, remote_source_fn src, void *arg,
                         const remote_meta *meta)
{
    mp m = {.c = c, .name = name};
    uint64_t part = c->r->opt.part_bytes;
    common_buf_adds(&m.done, "<CompleteMultipartUpload>");
    int rc = m.done.failed ? ENOMEM : 0;
    if (!rc)
        rc = mp_start(&m, meta);
    unsigned n = 1;
    for (uint64_t off = 0; !rc && off < size; off += part, n++)
        rc = mp_part(&m, n, off, size - off < part ? size - off : part, src, arg);
    if (!rc)
        rc = mp_complete(&m);
    if (rc && m.id)
        mp_abort(&m);
    free(m.id);
    common_buf_release(&m.idq);
    common_buf_release(&m.done);
    return rc;
}
