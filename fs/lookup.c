/* lookup.c -- remote names (doc/remote.md): a name the local store does
 * not hold live is looked up on the store's remote, and a result found
 * there gets an inode (a slot) whose reads window.c serves.
 *
 * Why it is shaped so:
 * - Inodes: a remote result is one object version (its ETag), given an
 *   inode number of its own at or above OFS_REMOTE_INO_BASE (local inodes
 *   are store versions, far below). A replaced object is a new inode, as a
 *   replaced local key is, so the kernel may cache an inode's pages for
 *   ever; reads ask for that ETag only (If-Match), so a handle on an old
 *   version reads its bytes or ENODATA, never a mix. An answer without a
 *   usable ETag makes no inode (EIO, logged): nothing could pin its
 *   version.
 * - Staleness: a name's remote answer is reused for remote_ttl seconds;
 *   the kernel's entry and attribute timeouts for remote names (and for
 *   negative entries, which another host's write cannot invalidate) are
 *   the same TTL. 0: every lookup asks the remote.
 * - Threads: each FUSE worker uses its own remote connection (conn.c),
 *   so a slow remote holds only the requests that need it.
 * - Faults: every request is bounded (tier/reader.h); a failure is EIO and one
 *   log line naming the object and the cause. Nothing is kept broken: the
 *   next request tries again, so reads recover without a remount.
 * - The slot table only grows (one slot per remote version seen by this
 *   mount, a few hundred bytes each).
 * - Listings (readdir) are listing.c's; the bytes of a read window.c's,
 *   which this file feeds (the first bytes of a lookup) and never asks.
 */
#include "common/array.h"
#include "common/clock.h"
#include "fs/fs.h"
#include "fs/conn.h"
#include "fs/counters.h"
#include "fs/errmap.h"
#include "fs/lookup.h"
#include "fs/window.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOT_BUCKETS 4096u

struct rslot {
    char *key;
    char *etag;
    store_entry e;         /* e.version is the inode */
    uint64_t checked;      /* common_clock_ms() of the last remote answer */
    struct rslot *next;    /* hash chain by key (newest version of a key only) */
};

struct ofs_slots {
    pthread_mutex_t lock;           /* slots, by_key */
    struct rslot **slots;           /* by inode - OFS_REMOTE_INO_BASE */
    size_t nslots, cap;
    struct rslot *by_key[SLOT_BUCKETS];
};

static unsigned key_hash(const char *k)
{
    unsigned h = 2166136261u;
    for (; *k; k++)
        h = (h ^ (unsigned char)*k) * 16777619u;
    return h % SLOT_BUCKETS;
}

int ofs_lookup_init(struct ofs *fs)
{
    struct ofs_slots *r = calloc(1, sizeof *r);
    if (!r)
        return ENOMEM;
    pthread_mutex_init(&r->lock, NULL);
    fs->slots = r;
    return 0;
}

void ofs_lookup_free(struct ofs *fs)
{
    struct ofs_slots *r = fs->slots;
    if (!r)
        return;
    for (size_t i = 0; i < r->nslots; i++) {
        free(r->slots[i]->key);
        free(r->slots[i]->etag);
        free(r->slots[i]);
    }
    free(r->slots);
    pthread_mutex_destroy(&r->lock);
    free(r);
    fs->slots = NULL;
}

/* The newest slot of KEY, with r->lock held; NULL when none. */
static struct rslot *slot_by_key(struct ofs_slots *r, const char *key)
{
    for (struct rslot *s = r->by_key[key_hash(key)]; s; s = s->next)
        if (strcmp(s->key, key) == 0)
            return s;
    return NULL;
}

/* Fills E from the remote's answer (inode INO). */
static void entry_from_object(store_entry *e, uint64_t ino, const tier_object *in)
{
    memset(e, 0, sizeof *e);
    e->version = ino;
    e->size = in->length;
    e->created_ns = (uint64_t)in->created * 1000000000u;
    e->original_size = in->size;
    e->truncated = in->size > in->length;
    if (in->has_tool) {
        e->has_tool = 1;
        memcpy(e->tool, in->tool, strlen(in->tool) + 1);
    }
}

/* Records the answer IN for KEY (r->lock held): the same ETag keeps its
 * slot (and inode), another one gets a new slot that replaces the old in
 * the key chain. Returns the slot or NULL without memory. */
static struct rslot *slot_record(struct ofs_slots *r, const char *key, const tier_object *in)
{
    struct rslot *old = slot_by_key(r, key), *s;
    if (old && strcmp(old->etag, in->etag) == 0) {
        old->checked = common_clock_ms();
        return old;
    }
    struct rslot **v = common_array_grow(r->slots, r->nslots, &r->cap, sizeof *v, 64);
    if (!v)
        return NULL;
    r->slots = v;
    if (!(s = calloc(1, sizeof *s)) || !(s->key = strdup(key)) ||
        !(s->etag = strdup(in->etag))) {
        if (s)
            free(s->key);
        free(s);
        return NULL;
    }
    entry_from_object(&s->e, OFS_REMOTE_INO_BASE + r->nslots, in);
    s->checked = common_clock_ms();
    r->slots[r->nslots++] = s;
    struct rslot **pp = &r->by_key[key_hash(key)];
    if (old) /* unlink the older version: lookups find the new one */
        for (; *pp; pp = &(*pp)->next)
            if (*pp == old) {
                *pp = old->next;
                break;
            }
    pp = &r->by_key[key_hash(key)];
    s->next = *pp;
    *pp = s;
    return s;
}

/* The first bytes a lookup fetches: up to CAP kept, the rest (from a
 * server that ignores the range) dropped. */
struct first {
    char *p;
    size_t len, cap;
};

static int keep_first(void *arg, const void *data, size_t n)
{
    struct first *f = arg;
    if (n > f->cap - f->len)
        n = f->cap - f->len;
    memcpy(f->p + f->len, data, n);
    f->len += n;
    return 0;
}

int ofs_lookup_name(struct ofs *fs, const char *key, store_entry *e)
{
    struct ofs_slots *r = fs->slots;
    tier_object in;
    tier_conn *c;
    uint64_t got;
    store_tomb t;
    /* The local tombstone, for the library's answer (agentlink/lookup.c):
     * removed here with its tombstone pending is removed, whatever the
     * remote still holds; evicted here and unknown there is evicted. */
    int tombed = store_lookup(fs->st, fs->ns, key, NULL, &t) == STORE_EEVICTED;
    if (tombed && t.reason == STORE_REASON_REMOVED && tier_tomb_pending(fs->tier, fs->ns, key))
        return ENODATA;
    pthread_mutex_lock(&r->lock);
    struct rslot *s = slot_by_key(r, key);
    if (s && common_clock_ms() - s->checked < (uint64_t)fs->remote_ttl * 1000u) {
        *e = s->e;
        pthread_mutex_unlock(&r->lock);
        return 0;
    }
    pthread_mutex_unlock(&r->lock);
    if (!(c = ofs_conn_get(fs)))
        return ENOMEM;
    struct first f = {malloc(OFS_RWIN_FIRST), 0, OFS_RWIN_FIRST}; /* none: a HEAD only */
    uint64_t start = common_clock_ns();
    int rc = tier_read_lookup(fs->tier, c, fs->ns, key, f.p ? f.cap : 0, keep_first, &f, &got, &in);
    int gone = rc == TIER_ENOTFOUND || rc == TIER_ETOMB;
    if (f.p) /* the GET of the first bytes is a fetch; a failed one a fetch error (counters.h) */
        ofs_fetch_done(&fs->count, start, rc != 0 && !gone);
    if (rc) {
        free(f.p);
        if (rc == TIER_ENOTFOUND && tombed)
            return ENODATA; /* evicted here, unknown there: evicted */
        if (gone)
            return ofs_errno(rc);
        ofs_count(&fs->count.lookup_errors, !f.p && rc != ENOMEM); /* a HEAD only: no fetch */
        fuse_log(FUSE_LOG_ERR, "offloadfs: remote lookup of '%s': %s\n", key, ofs_conn_why(c, rc));
        return rc == ENOMEM ? ENOMEM : EIO;
    }
    if (!in.etag[0]) {
        /* The windows of a read pin the version with If-Match; without an
         * ETag nothing can (a Last-Modified has whole seconds, a length
         * misses a same-size replace), so such a server is refused rather
         * than risk a read that mixes two versions. */
        fuse_log(FUSE_LOG_ERR, "offloadfs: remote lookup of '%s': the server sent no usable ETag, so "
                 "a read could mix two versions of the object: refused (offloadfs needs an S3 "
                 "server that sends ETags)\n", key);
        free(f.p);
        return EIO;
    }
    pthread_mutex_lock(&r->lock);
    s = slot_record(r, key, &in);
    if (s)
        *e = s->e;
    pthread_mutex_unlock(&r->lock);
    if (s && f.len == (in.length < f.cap ? in.length : f.cap))
        ofs_window_offer(fs, (fuse_ino_t)e->version, f.p, f.len);
    free(f.p);
    return s ? 0 : ENOMEM;
}

/* The slot of inode INO, with r->lock held; NULL when unknown. */
static struct rslot *slot_by_ino(struct ofs_slots *r, fuse_ino_t ino)
{
    uint64_t i = (uint64_t)ino - OFS_REMOTE_INO_BASE;
    return i < r->nslots ? r->slots[i] : NULL;
}

int ofs_lookup_entry(struct ofs *fs, fuse_ino_t ino, store_entry *e)
{
    struct ofs_slots *r = fs->slots;
    if (!r)
        return ENODATA;
    pthread_mutex_lock(&r->lock);
    struct rslot *s = slot_by_ino(r, ino);
    if (s && e)
        *e = s->e;
    pthread_mutex_unlock(&r->lock);
    return s ? 0 : ENODATA;
}

int ofs_lookup_object(struct ofs *fs, fuse_ino_t ino, struct ofs_object *o)
{
    struct ofs_slots *r = fs->slots;
    if (!r)
        return ENODATA;
    pthread_mutex_lock(&r->lock);
    struct rslot *s = slot_by_ino(r, ino);
    if (s) {
        o->ino = ino;
        snprintf(o->key, sizeof o->key, "%s", s->key);
        snprintf(o->etag, sizeof o->etag, "%s", s->etag);
        o->length = s->e.size;
    }
    pthread_mutex_unlock(&r->lock);
    return s ? 0 : ENODATA;
}
