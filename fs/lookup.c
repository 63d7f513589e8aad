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
 *   the kernel's entry and attribute timeouts for remote names are the
 *   same TTL (a listed name's: what is left of its listing's). 0: every
 *   lookup asks the remote. Misses: below.
 * - Threads: each FUSE worker uses its own remote connection (conn.c),
 *   so a slow remote holds only the requests that need it.
 * - Faults: every request is bounded (tier/reader.h); a failure is EIO and one
 *   log line naming the object and the cause. Nothing is kept broken: the
 *   next request tries again, so reads recover without a remount.
 * - Listed names (readdirplus, and lookups while the last listing is
 *   valid: ofs_lookup_listed()) get a slot from what the listing says,
 *   with no request: the object's length is the result's st_size (an
 *   object holds exactly the result's bytes, compressed or not in the
 *   store) and its Last-Modified the mtime. A listing has no ETag, so such
 *   a slot is unpinned: its first read (or getxattr, which needs the
 *   metadata) looks the name up, as a lookup would, and pins the slot to
 *   the version found when that version has the listed length; else the
 *   listed version is gone (ENODATA), and the new one gets a slot of its
 *   own. A slot's attributes never change: the
 *   kernel's caches of an inode stay true. An existing slot with the
 *   listed length and Last-Modified is reused, so an ls after a read
 *   keeps the inode and its pages.
 * - Misses: a name the remote does not hold is remembered for
 *   OFS_REMOTE_MISS_MS (or remote_ttl, if shorter), and the kernel is told
 *   to keep its negative entry only for what is left of that: a result
 *   put on another host is seen within OFS_REMOTE_MISS_MS, and a burst of
 *   lookups of missing names costs one request per name per that time.
 *   Lookups of one name running at once share one request (a flight).
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
    char etag[TIER_ETAG_MAX + 1]; /* the version; "" until pinned (a listed slot) */
    store_entry e;         /* e.version is the inode; e.created_ns the mtime shown */
    int64_t lastmod;       /* the object's Last-Modified, 0 when unknown */
    uint64_t created_ns;   /* the recorded write time (xattr), 0 until pinned */
    uint64_t checked;      /* common_clock_ms() of the last remote answer (or listing) */
    struct rslot *next;    /* hash chain by key (newest version of a key only) */
};

/* A name the remote did not hold, and when it said so. */
struct miss {
    char *key;
    uint64_t at;           /* common_clock_ms() */
    struct miss *next;
};

/* A lookup of one name under way; others of the name wait for its answer. */
struct flight {
    char *key;
    int done, rc, waiters;
    uint64_t miss_left;    /* its ENOENT's ms left in the miss table */
    store_entry e;
    pthread_cond_t cv;
    struct flight *next;
};

struct ofs_slots {
    pthread_mutex_t lock;           /* everything here */
    struct rslot **slots;           /* by inode - OFS_REMOTE_INO_BASE */
    size_t nslots, cap;
    struct rslot *by_key[SLOT_BUCKETS];
    struct miss *misses[SLOT_BUCKETS];
    size_t nmisses;
    struct flight *flights;         /* lookups under way (a handful) */
};

/* Misses kept at most before expired ones are swept from every bucket. */
#define MISS_SWEEP 4096u

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
        free(r->slots[i]);
    }
    for (unsigned b = 0; b < SLOT_BUCKETS; b++)
        for (struct miss *m = r->misses[b], *n; m; m = n) {
            n = m->next;
            free(m->key);
            free(m);
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

/* Fills S's metadata (and version) from the remote's answer IN; the
 * attributes (size, mtime) only when SET_ATTRS: a slot made from a
 * listing keeps the listing's. */
static void slot_fill(struct rslot *s, const tier_object *in, int set_attrs)
{
    store_entry *e = &s->e;
    if (set_attrs) {
        e->size = in->length;
        e->created_ns = (uint64_t)in->created * 1000000000u;
        s->lastmod = in->mtime;
    }
    e->original_size = in->size;
    e->truncated = in->size > in->length;
    if (in->has_tool) {
        e->has_tool = 1;
        memcpy(e->tool, in->tool, strlen(in->tool) + 1);
    }
    s->created_ns = (uint64_t)in->created * 1000000000u;
    memcpy(s->etag, in->etag, strlen(in->etag) + 1);
}

/* 1 when IN is the version slot S stands for: its ETag, or for a slot not
 * pinned yet, any version of the listed length. Last-Modified is not
 * compared here: a listing's and a HEAD's may be rounded apart by a
 * server, which would fail every first read of a listed name; a version
 * of the listed length read whole is one version's exact bytes, all the
 * contract asks (only its mtime may be the listed one's). */
static int slot_is(const struct rslot *s, const tier_object *in)
{
    if (s->etag[0])
        return strcmp(s->etag, in->etag) == 0;
    return s->e.size == in->length;
}

/* A new slot for KEY (r->lock held), the newest of its key: it replaces
 * the older one in the key chain. Its entry has only the inode set.
 * Returns it, or NULL without memory. */
static struct rslot *slot_new(struct ofs_slots *r, const char *key)
{
    struct rslot *old = slot_by_key(r, key), *s;
    struct rslot **v = common_array_grow(r->slots, r->nslots, &r->cap, sizeof *v, 64);
    if (!v)
        return NULL;
    r->slots = v;
    if (!(s = calloc(1, sizeof *s)) || !(s->key = strdup(key))) {
        free(s);
        return NULL;
    }
    s->e.version = OFS_REMOTE_INO_BASE + r->nslots;
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

/* Records the answer IN for KEY (r->lock held): the version of the newest
 * slot keeps it (and its inode; a listed slot is pinned to it), another
 * one gets a new slot. Returns the slot or NULL without memory. */
static struct rslot *slot_record(struct ofs_slots *r, const char *key, const tier_object *in)
{
    struct rslot *s = slot_by_key(r, key);
    if (s && slot_is(s, in)) {
        slot_fill(s, in, 0);
    } else {
        if (!(s = slot_new(r, key)))
            return NULL;
        slot_fill(s, in, 1);
    }
    s->checked = common_clock_ms();
    return s;
}

/* ---- misses and flights (r->lock held) ---------------------------------- */

/* How long a miss is kept, in ms: OFS_REMOTE_MISS_MS, or remote_ttl when
 * shorter. */
static uint64_t miss_ms(const struct ofs *fs)
{
    uint64_t ttl = (uint64_t)fs->remote_ttl * 1000u;
    return ttl < OFS_REMOTE_MISS_MS ? ttl : OFS_REMOTE_MISS_MS;
}

/* Drops the expired misses of bucket B (all of them when KEY is NULL),
 * and returns the ms left of KEY's miss (0: none). */
static uint64_t miss_scan(struct ofs *fs, unsigned b, const char *key)
{
    struct ofs_slots *r = fs->slots;
    uint64_t now = common_clock_ms(), keep = miss_ms(fs), left = 0;
    for (struct miss **pp = &r->misses[b], *m; (m = *pp);) {
        if (now - m->at >= keep) {
            *pp = m->next;
            free(m->key);
            free(m);
            r->nmisses--;
            continue;
        }
        if (key && strcmp(m->key, key) == 0)
            left = keep - (now - m->at);
        pp = &m->next;
    }
    return left;
}

/* Remembers that the remote does not hold KEY (no memory: not kept). */
static void miss_add(struct ofs *fs, const char *key)
{
    struct ofs_slots *r = fs->slots;
    unsigned b = key_hash(key);
    if (miss_ms(fs) == 0)
        return;
    if (r->nmisses >= MISS_SWEEP)
        for (unsigned i = 0; i < SLOT_BUCKETS; i++)
            miss_scan(fs, i, NULL);
    if (miss_scan(fs, b, key))
        return;
    struct miss *m = malloc(sizeof *m);
    if (!m || !(m->key = strdup(key))) {
        free(m);
        return;
    }
    m->at = common_clock_ms();
    m->next = r->misses[b];
    r->misses[b] = m;
    r->nmisses++;
}

/* Ends flight F with RC (and E, MISS_LEFT): its waiters take the answer,
 * the last one out frees it. */
static void flight_land(struct ofs_slots *r, struct flight *f, int rc, const store_entry *e,
                        uint64_t miss_left)
{
    for (struct flight **pp = &r->flights; *pp; pp = &(*pp)->next)
        if (*pp == f) {
            *pp = f->next;
            break;
        }
    f->done = 1;
    f->rc = rc;
    f->miss_left = miss_left;
    if (rc == 0)
        f->e = *e;
    pthread_cond_broadcast(&f->cv);
    if (f->waiters == 0) {
        pthread_cond_destroy(&f->cv);
        free(f->key);
        free(f);
    }
}

/* Waits for flight F's answer (r->lock held; F is released). */
static int flight_wait(struct ofs_slots *r, struct flight *f, store_entry *e, uint64_t *miss_left)
{
    f->waiters++;
    while (!f->done)
        pthread_cond_wait(&f->cv, &r->lock);
    int rc = f->rc;
    if (rc == 0)
        *e = f->e;
    *miss_left = f->miss_left;
    if (--f->waiters == 0) {
        pthread_cond_destroy(&f->cv);
        free(f->key);
        free(f);
    }
    return rc;
}

/* A new flight for KEY, NULL without memory (the lookup then flies alone). */
static struct flight *flight_new(struct ofs_slots *r, const char *key)
{
    struct flight *f = calloc(1, sizeof *f);
    if (!f || !(f->key = strdup(key))) {
        free(f);
        return NULL;
    }
    pthread_cond_init(&f->cv, NULL);
    f->next = r->flights;
    r->flights = f;
    return f;
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

/* 1 when this host's answer for KEY is "removed" whatever the remote
 * holds (removed here, its tombstone not yet there); *TOMBED (may be NULL)
 * gets 1 when KEY has a local tombstone of any reason. The local tombstone
 * decides as in the library's answer (agentlink/lookup.c): removed here
 * with its tombstone pending is removed; evicted here and unknown there
 * is evicted. */
static int removed_here(struct ofs *fs, const char *key, int *tombed)
{
    store_tomb t;
    int tomb = store_lookup(fs->st, fs->ns, key, NULL, &t) == STORE_EEVICTED;
    if (tombed)
        *tombed = tomb;
    return tomb && t.reason == STORE_REASON_REMOVED && tier_tomb_pending(fs->tier, fs->ns, key);
}

/* Asks the remote for KEY (with its first bytes) and records what it
 * holds: 0 and *E; ENOENT, ENODATA, EIO (logged), ENOMEM. TOMBED: KEY has
 * a local tombstone. */
static int ask_remote(struct ofs *fs, const char *key, int tombed, store_entry *e)
{
    struct ofs_slots *r = fs->slots;
    tier_object in;
    tier_conn *c;
    uint64_t got;
    if (!(c = ofs_conn_get(fs)))
        return ENOMEM;
    struct first f = {malloc(OFS_RWIN_FIRST), 0, OFS_RWIN_FIRST}; /* none: a HEAD only */
    uint64_t start = common_clock_ns();
    int rc = tier_read_lookup(fs->tier, c, fs->ns, key, f.p ? f.cap : 0, keep_first, &f, &got, &in);
    int gone = rc == TIER_ENOTFOUND || rc == TIER_ETOMB;
    if (f.p) { /* the GET of the first bytes is a fetch; a failed one a fetch error (counters.h) */
        ofs_fetch_done(&fs->count, start, rc != 0 && !gone);
        ofs_count(&fs->count.fetch_bytes, f.len);
    }
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
    struct rslot *s = slot_record(r, key, &in);
    if (s)
        *e = s->e;
    pthread_mutex_unlock(&r->lock);
    if (s && f.len == (in.length < f.cap ? in.length : f.cap))
        ofs_window_offer(fs, (fuse_ino_t)e->version, f.p, f.len);
    free(f.p);
    return s ? 0 : ENOMEM;
}

int ofs_lookup_name(struct ofs *fs, const char *key, store_entry *e, uint64_t *miss_left)
{
    struct ofs_slots *r = fs->slots;
    int tombed, rc;
    *miss_left = 0;
    if (removed_here(fs, key, &tombed))
        return ENODATA;
    pthread_mutex_lock(&r->lock);
    struct rslot *s = slot_by_key(r, key);
    if (s && common_clock_ms() - s->checked < (uint64_t)fs->remote_ttl * 1000u) {
        *e = s->e;
        pthread_mutex_unlock(&r->lock);
        return 0;
    }
    if ((*miss_left = miss_scan(fs, key_hash(key), key)) != 0) {
        pthread_mutex_unlock(&r->lock);
        return ENOENT;
    }
    struct flight *f;
    for (f = r->flights; f && strcmp(f->key, key) != 0; f = f->next)
        ;
    if (f) { /* asked already: its answer is ours */
        rc = flight_wait(r, f, e, miss_left);
        pthread_mutex_unlock(&r->lock);
        return rc;
    }
    f = flight_new(r, key);
    pthread_mutex_unlock(&r->lock);
    rc = ask_remote(fs, key, tombed, e);
    pthread_mutex_lock(&r->lock);
    if (rc == ENOENT) {
        miss_add(fs, key);
        *miss_left = miss_ms(fs);
    }
    if (f)
        flight_land(r, f, rc, e, *miss_left);
    pthread_mutex_unlock(&r->lock);
    return rc;
}

int ofs_lookup_listed(struct ofs *fs, const char *key, uint64_t size, int64_t mtime, uint64_t at_ms,
                      store_entry *e)
{
    struct ofs_slots *r = fs->slots;
    if (size == 0)
        return ENOENT; /* an empty result, or a listing without a Size: ask */
    if (removed_here(fs, key, NULL))
        return ENODATA;
    pthread_mutex_lock(&r->lock);
    struct rslot *s = slot_by_key(r, key);
    if (s && s->checked >= at_ms) {
        /* known since the listing was made: that answer is newer */
    } else if (s && s->e.size == size && s->lastmod != 0 && s->lastmod == mtime) {
        s->checked = at_ms; /* the same version, as of the listing */
    } else if ((s = slot_new(r, key))) {
        s->e.size = size;
        s->e.original_size = size;
        s->e.created_ns = mtime > 0 ? (uint64_t)mtime * 1000000000u : 0;
        s->lastmod = mtime;
        s->checked = at_ms;
    }
    if (s)
        *e = s->e;
    pthread_mutex_unlock(&r->lock);
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

/* Pins listed slot S (inode INO, key KEY, r->lock not held) to the
 * version the remote holds now, when that is the listed one: 0; ENODATA
 * when the listed version is gone (replaced: the new one gets its own
 * slot; removed); EIO (logged); ENOMEM. The first bytes fetched go to the
 * windows. */
static int pin(struct ofs *fs, fuse_ino_t ino, const char *key)
{
    store_entry e;
    if (removed_here(fs, key, NULL))
        return ENODATA;
    int rc = ask_remote(fs, key, 0, &e); /* pins S when it is still the version */
    if (rc == ENOENT)
        return ENODATA; /* the listed version was removed since */
    if (rc)
        return rc;
    if ((fuse_ino_t)e.version != ino) {
        if (fs->debug)
            fuse_log(FUSE_LOG_DEBUG, "offloadfs: '%s': the listed version is gone (replaced)\n", key);
        return ENODATA;
    }
    return 0;
}

/* Slot INO's object into *O (when not NULL) and its entry, with the
 * recorded write time as created_ns, into *E (when not NULL), pinning a
 * listed slot first (pin()). 0, ENODATA when this mount does not know INO
 * or its version is gone, EIO, ENOMEM. */
static int slot_pinned(struct ofs *fs, fuse_ino_t ino, struct ofs_object *o, store_entry *e)
{
    struct ofs_slots *r = fs->slots;
    char key[STORE_NAME_MAX + 1];
    if (!r)
        return ENODATA;
    for (int tries = 0;; tries++) {
        int known, pinned;
        pthread_mutex_lock(&r->lock);
        struct rslot *s = slot_by_ino(r, ino);
        known = s != NULL;
        pinned = s && s->etag[0];
        if (pinned && o) {
            o->ino = ino;
            snprintf(o->key, sizeof o->key, "%s", s->key);
            snprintf(o->etag, sizeof o->etag, "%s", s->etag);
            o->length = s->e.size;
        }
        if (pinned && e) {
            *e = s->e;
            e->created_ns = s->created_ns;
        }
        if (known && !pinned)
            snprintf(key, sizeof key, "%s", s->key);
        pthread_mutex_unlock(&r->lock);
        if (!known)
            return ENODATA;
        if (pinned)
            return 0;
        if (tries > 0)
            return EIO; /* pinned by pin(), yet not: cannot happen */
        int rc = pin(fs, ino, key);
        if (rc)
            return rc;
    }
}

int ofs_lookup_object(struct ofs *fs, fuse_ino_t ino, struct ofs_object *o)
{
    return slot_pinned(fs, ino, o, NULL);
}

int ofs_lookup_meta(struct ofs *fs, fuse_ino_t ino, store_entry *e)
{
    return slot_pinned(fs, ino, NULL, e);
}

int ofs_lookup_version(struct ofs *fs, fuse_ino_t ino, char *etag, size_t cap)
{
    struct ofs_slots *r = fs->slots;
    int rc = ENOENT;
    if (!r)
        return ENOENT;
    pthread_mutex_lock(&r->lock);
    struct rslot *s = slot_by_ino(r, ino);
    if (s && s->etag[0] && strlen(s->etag) < cap) {
        memcpy(etag, s->etag, strlen(s->etag) + 1);
        rc = 0;
    }
    pthread_mutex_unlock(&r->lock);
    return rc;
}
