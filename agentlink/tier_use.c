/* tier_use.c -- the library's use of the remote tier (tier/): after a write
 * commits, the result goes to the store's remote; after a removal, a
 * tombstone. A handle keeps one al_tier: the tier of the URL the store
 * named when last asked, its connections, and the last failure's message.
 * The store's URL is read at every write (one short read transaction), so
 * a handle follows init --remote made by another process.
 *
 * Uploads run without the handle's lock (internal.h): each takes a
 * reference on the tier it started with (al_tref) and a connection of its
 * own (a remote_conn belongs to one thread at a time), kept idle after for
 * the next upload. A remote changed meanwhile retires the old tier; the
 * last upload using it closes it. Every field here is touched with the
 * handle's lock held; only al_tier_upload_run() runs without it, on what
 * its al_upload holds. */
#include "agentlink/internal.h"
#include "tier/tier.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Connections kept idle per tier for uploads (more are made when more
 * uploads run at once, and freed after). */
#define IDLE_MAX 16

struct al_tref {
    tier *t;
    remote_conn *c;                /* for calls made with the handle's lock held */
    remote_conn *idle[IDLE_MAX];   /* for uploads, each taken by one */
    unsigned nidle;
    unsigned refs;                 /* the al_tier's (while current), one per upload */
};

struct al_tier {
    char url[STORE_REMOTE_MAX + 1]; /* "" when the store names no remote */
    al_tref *cur;                   /* NULL: none, or it could not be opened */
    remote_conn *own;               /* a borrowed copy's connection (al_tier_borrow()) */
    int borrowed;
    char msg[STORE_REMOTE_MAX + 600]; /* why the last remote step failed, "" after a success */
};

static void tref_free(al_tref *r)
{
    for (unsigned i = 0; i < r->nidle; i++)
        remote_conn_free(r->idle[i]);
    remote_conn_free(r->c);
    tier_close(r->t);
    free(r);
}

static void tref_unref(al_tref *r)
{
    if (r && --r->refs == 0)
        tref_free(r);
}

void al_tier_free(al_tier *at)
{
    if (!at)
        return;
    tref_unref(at->cur);
    free(at);
}

void al_tier_forget(al_tier *at)
{
    /* A fork's child: the connections and the tier are the parent's too. */
    if (at)
        free(at->cur);
    free(at);
}

const char *al_tier_message(const al_tier *at)
{
    return at ? at->msg : "";
}

/* Opens the tier of ST's remote URL into a new reference. 0, or the
 * error with *MSG filled. */
static int tref_open(store *st, al_tref **out, char *m, size_t mcap)
{
    al_tref *r = calloc(1, sizeof *r);
    int rc;
    m[0] = '\0';
    if (!r)
        return ENOMEM;
    if ((rc = tier_open(&r->t, st, NULL, m, mcap)) == 0)
        rc = remote_conn_new(&r->c, tier_remote(r->t));
    if (rc) {
        tier_close(r->t);
        free(r);
        return rc;
    }
    r->refs = 1;
    *out = r;
    return 0;
}

int al_tier_use(store *st, al_tier **tp, int *has)
{
    char url[STORE_REMOTE_MAX + 1];
    if (*tp && (*tp)->borrowed) { /* its lender asked the store just before */
        *has = 1;
        return 0;
    }
    int rc = store_remote_get(st, url, sizeof url);
    *has = 0;
    if (rc)
        return al_err_from_store(rc);
    if (!*tp && !(*tp = calloc(1, sizeof **tp)))
        return ENOMEM;
    al_tier *at = *tp;
    if (strcmp(url, at->url) != 0 || (url[0] && !at->cur)) {
        tref_unref(at->cur); /* uploads still using it keep it until they end */
        at->cur = NULL;
        snprintf(at->url, sizeof at->url, "%s", url);
        if (url[0]) {
            char m[512];
            if ((rc = tref_open(st, &at->cur, m, sizeof m))) {
                snprintf(at->msg, sizeof at->msg, "remote %s: %s", url, m[0] ? m : tier_strerror(rc));
                return AL_EREMOTE;
            }
        }
    }
    *has = url[0] != '\0';
    return 0;
}

remote_conn *al_tier_conn(al_tier *at)
{
    return at->own ? at->own : at->cur->c;
}

tier *al_tier_tier(al_tier *at)
{
    return at->cur->t;
}

void al_tier_fail(al_tier *at, int rc)
{
    const char *m = at->cur ? remote_conn_message(al_tier_conn(at)) : "";
    snprintf(at->msg, sizeof at->msg, "%s", m[0] ? m : tier_strerror(rc));
}

/* A connection of R's for a caller without the handle's lock. */
static int conn_take(al_tref *r, remote_conn **c)
{
    if (r->nidle) {
        *c = r->idle[--r->nidle];
        return 0;
    }
    return remote_conn_new(c, tier_remote(r->t));
}

/* Gives C back to R (kept idle while R is in use) and drops a reference. */
static void conn_give(al_tref *r, remote_conn *c)
{
    if (r->refs > 1 && r->nidle < IDLE_MAX)
        r->idle[r->nidle++] = c;
    else
        remote_conn_free(c);
    tref_unref(r);
}

int al_tier_upload_begin(store *st, al_tier **tp, dev_t dev, ino_t ino, const char *ns,
                         const char *key, uint64_t version, al_upload *u)
{
    memset(u, 0, sizeof *u);
    int has, rc = al_tier_use(st, tp, &has);
    if (rc == AL_EREMOTE)
        return AL_EUPLOAD; /* stored here, marked pending; the remote unusable */
    if (rc || !has)
        return rc;
    al_tref *r = (*tp)->cur;
    if ((rc = conn_take(r, &u->c)))
        return rc;
    r->refs++;
    u->ref = r;
    u->st = st;
    u->dev = dev;
    u->ino = ino;
    u->ns = ns;
    u->key = key;
    u->version = version;
    return 0;
}

int al_tier_borrow(store *st, al_tier **tp, al_tier **out)
{
    int has, rc = al_tier_use(st, tp, &has);
    *out = NULL;
    if (rc == ENOMEM)
        return ENOMEM;
    if (rc || !has)
        return 0; /* answered with the lock held, without the network */
    al_tier *b = calloc(1, sizeof *b);
    if (!b)
        return ENOMEM;
    if ((rc = conn_take((*tp)->cur, &b->own))) {
        free(b);
        return rc;
    }
    memcpy(b->url, (*tp)->url, sizeof b->url);
    b->cur = (*tp)->cur;
    b->cur->refs++;
    b->borrowed = 1;
    *out = b;
    return 0;
}

void al_tier_return(al_tier *at, al_tier *b)
{
    if (!b)
        return;
    conn_give(b->cur, b->own);
    if (at && b->msg[0]) /* a failure: the handle's message */
        memcpy(at->msg, b->msg, sizeof at->msg);
    free(b);
}

/* ---- the catch-up: what earlier writes left pending ---------------------- */
/* One pending tombstone, as tier_sync() sends it: nothing when the name is
 * live here again (its put dropped the removal; the mark goes). */
static int tomb_send(tier *t, remote_conn *c, store *st, const char *ns, const char *key)
{
    store_entry e;
    if (store_lookup(st, ns, key, &e, NULL) == 0)
        return store_tomb_pending_clear(st, ns, key);
    return tier_remove(t, c, ns, key);
}

static int is_it(const char *ns, const char *key, uint64_t version, void *ctx)
{
    const tier_mark *m = ctx;
    if (m->tomb)
        return strcmp(ns, m->ns) == 0 && strcmp(key, m->key) == 0;
    return version == m->version;
}

/* 1 when M (an upload or a tombstone) is still marked pending: the listing
 * is older than the key's hold, and its writer may have sent it and let
 * it go in between. */
static int still_pending(store *st, tier_mark *m)
{
    return (m->tomb ? store_tomb_pending_list(st, is_it, m) : store_pending_list(st, is_it, m)) == 1;
}

/* Sends each pending upload, then each pending tombstone, that nobody in
 * this process is sending, stopping at the first failure. */
static void catch_up(al_upload *u)
{
    tier *t = u->ref->t;
    tier_mark *v;
    size_t n;
    if (!tier_has_pending(t))
        return;
    int rc = tier_pending_list(t, &v, &n);
    for (size_t i = 0; !rc && i < n; i++) {
        tier_mark *m = &v[i];
        if (!al_inflight_take(u->dev, u->ino, m->ns, m->key))
            continue; /* its writer (or another catch-up) is sending it */
        if (!still_pending(u->st, m))
            rc = 0; /* sent since the listing */
        else
            rc = m->tomb ? tomb_send(t, u->c, u->st, m->ns, m->key)
                         : tier_upload(t, u->c, m->ns, m->key, m->version, NULL);
        if (rc == STORE_EGONE)
            rc = 0; /* replaced or removed since the listing: its mark went with it */
        al_inflight_drop(u->dev, u->ino, m->ns, m->key);
    }
    free(v);
}

void al_tier_upload_run(al_upload *u)
{
    if (!u->ref)
        return;
    u->rc = tier_upload(u->ref->t, u->c, u->ns, u->key, u->version, NULL);
    if (u->rc == STORE_EGONE)
        u->rc = 0; /* replaced or removed meanwhile: its own writer's to send */
    if (u->rc) {
        const char *m = remote_conn_message(u->c);
        snprintf(u->msg, sizeof u->msg, "%s", m[0] ? m : tier_strerror(u->rc));
        return;
    }
    /* The remote works: send what earlier writes left pending (those that
     * fail stay pending; not this write's error). */
    catch_up(u);
}

int al_tier_upload_end(al_tier *at, al_upload *u)
{
    al_tref *r = u->ref;
    if (!r)
        return 0;
    conn_give(r, u->c);
    u->c = NULL;
    u->ref = NULL;
    if (at)
        snprintf(at->msg, sizeof at->msg, "%s", u->rc ? u->msg : "");
    return u->rc ? AL_EUPLOAD : 0;
}

int al_tier_after_remove(store *st, al_tier **tp, const char *ns, const char *key)
{
    int has, rc = al_tier_use(st, tp, &has);
    if (rc || !has)
        return rc;
    if ((rc = tier_remove(al_tier_tier(*tp), al_tier_conn(*tp), ns, key))) {
        al_tier_fail(*tp, rc);
        return AL_EREMOTE;
    }
    (*tp)->msg[0] = '\0';
    return 0;
}
