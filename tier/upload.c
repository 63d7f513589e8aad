/* upload.c -- the write side of the tier: a result goes up from the
 * store's bytes (streamed from store_read(), never copied whole), its
 * pending mark is cleared after, and sync repeats that for every mark. */
#include "tier/tier_int.h"
#include "common/array.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct from_store {
    store *st;
    uint64_t version;
} from_store;

static int read_source(void *arg, uint64_t off, void *buf, size_t len)
{
    from_store *f = arg;
    size_t done = 0;
    while (done < len) {
        size_t n = 0;
        int rc = store_read(f->st, f->version, off + done, (char *)buf + done, len - done, &n);
        if (rc || n == 0)
            return rc ? rc : EIO;
        done += n;
    }
    return 0;
}

/* One upload of the live version E of (NS, KEY). */
static int upload_entry(tier *t, remote_conn *c, const char *ns, const char *key, const store_entry *e,
                        const char *call_id)
{
    char name[TIER_NAME_MAX];
    from_store f = {t->st, e->version};
    remote_meta m = {e->has_tool ? e->tool : NULL, call_id, e->original_size,
                     (int64_t)(e->created_ns / 1000000000u)};
    tier_name(name, sizeof name, ns, key, 0);
    return remote_put(c, name, e->size, read_source, &f, &m);
}

int tier_upload(tier *t, remote_conn *c, const char *ns, const char *key, uint64_t version,
                const char *call_id)
{
    store_entry e, cur;
    int rc = store_version_stat(t->st, ns, version, &e, NULL);
    if (rc)
        return rc;
    for (int round = 0; round < 3; round++) {
        rc = upload_entry(t, c, ns, key, &e, round ? NULL : call_id);
        if (rc == REMOTE_ESOURCE && store_version_stat(t->st, ns, e.version, NULL, NULL) == STORE_EGONE)
            rc = 0; /* replaced (or removed) under us: see below */
        if (rc)
            return rc;
        if ((rc = store_pending_clear(t->st, e.version)))
            return rc;
        /* Replaced during the upload by a writer that has finished its own
         * upload (no mark left): ours may have landed last, so send the
         * newest bytes again. A newer version still pending is its
         * writer's (or sync's) to send, and lands after ours. */
        rc = store_lookup(t->st, ns, key, &cur, NULL);
        if (rc == STORE_ENOTFOUND || rc == STORE_EEVICTED || (rc == 0 && cur.version == e.version))
            return 0;
        if (rc)
            return rc;
        if (tier_pending_is(t, cur.version))
            return 0;
        e = cur;
    }
    return 0;
}

static int find_version(const char *ns, const char *key, uint64_t version, void *ctx)
{
    (void)ns;
    (void)key;
    return version == *(uint64_t *)ctx ? 1 : 0;
}

int tier_pending_is(tier *t, uint64_t version)
{
    return store_pending_list(t->st, find_version, &version) == 1;
}

static int any_pending(const char *ns, const char *key, uint64_t version, void *ctx)
{
    (void)ns;
    (void)key;
    (void)version;
    (void)ctx;
    return 1;
}

int tier_has_pending(tier *t)
{
    return store_pending_list(t->st, any_pending, NULL) == 1
        || store_tomb_pending_list(t->st, any_pending, NULL) == 1;
}

int tier_put(tier *t, remote_conn *c, const char *ns, const char *key, const void *data, size_t len,
             const store_meta *meta, const char *call_id, store_entry *out)
{
    store_entry e;
    int rc = store_put(t->st, ns, key, data, len, meta, &e);
    if (rc)
        return rc;
    if (out)
        *out = e;
    rc = tier_upload(t, c, ns, key, e.version, call_id);
    if (rc == STORE_EGONE)
        return 0; /* replaced or removed before the upload began: not ours to send */
    if (rc)
        return TIER_EUNSENT;
    /* The remote works again: send what earlier writes left pending. A
     * failure here is theirs, not this write's: they stay pending. */
    if (tier_has_pending(t))
        tier_sync(t, c, NULL, NULL, NULL, NULL);
    return 0;
}

typedef struct mark_vec {
    tier_mark *v;
    size_t n, cap;
    int tomb; /* what the listing running now adds */
} mark_vec;

static int collect(const char *ns, const char *key, uint64_t version, void *ctx)
{
    mark_vec *mv = ctx;
    tier_mark *v = common_array_grow(mv->v, mv->n, &mv->cap, sizeof *mv->v, 16);
    if (!v)
        return ENOMEM;
    mv->v = v;
    snprintf(mv->v[mv->n].ns, sizeof mv->v[0].ns, "%s", ns);
    snprintf(mv->v[mv->n].key, sizeof mv->v[0].key, "%s", key);
    mv->v[mv->n].version = version;
    mv->v[mv->n++].tomb = mv->tomb;
    return 0;
}

int tier_pending_list(tier *t, tier_mark **out, size_t *n)
{
    mark_vec mv = {0};
    int rc = store_pending_list(t->st, collect, &mv);
    if (!rc) {
        mv.tomb = 1;
        rc = store_tomb_pending_list(t->st, collect, &mv);
    }
    if (rc) {
        free(mv.v);
        mv.v = NULL;
        mv.n = 0;
    }
    *out = mv.v;
    *n = mv.n;
    return rc;
}

/* One pending tombstone: written as tier_remove() does, unless the name
 * is live here again (its put dropped the mark; this one was listed
 * before). STORE_EGONE when nothing was to be sent. */
static int tomb_send(tier *t, remote_conn *c, const char *ns, const char *key)
{
    store_entry e;
    int rc = store_lookup(t->st, ns, key, &e, NULL);
    if (rc == 0) {
        rc = store_tomb_pending_clear(t->st, ns, key);
        return rc ? rc : STORE_EGONE;
    }
    return tier_remove(t, c, ns, key);
}

int tier_sync(tier *t, remote_conn *c, tier_report_fn fn, void *ctx, unsigned *uploaded, unsigned *left)
{
    tier_mark *v;
    size_t n;
    unsigned up = 0, bad = 0;
    int rc = tier_pending_list(t, &v, &n);
    for (size_t i = 0; i < n; i++) {
        int r = v[i].tomb ? tomb_send(t, c, v[i].ns, v[i].key)
                          : tier_upload(t, c, v[i].ns, v[i].key, v[i].version, NULL);
        if (r == STORE_EGONE)
            continue; /* replaced or removed since the listing: its mark went with it */
        if (fn)
            fn(ctx, v[i].ns, v[i].key, r, r ? remote_conn_message(c) : "");
        if (r)
            bad++;
        else
            up++;
    }
    free(v);
    if (uploaded)
        *uploaded = up;
    if (left)
        *left = bad;
    if (rc)
        return rc;
    return bad ? TIER_EUNSENT : 0;
}
