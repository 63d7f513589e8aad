/* tier.c -- opening the tier, names, lookups, listings, tombstones. The
 * write side (upload, put, sync) is upload.c. */
#include "tier/tier_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *tier_strerror(int err)
{
    switch (err) {
    case TIER_EUNSENT: return "stored locally, but the upload to the remote failed: pending (agentlink sync)";
    case TIER_ETOMB: return "removed (a tombstone on the remote)";
    case TIER_ENONE: return "the store names no remote";
    case TIER_ENOTFOUND: return "not on the remote";
    case TIER_ECHANGED: return "that version is no longer on the remote (replaced or removed)";
    case TIER_ECONFIG: return remote_strerror(REMOTE_ECONFIG);
    case TIER_EDENIED: return remote_strerror(REMOTE_EDENIED);
    case TIER_ENOBUCKET: return remote_strerror(REMOTE_ENOBUCKET);
    case TIER_EFAILED: return "the remote failed (unreachable, stalled, or an answer not understood)";
    default: break;
    }
    if (err <= REMOTE_ERR_BASE && err > REMOTE_ERR_BASE - 100)
        return remote_strerror(err);
    return store_strerror(err);
}

int tier_open(tier **out, store *st, const remote_options *opt, char *msg, size_t msglen)
{
    char url[STORE_REMOTE_MAX + 1];
    *out = NULL;
    if (msg && msglen)
        msg[0] = '\0';
    int rc = store_remote_get(st, url, sizeof url);
    if (rc)
        return rc;
    if (!url[0])
        return TIER_ENONE;
    tier *t = calloc(1, sizeof *t);
    if (!t)
        return ENOMEM;
    t->st = st;
    if ((rc = remote_open(&t->r, url, opt, msg, msglen))) {
        free(t);
        return rc;
    }
    *out = t;
    return 0;
}

void tier_close(tier *t)
{
    if (!t)
        return;
    remote_close(t->r);
    free(t);
}

remote *tier_remote(tier *t) { return t->r; }

int tier_url_check(const char *url, char *msg, size_t msglen)
{
    return remote_url_check(url, msg, msglen);
}

void tier_name(char *buf, size_t cap, const char *ns, const char *key, int tomb)
{
    snprintf(buf, cap, "%s%s/%s", tomb ? ".tomb/" : "", ns ? ns : STORE_DEFAULT_NAMESPACE, key);
}

int tier_remove(tier *t, remote_conn *c, const char *ns, const char *key)
{
    char name[TIER_NAME_MAX];
    remote_meta m = {NULL, NULL, 0, (int64_t)time(NULL)};
    tier_name(name, sizeof name, ns, key, 1);
    int rc = remote_put_buf(c, name, "", 0, &m);
    if (rc)
        return rc;
    tier_name(name, sizeof name, ns, key, 0);
    if ((rc = remote_delete(c, name)))
        return rc;
    return store_tomb_pending_clear(t->st, ns, key);
}

int tier_lookup(tier *t, remote_conn *c, const char *ns, const char *key, remote_info *info)
{
    uint64_t got;
    return tier_lookup_first(t, c, ns, key, 0, NULL, NULL, &got, info);
}

int tier_lookup_first(tier *t, remote_conn *c, const char *ns, const char *key, uint64_t len,
                      remote_sink_fn sink, void *arg, uint64_t *got, remote_info *info)
{
    char name[TIER_NAME_MAX];
    remote_info tomb;
    (void)t;
    tier_name(name, sizeof name, ns, key, 0);
    int rc = remote_get_first(c, name, len, sink, arg, got, info);
    if (rc != REMOTE_ENOTFOUND)
        return rc;
    tier_name(name, sizeof name, ns, key, 1);
    rc = remote_head(c, name, &tomb);
    remote_info_clear(&tomb);
    return rc == 0 ? TIER_ETOMB : rc;
}

int tier_list(tier *t, remote_conn *c, const char *ns, const remote_list_bounds *b, remote_list_fn fn,
              void *arg)
{
    char prefix[STORE_NAME_MAX + 2];
    (void)t;
    snprintf(prefix, sizeof prefix, "%s/", ns ? ns : STORE_DEFAULT_NAMESPACE);
    list_ctx lc = {fn, arg, prefix, strlen(prefix)};
    return remote_list_bounded(c, prefix, b, tier_list_strip, &lc);
}

int tier_list_strip(void *arg, const char *name, uint64_t size, int64_t mtime)
{
    list_ctx *lc = arg;
    /* remote_list() hands on only names under "NS/"; checked again here,
     * as the length must be before skipping past it. */
    if (strncmp(name, lc->ns, lc->skip) != 0 || !name[lc->skip])
        return 0;
    const char *key = name + lc->skip;
    if (strchr(key, '/')) /* not a result: a deeper object someone else put */
        return 0;
    return lc->fn(lc->arg, key, size, mtime);
}

int tier_get(tier *t, remote_conn *c, const char *ns, const char *key, const char *etag,
             uint64_t off, uint64_t len, remote_sink_fn sink, void *arg, uint64_t *got)
{
    char name[TIER_NAME_MAX];
    (void)t;
    tier_name(name, sizeof name, ns, key, 0);
    return remote_get_if(c, name, etag, off, len, sink, arg, got);
}

int tier_tomb_get(tier *t, remote_conn *c, const char *ns, const char *key, int64_t *created)
{
    char name[TIER_NAME_MAX];
    remote_info in;
    (void)t;
    tier_name(name, sizeof name, ns, key, 1);
    int rc = remote_head(c, name, &in);
    if (rc == 0 && created)
        *created = in.created > 0 ? in.created : 0;
    remote_info_clear(&in);
    return rc;
}

typedef struct tomb_find {
    const char *ns, *key;
    int found;
} tomb_find;

static int tomb_find_cb(const char *ns, const char *key, uint64_t version, void *ctx)
{
    tomb_find *f = ctx;
    (void)version;
    if (strcmp(ns, f->ns) == 0 && strcmp(key, f->key) == 0) {
        f->found = 1;
        return 1;
    }
    return 0;
}

int tier_tomb_pending(tier *t, const char *ns, const char *key)
{
    tomb_find f = {ns ? ns : STORE_DEFAULT_NAMESPACE, key, 0};
    store_tomb_pending_list(t->st, tomb_find_cb, &f);
    return f.found;
}
