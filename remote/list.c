/* list.c -- ListObjectsV2, page by page, and the access check built on
 * it. The query is written sorted (curl 7.88 signs it as given). A
 * listing is bounded whatever the server answers: a repeated token ends
 * it, so do REMOTE_LIST_PAGES pages and the caller's time bound; each
 * page is read by answer.c, which believes only keys under the prefix. */
#include "remote/remote_int.h"
#include "common/array.h"
#include "common/clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The full prefix to list into *OUT (yours: free()): "PREFIX/" + SUB, or
 * SUB without a prefix ("" when both are empty). Returns 0 or ENOMEM. */
static int full_prefix(const remote *r, const char *sub, char **out)
{
    common_buf b = {0};
    if (*r->prefix) {
        common_buf_adds(&b, r->prefix);
        common_buf_addc(&b, '/');
    }
    common_buf_adds(&b, sub);
    return common_buf_detach(&b, out, NULL);
}

/* Returns 0, or ENOMEM (Q failed). */
static int page_query(common_buf *q, const char *token, const char *prefix, unsigned max)
{
    if (token) {
        common_buf_adds(q, "continuation-token=");
        remote_enc_add(q, token, 0);
        common_buf_addc(q, '&');
    }
    common_buf_addf(q, "list-type=2&max-keys=%u&prefix=", max);
    return remote_enc_add(q, prefix, 0);
}

/* The continuation tokens a listing has used, as 64-bit hashes: a token
 * seen again means the listing loops (a server repeating its token would
 * otherwise be listed for ever). At most one per page, pages bounded. */
typedef struct seen {
    uint64_t *h;
    size_t n, cap;
} seen;

static uint64_t fnv64(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* 1 when TOKEN was used before, else records it: 0, or ENOMEM. */
static int seen_add(seen *s, const char *token)
{
    uint64_t h = fnv64(token);
    for (size_t i = 0; i < s->n; i++)
        if (s->h[i] == h)
            return 1;
    uint64_t *v = common_array_grow(s->h, s->n, &s->cap, sizeof *v, 64);
    if (!v)
        return ENOMEM;
    s->h = v;
    s->h[s->n++] = h;
    return 0;
}

/* One page: asks for it (after TOKEN, NULL for the first), hands its keys
 * to FN and puts the next token (or NULL) into *NEXT. */
static int list_page(remote_conn *c, rq *q, const char *prefix, size_t strip, const char *token,
                     unsigned max, remote_list_fn fn, void *arg, char **next)
{
    common_buf qs = {0};
    char why[160] = "";
    int rc = page_query(&qs, token, prefix, max);
    *next = NULL;
    q->query = qs.p;
    if (rc)
        remote_rq_fail(c, q, "out of memory");
    else
        rc = remote_rq_run(c, q);
    if (!rc && q->resp_over) {
        remote_rq_fail(c, q, "listing page larger than 16 MiB");
        rc = REMOTE_EPROTO;
    }
    if (!rc) {
        rc = remote_list_page_parse(q->resp.p, q->resp.len, prefix, strip, fn, arg, next, why, sizeof why);
        if (rc == REMOTE_EPROTO || rc == ENOMEM)
            remote_rq_fail(c, q, "%s", rc == ENOMEM ? "out of memory" : why);
    }
    common_buf_release(&q->resp);
    common_buf_release(&qs);
    q->query = NULL;
    return rc;
}

static int list_pages(remote_conn *c, const char *sub, unsigned max, int one_page,
                      const remote_list_bounds *b, remote_list_fn fn, void *arg)
{
    char *prefix = NULL;
    seen used = {0};
    char *token = NULL, *next = NULL;
    unsigned pages = 0, max_pages = b && b->max_pages ? b->max_pages : REMOTE_LIST_PAGES;
    rq q = {.label = one_page ? "CHECK" : "LIST", .method = "GET"};
    if (b) {
        q.stop = b->stop;
        q.stop_arg = b->stop_arg;
        q.deadline_ns = b->max_ms ? common_clock_ns() + b->max_ms * 1000000u : 0;
    }
    int rc = full_prefix(c->r, sub, &prefix);
    size_t strip = *c->r->prefix ? strlen(c->r->prefix) + 1 : 0;
    if (rc)
        remote_rq_fail(c, &q, "out of memory");
    while (rc == 0) {
        rc = list_page(c, &q, prefix, strip, token, max, fn, arg, &next);
        free(token);
        token = next;
        next = NULL;
        if (rc || !token || one_page)
            break;
        if ((rc = seen_add(&used, token)) != 0) {
            if (rc == 1)
                remote_rq_fail(c, &q, "the server repeated continuation token '%.100s': the listing would "
                               "never end", token);
            else
                remote_rq_fail(c, &q, "out of memory");
            rc = rc == 1 ? REMOTE_EPROTO : rc;
        } else if (++pages >= max_pages) {
            remote_rq_fail(c, &q, "more than %u pages: past the listing's bound", max_pages);
            rc = REMOTE_ELIMIT;
        } else if ((rc = remote_rq_bounds(&q)) == REMOTE_ELIMIT) {
            remote_rq_fail(c, &q, "not finished within its time bound (%llu ms)",
                           (unsigned long long)(b ? b->max_ms : 0));
        } else if (rc) {
            remote_rq_fail(c, &q, "stopped by its caller (%s)", remote_strerror(rc));
        }
    }
    free(token);
    free(used.h);
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
