/* remote.c -- the daemon's side of the remote tier (doc/remote.md): a
 * name the local store does not hold live is looked up on the store's
 * remote, and a result found there is served by ranged GETs.
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
 * - Threads: each FUSE worker keeps its own remote connection (a
 *   thread-specific key of this mount, freed as the thread ends), so a
 *   slow remote holds only the requests that need it.
 * - Faults: every request is bounded (remote.h); a failure is EIO and one
 *   log line naming the object and the cause. Nothing is kept broken: the
 *   next request tries again, so reads recover without a remount.
 * - The slot table only grows (one slot per remote version seen by this
 *   mount, a few hundred bytes each).
 * - Listings (readdir) are remote_list.c's.
 */
#include "fs/fs.h"
#include "tier/tier.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SLOT_BUCKETS 4096u

_Static_assert(OFS_REMOTE_NO_RETRY == REMOTE_NO_RETRY, "fs.h and remote.h agree");

struct rslot {
    char *key;
    char *etag;
    store_entry e;         /* e.version is the inode */
    double checked;        /* monotonic seconds of the last remote answer */
    struct rslot *next;    /* hash chain by key (newest version of a key only) */
};

struct ofs_remote {
    tier *t;
    pthread_key_t conn_key;
    pthread_mutex_t lock;           /* slots, by_key */
    struct rslot **slots;           /* by inode - OFS_REMOTE_INO_BASE */
    size_t nslots, cap;
    struct rslot *by_key[SLOT_BUCKETS];
};

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned key_hash(const char *k)
{
    unsigned h = 2166136261u;
    for (; *k; k++)
        h = (h ^ (unsigned char)*k) * 16777619u;
    return h % SLOT_BUCKETS;
}

static void conn_free(void *c)
{
    remote_conn_free(c);
}

/* This thread's connection, made on first use; NULL without memory. */
static remote_conn *thread_conn(struct ofs_remote *r)
{
    remote_conn *c = pthread_getspecific(r->conn_key);
    if (!c && remote_conn_new(&c, tier_remote(r->t)) == 0 && pthread_setspecific(r->conn_key, c)) {
        remote_conn_free(c);
        c = NULL;
    }
    return c;
}

int ofs_remote_probe(const char *files, const char *store_abs)
{
    store *st = NULL;
    tier *t = NULL;
    remote_conn *c = NULL;
    char msg[512];
    int rc = store_open(&st, files, STORE_RDONLY), ret = 0;
    if (!rc)
        rc = tier_open(&t, st, NULL, msg, sizeof msg);
    if (rc == TIER_ENONE || (rc && rc != REMOTE_ECONFIG)) { /* no remote; store errors: reported elsewhere */
        store_close(st);
        return 0;
    }
    if (rc == REMOTE_ECONFIG) {
        fprintf(stderr, "offloadfs: store '%s': its remote: %s; nothing was mounted\n", store_abs, msg);
        ret = 1;
    } else if (remote_conn_new(&c, tier_remote(t)) == 0 && (rc = remote_check(c)) != 0) {
        fprintf(stderr, "offloadfs: warning: remote %s: %s (%s); mounting: local results are "
                "served, remote ones answer EIO until it works\n",
                remote_conn_message(c), remote_strerror(rc),
                rc == REMOTE_EDENIED ? "check AWS_ACCESS_KEY_ID / AWS_PROFILE" :
                rc == REMOTE_ENOBUCKET ? "create the bucket or fix the URL (agentlink init --remote)" :
                "is the endpoint up?");
    }
    remote_conn_free(c);
    tier_close(t);
    store_close(st);
    return ret;
}

int ofs_remote_open(struct ofs *fs)
{
    char msg[512];
    tier *t = NULL;
    remote_options opt = {.stall_s = fs->remote_stall, .retries = fs->remote_retries};
    fs->remote = NULL;
    int rc = tier_open(&t, fs->st, &opt, msg, sizeof msg);
    if (rc == TIER_ENONE)
        return 0;
    if (rc) {
        fuse_log(FUSE_LOG_ERR, "offloadfs: remote tier off: %s\n", msg[0] ? msg : tier_strerror(rc));
        return rc > 0 ? rc : EINVAL;
    }
    struct ofs_remote *r = calloc(1, sizeof *r);
    if (!r || pthread_key_create(&r->conn_key, conn_free)) {
        free(r);
        tier_close(t);
        return ENOMEM;
    }
    pthread_mutex_init(&r->lock, NULL);
    r->t = t;
    fs->remote = r;
    if ((rc = ofs_rlists_init(fs))) {
        ofs_remote_close(fs);
        return rc;
    }
    fuse_log(FUSE_LOG_INFO, "offloadfs: remote s3://%s/%s at %s, ttl %u s, failures bounded at %llu ms\n",
             remote_bucket(tier_remote(t)), remote_prefix(tier_remote(t)),
             remote_endpoint(tier_remote(t)), fs->remote_ttl,
             (unsigned long long)remote_bound_ms(tier_remote(t)));
    return 0;
}

void ofs_remote_close(struct ofs *fs)
{
    struct ofs_remote *r = fs->remote;
    if (!r)
        return;
    ofs_rlists_free(fs); /* first: its thread uses the tier and its own connection */
    remote_conn_free(pthread_getspecific(r->conn_key)); /* this thread's */
    pthread_key_delete(r->conn_key);
    for (size_t i = 0; i < r->nslots; i++) {
        free(r->slots[i]->key);
        free(r->slots[i]->etag);
        free(r->slots[i]);
    }
    free(r->slots);
    pthread_mutex_destroy(&r->lock);
    tier_close(r->t);
    free(r);
    fs->remote = NULL;
}

/* The newest slot of KEY, with r->lock held; NULL when none. */
static struct rslot *slot_by_key(struct ofs_remote *r, const char *key)
{
    for (struct rslot *s = r->by_key[key_hash(key)]; s; s = s->next)
        if (strcmp(s->key, key) == 0)
            return s;
    return NULL;
}

/* Fills E from the remote's answer (inode INO). */
static void entry_from_info(store_entry *e, uint64_t ino, const remote_info *in)
{
    memset(e, 0, sizeof *e);
    e->version = ino;
    e->size = in->length;
    e->created_ns = (uint64_t)(in->created > 0 ? in->created : 0) * 1000000000u;
    e->original_size = in->size;
    e->truncated = in->size > in->length;
    if (in->tool && strlen(in->tool) <= STORE_TOOL_MAX) {
        e->has_tool = 1;
        memcpy(e->tool, in->tool, strlen(in->tool) + 1);
    }
}

/* Records the answer IN for KEY (r->lock held): the same ETag keeps its
 * slot (and inode), another one gets a new slot that replaces the old in
 * the key chain. Returns the slot or NULL without memory. */
static struct rslot *slot_record(struct ofs_remote *r, const char *key, const remote_info *in)
{
    struct rslot *old = slot_by_key(r, key), *s;
    if (old && in->etag && strcmp(old->etag, in->etag) == 0) {
        old->checked = mono_now();
        return old;
    }
    if (r->nslots == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        struct rslot **v = realloc(r->slots, cap * sizeof *v);
        if (!v)
            return NULL;
        r->slots = v;
        r->cap = cap;
    }
    if (!(s = calloc(1, sizeof *s)) || !(s->key = strdup(key)) ||
        !(s->etag = strdup(in->etag ? in->etag : ""))) {
        if (s)
            free(s->key);
        free(s);
        return NULL;
    }
    entry_from_info(&s->e, OFS_REMOTE_INO_BASE + r->nslots, in);
    s->checked = mono_now();
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

int ofs_remote_lookup(struct ofs *fs, const char *key, store_entry *e)
{
    struct ofs_remote *r = fs->remote;
    remote_info in;
    remote_conn *c;
    uint64_t got;
    store_tomb t;
    /* The local tombstone, for the library's answer (agentlink/lookup.c):
     * removed here with its tombstone pending is removed, whatever the
     * remote still holds; evicted here and unknown there is evicted. */
    int tombed = store_lookup(fs->st, fs->ns, key, NULL, &t) == STORE_EEVICTED;
    if (tombed && t.reason == STORE_REASON_REMOVED && tier_tomb_pending(r->t, fs->ns, key))
        return ENODATA;
    pthread_mutex_lock(&r->lock);
    struct rslot *s = slot_by_key(r, key);
    if (s && mono_now() - s->checked < (double)fs->remote_ttl) {
        *e = s->e;
        pthread_mutex_unlock(&r->lock);
        return 0;
    }
    pthread_mutex_unlock(&r->lock);
    if (!(c = thread_conn(r)))
        return ENOMEM;
    struct first f = {malloc(OFS_RWIN_FIRST), 0, OFS_RWIN_FIRST}; /* none: a HEAD only */
    uint64_t start = ofs_metrics_clock();
    int rc = tier_lookup_first(r->t, c, fs->ns, key, f.p ? f.cap : 0, keep_first, &f, &got, &in);
    int gone = rc == REMOTE_ENOTFOUND || rc == TIER_ETOMB;
    if (f.p) /* the GET of the first bytes is a fetch; a failed one a fetch error (fs.h) */
        ofs_metrics_fetch_done(fs, start, rc != 0 && !gone);
    if (rc) {
        free(f.p);
        if (rc == REMOTE_ENOTFOUND)
            return tombed ? ENODATA : ENOENT;
        if (rc == TIER_ETOMB)
            return ENODATA;
        ofs_count(&fs->count.lookup_errors, !f.p && rc != ENOMEM); /* a HEAD only: no fetch */
        fuse_log(FUSE_LOG_ERR, "offloadfs: remote lookup of '%s': %s\n", key, ofs_remote_why(c, rc));
        return rc == ENOMEM ? ENOMEM : EIO;
    }
    if (!in.etag) {
        /* The windows of a read pin the version with If-Match; without an
         * ETag nothing can (a Last-Modified has whole seconds, a length
         * misses a same-size replace), so such a server is refused rather
         * than risk a read that mixes two versions. */
        fuse_log(FUSE_LOG_ERR, "offloadfs: remote lookup of '%s': the server sent no usable ETag, so "
                 "a read could mix two versions of the object: refused (offloadfs needs an S3 "
                 "server that sends ETags)\n", key);
        free(f.p);
        remote_info_clear(&in);
        return EIO;
    }
    pthread_mutex_lock(&r->lock);
    s = slot_record(r, key, &in);
    if (s)
        *e = s->e;
    pthread_mutex_unlock(&r->lock);
    if (s && f.len == (in.length < f.cap ? in.length : f.cap))
        ofs_rwin_offer(fs, (fuse_ino_t)e->version, f.p, f.len);
    free(f.p);
    remote_info_clear(&in);
    return s ? 0 : ENOMEM;
}

/* The slot of inode INO, with r->lock held; NULL when unknown. */
static struct rslot *slot_by_ino(struct ofs_remote *r, fuse_ino_t ino)
{
    uint64_t i = (uint64_t)ino - OFS_REMOTE_INO_BASE;
    return i < r->nslots ? r->slots[i] : NULL;
}

int ofs_remote_entry(struct ofs *fs, fuse_ino_t ino, store_entry *e)
{
    struct ofs_remote *r = fs->remote;
    if (!r)
        return ENODATA;
    pthread_mutex_lock(&r->lock);
    struct rslot *s = slot_by_ino(r, ino);
    if (s && e)
        *e = s->e;
    pthread_mutex_unlock(&r->lock);
    return s ? 0 : ENODATA;
}

int ofs_remote_slot(struct ofs *fs, fuse_ino_t ino, char *key, char *etag, size_t etag_cap,
                    uint64_t *length)
{
    struct ofs_remote *r = fs->remote;
    if (!r)
        return ENODATA;
    pthread_mutex_lock(&r->lock);
    struct rslot *s = slot_by_ino(r, ino);
    if (s) {
        snprintf(key, STORE_NAME_MAX + 1, "%s", s->key);
        snprintf(etag, etag_cap, "%s", s->etag);
        *length = s->e.size;
    }
    pthread_mutex_unlock(&r->lock);
    return s ? 0 : ENODATA;
}

struct remote_conn *ofs_remote_conn(struct ofs *fs)
{
    return fs->remote ? thread_conn(fs->remote) : NULL;
}

const char *ofs_remote_why(const struct remote_conn *c, int rc)
{
    const char *m = c ? remote_conn_message(c) : "";
    return m[0] ? m : tier_strerror(rc);
}

struct tier *ofs_remote_tier(struct ofs *fs)
{
    return fs->remote ? fs->remote->t : NULL;
}
