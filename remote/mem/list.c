/* list.c -- listings over the in-memory buckets, page by page with a
 * continuation token, within remote/list.c's bounds (pages, time, the
 * caller's stop, a repeated token), and the access check. */
#include "remote/mem/mem_int.h"
#include "common/array.h"
#include "common/clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- listings --------------------------------------------------------- */
typedef struct page_ctx {
    const char *prefix;   /* full prefix */
    const char *token;    /* asked with, NULL first */
    unsigned max;
    mem_entry *v;         /* the answer */
    size_t n;
    char *next;           /* its continuation token (malloc), NULL last page */
} page_ctx;

static int page_attempt(remote_conn *c, remote_mem_rq *q, const mem_act *a, void *ctx)
{
    page_ctx *p = ctx;
    int more = 0;
    remote_mem_entries_free(p->v, p->n);
    p->v = NULL;
    p->n = 0;
    free(p->next);
    p->next = NULL;
    remote_mem *m = remote_mem_bucket_locked(c, q);
    if (!m)
        return REMOTE_ENOBUCKET;
    int rc = remote_mem_obj_list(m, p->prefix, p->token, p->max, &p->v, &p->n, &more);
    remote_mem_unlock();
    /* The token is the last key handed (S3's are opaque; start-after). */
    const char *next = !more ? NULL : a->repeat_token && p->token ? p->token : p->v[p->n - 1].key;
    if (!rc && next && !(p->next = strdup(next)))
        rc = ENOMEM;
    if (rc)
        remote_mem_fail(c, q, "out of memory");
    return rc;
}

typedef struct seen {
    char **v;
    size_t n, cap;
} seen;

/* 1 when TOKEN was used before, else records it: 0, or ENOMEM. */
static int seen_add(seen *s, const char *token)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], token) == 0)
            return 1;
    char **v = common_array_grow(s->v, s->n, &s->cap, sizeof *v, 16);
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
    remote_mem_rq q = {.label = one_page ? "CHECK" : "LIST", .op = one_page ? REMOTE_MEM_CHECK : REMOTE_MEM_LIST,
            .match = sub};
    if (b) {
        q.stop = b->stop;
        q.stop_arg = b->stop_arg;
        q.deadline_ns = b->max_ms ? common_clock_ns() + b->max_ms * 1000000u : 0;
    }
    seen used = {0};
    char *prefix = remote_mem_full_key(c->r, sub), *token = NULL;
    size_t strip = *c->r->prefix ? strlen(c->r->prefix) + 1 : 0;
    int rc = prefix ? 0 : ENOMEM;
    if (rc)
        remote_mem_fail(c, &q, "out of memory");
    while (rc == 0) {
        page_ctx p = {prefix, token, max, NULL, 0, NULL};
        rc = remote_mem_run(c, &q, page_attempt, &p);
        for (size_t i = 0; !rc && i < p.n; i++)
            rc = fn(arg, p.v[i].key + strip, p.v[i].size, p.v[i].mtime);
        remote_mem_entries_free(p.v, p.n);
        free(token);
        token = p.next;
        if (rc || !token || one_page)
            break;
        if ((rc = seen_add(&used, token)) != 0) {
            if (rc == 1)
                remote_mem_fail(c, &q, "the server repeated continuation token '%.100s': the listing would never end",
                     token);
            else
                remote_mem_fail(c, &q, "out of memory");
            rc = rc == 1 ? REMOTE_EPROTO : rc;
        } else if (++pages >= max_pages) {
            remote_mem_fail(c, &q, "more than %u pages: past the listing's bound", max_pages);
            rc = REMOTE_ELIMIT;
        } else if ((rc = remote_mem_bounds(&q)) == REMOTE_ELIMIT) {
            remote_mem_fail(c, &q, "not finished within its time bound (%llu ms)",
                 (unsigned long long)(b ? b->max_ms : 0));
        } else if (rc) {
            remote_mem_fail(c, &q, "stopped by its caller (%s)", remote_strerror(rc));
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
