/* list.c -- ListObjectsV2, page by page, and the access check built on
 * it. The query is written sorted (curl 7.88 signs it as given). */
#include "remote/remote_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The full prefix to list: "PREFIX/" + SUB, or SUB without a prefix. */
static int full_prefix(const remote *r, const char *sub, rbuf *out)
{
    int rc = 0;
    if (*r->prefix) {
        rc = rbuf_add(out, r->prefix, strlen(r->prefix));
        if (!rc)
            rc = rbuf_add(out, "/", 1);
    }
    if (!rc)
        rc = rbuf_add(out, sub, strlen(sub));
    if (!rc && !out->p)
        rc = rbuf_add(out, "", 0);
    return rc;
}

static int page_query(rbuf *q, const char *token, const char *prefix, unsigned max)
{
    char mid[64];
    int rc = 0;
    if (token) {
        rc = rbuf_add(q, "continuation-token=", 19);
        if (!rc)
            rc = enc_add(q, token, 0);
        if (!rc)
            rc = rbuf_add(q, "&", 1);
    }
    snprintf(mid, sizeof mid, "list-type=2&max-keys=%u&prefix=", max);
    if (!rc)
        rc = rbuf_add(q, mid, strlen(mid));
    if (!rc)
        rc = enc_add(q, prefix, 0);
    return rc;
}

/* Calls FN for each <Contents> of one page; *TOKEN gets the next page's
 * token (malloc) or NULL on the last page. */
static int page_parse(const rbuf *b, size_t strip, remote_list_fn fn, void *arg, char **token)
{
    const char *p = b->p ? b->p : "", *end = p + b->len, *s, *e;
    int oom = 0, rc = 0;
    *token = NULL;
    while (rc == 0 && xml_next(&p, end, "Contents", &s, &e)) {
        const char *q = s;
        char *key = xml_take(&q, e, "Key", &oom);
        q = s;
        char *size = xml_take(&q, e, "Size", &oom);
        q = s;
        char *mod = xml_take(&q, e, "LastModified", &oom);
        if (key && strlen(key) > strip)
            rc = fn(arg, key + strip, size ? strtoull(size, NULL, 10) : 0, mod ? iso8601_parse(mod) : 0);
        free(key);
        free(size);
        free(mod);
    }
    p = b->p ? b->p : "";
    char *trunc = xml_take(&p, end, "IsTruncated", &oom);
    if (rc == 0 && trunc && strcmp(trunc, "true") == 0) {
        p = b->p;
        *token = xml_take(&p, end, "NextContinuationToken", &oom);
        if (!*token && !oom)
            rc = REMOTE_EPROTO;
    }
    free(trunc);
    return oom ? ENOMEM : rc;
}

static int list_pages(remote_conn *c, const char *sub, unsigned max, int one_page, remote_list_fn fn,
                      void *arg)
{
    rbuf prefix = {0};
    char *token = NULL;
    int rc = full_prefix(c->r, sub, &prefix);
    size_t strip = *c->r->prefix ? strlen(c->r->prefix) + 1 : 0;
    do {
        rbuf qs = {0};
        rc = rc ? rc : page_query(&qs, token, prefix.p, max);
        rq q = {.label = one_page ? "CHECK" : "LIST", .method = "GET", .query = qs.p};
        if (!rc)
            rc = rq_run(c, &q);
        free(token);
        token = NULL;
        if (!rc && q.resp.over) {
            rq_fail(c, &q, "listing page too large");
            rc = REMOTE_EPROTO;
        }
        if (!rc)
            rc = page_parse(&q.resp, strip, fn, arg, &token);
        if (rc == REMOTE_EPROTO && !c->msg[0])
            rq_fail(c, &q, "truncated listing without a continuation token");
        rbuf_free(&q.resp);
        rbuf_free(&qs);
    } while (rc == 0 && token && !one_page);
    free(token);
    rbuf_free(&prefix);
    return rc;
}

int remote_list(remote_conn *c, const char *prefix, remote_list_fn fn, void *arg)
{
    return list_pages(c, prefix ? prefix : "", c->r->opt.list_page, 0, fn, arg);
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
    return list_pages(c, "", 1, 1, count_one, &n);
}
