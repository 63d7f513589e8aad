/* listing.c -- the remote's names of the namespace, for readdir.
 *
 * Why it is shaped so:
 * - The kernel serialises lookups and readdirs of one directory (libfuse
 *   3.14 never asks it for parallel directory operations), and a process
 *   waiting on a FUSE request cannot be killed until the daemon answers.
 *   So no readdir fetches a listing itself: a thread of this mount (the
 *   lister) does, and a readdir waits for it at most OFS_REMOTE_LIST_WAIT
 *   seconds, then answers with what there is. A lookup of a local result
 *   in the mount root therefore waits at most that long, whatever the
 *   remote does, and so does an ls. A readdir whose caller got a signal
 *   (the kernel interrupts the request) stops waiting at once.
 * - A listing is a snapshot: the names sorted and made unique here, in one
 *   block, shared by reference. The order and the uniqueness of what the
 *   server sends are not relied on (a server that lists out of order would
 *   otherwise lose names: readdir resumes after the last name sent).
 * - A directory handle keeps the snapshot its first remote batch used, so
 *   one ls fetches the listing once, whatever remote_ttl is, and its later
 *   batches and seeks count in the same names.
 * - Each name keeps the listing's Size and LastModified: readdirplus gives
 *   remote names their attributes from them (ops.c, lookup.c), and a
 *   lookup asks the valid listing (ofs_listing_find()) before the remote,
 *   so ls -l costs the listing and nothing per name.
 * - Between handles a snapshot is reused for remote_ttl seconds; one that
 *   came after its readdir stopped waiting is used by the next readdir
 *   whatever its age. Until a new one comes, the last one is served.
 * - Bounds, whatever the server answers (doc/remote.md, "Listings"): at
 *   most remote_list_max names (and OFS_REMOTE_LIST_BYTES of them), at
 *   most remote_list_seconds per fetch, and a repeated continuation token
 *   ends it (the tier's listing). Past a bound the fetch fails, logged;
 *   the last good snapshot (or none) is served and the remote is not
 *   listed again for OFS_REMOTE_LIST_BACKOFF_MS.
 */
#include "common/array.h"
#include "common/buf.h"
#include "common/clock.h"
#include "fs/fs.h"
#include "fs/conn.h"
#include "fs/counters.h"
#include "fs/listing.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define OFS_REMOTE_LIST_BACKOFF_MS 10000u
#define LIST_FULL E2BIG /* rl_add(): past a bound of names */

/* One name of a listing: where its name starts in the buffer, and what
 * the listing said of its object. */
struct rname {
    size_t off;       /* into the build's buffer */
    uint64_t size;    /* the object's length: the result's st_size */
    int64_t mtime;    /* its Last-Modified, Unix seconds */
};

struct ofs_rlist {
    int refs;      /* under the cache's lock */
    size_t n;
    char **names;  /* sorted, unique; into buf */
    uint64_t *size; /* of names[i]: the object's length */
    int64_t *mtime; /* of names[i]: its Last-Modified */
    uint64_t at;   /* when the lister got it (common_clock_ms()) */
    char *buf;     /* the names, each ended by a NUL */
};

struct ofs_rlists {
    pthread_mutex_t lock;
    pthread_cond_t want;     /* wanted or quit was set */
    pthread_cond_t done;     /* a fetch ended */
    pthread_t lister;
    int running;             /* the lister was started */
    int quit;                /* it is to end (unmount) */
    int wanted;              /* a readdir wants a new listing */
    int fetching;            /* the lister is fetching one */
    unsigned long gen;       /* fetches ended so far */
    struct ofs_rlist *last;  /* the last good listing, or NULL */
    int unused;              /* no readdir has taken it yet */
    uint64_t at, retry_at;   /* when it came; no fetch before (common_clock_ms()) */
};

int ofs_listing_init(struct ofs *fs)
{
    struct ofs_rlists *rl = calloc(1, sizeof *rl);
    if (!rl)
        return ENOMEM;
    pthread_mutex_init(&rl->lock, NULL);
    pthread_cond_init(&rl->want, NULL);
    pthread_cond_init(&rl->done, NULL);
    fs->rlists = rl;
    return 0;
}

static void rlist_free(struct ofs_rlist *l)
{
    if (!l)
        return;
    free(l->names);
    free(l->size);
    free(l->mtime);
    free(l->buf);
    free(l);
}

/* Drops a reference, with the cache's lock held. */
static void rlist_put(struct ofs_rlist *l)
{
    if (l && --l->refs == 0)
        rlist_free(l);
}

void ofs_listing_free(struct ofs *fs)
{
    struct ofs_rlists *rl = fs->rlists;
    if (!rl)
        return;
    pthread_mutex_lock(&rl->lock);
    rl->quit = 1; /* a fetch under way stops within about a second */
    pthread_cond_signal(&rl->want);
    pthread_mutex_unlock(&rl->lock);
    if (rl->running)
        pthread_join(rl->lister, NULL);
    rlist_put(rl->last);
    pthread_cond_destroy(&rl->done);
    pthread_cond_destroy(&rl->want);
    pthread_mutex_destroy(&rl->lock);
    free(rl);
    fs->rlists = NULL;
}

void ofs_listing_drop(struct ofs *fs, struct ofs_rlist *l)
{
    if (!l || !fs->rlists)
        return;
    pthread_mutex_lock(&fs->rlists->lock);
    rlist_put(l);
    pthread_mutex_unlock(&fs->rlists->lock);
}

/* ---- fetching ---------------------------------------------------------- */

/* A listing being read: names appended to one buffer, their offsets apart
 * (the buffer moves as it grows). */
struct build {
    common_buf names;        /* each name with its NUL */
    struct rname *off;
    size_t n, ncap, max;
};

static int rl_add(void *arg, const char *name, uint64_t size, int64_t mtime)
{
    struct build *b = arg;
    size_t len = strlen(name) + 1;
    if (store_name_check(name, len - 1) != 0)
        return 0; /* not a key this mount could show */
    if (b->n >= b->max || b->names.len + len > OFS_REMOTE_LIST_BYTES)
        return LIST_FULL;
    struct rname *v = common_array_grow(b->off, b->n, &b->ncap, sizeof *v, 256);
    if (!v)
        return ENOMEM;
    b->off = v;
    b->off[b->n] = (struct rname){b->names.len, size, mtime};
    common_buf_add(&b->names, name, len);
    if (b->names.failed)
        return ENOMEM;
    b->n++;
    return 0;
}

/* qsort() has no context: the names' buffer travels inside each item. */
struct sorted {
    const char *name;
    uint64_t size;
    int64_t mtime;
};

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct sorted *)a)->name, ((const struct sorted *)b)->name);
}

/* The snapshot B was building, sorted and unique (B is emptied); of two
 * entries of one name (a server listing it twice), the last sorted
 * stays, whichever it is: both are answers of the same listing. */
static struct ofs_rlist *build_finish(struct build *b)
{
    struct ofs_rlist *l = calloc(1, sizeof *l);
    struct sorted *t = b->n ? malloc(b->n * sizeof *t) : NULL;
    if (!l || (b->n && (!t || !(l->names = malloc(b->n * sizeof *l->names)) ||
                        !(l->size = malloc(b->n * sizeof *l->size)) ||
                        !(l->mtime = malloc(b->n * sizeof *l->mtime))))) {
        if (l)
            rlist_free(l);
        free(t);
        return NULL;
    }
    for (size_t i = 0; i < b->n; i++)
        t[i] = (struct sorted){b->names.p + b->off[i].off, b->off[i].size, b->off[i].mtime};
    if (b->n)
        qsort(t, b->n, sizeof *t, by_name);
    for (size_t i = 0; i < b->n; i++) {
        if (l->n > 0 && strcmp(l->names[l->n - 1], t[i].name) == 0)
            l->n--;
        l->names[l->n] = (char *)(uintptr_t)t[i].name;
        l->size[l->n] = t[i].size;
        l->mtime[l->n++] = t[i].mtime;
    }
    free(t);
    l->buf = b->names.p;
    l->refs = 1;
    free(b->off);
    memset(b, 0, sizeof *b);
    return l;
}

/* The fetch's stop (tier_read_list()): the mount is going away. */
static int list_stop(void *arg)
{
    struct ofs_rlists *rl = arg;
    pthread_mutex_lock(&rl->lock);
    int quit = rl->quit;
    pthread_mutex_unlock(&rl->lock);
    return quit ? ECANCELED : 0;
}

/* Lists the remote's names of the namespace into *OUT (yours, one
 * reference). 0; ECANCELED at unmount; else the failure (logged). */
static int fetch(struct ofs *fs, struct ofs_rlist **out)
{
    tier_conn *c = ofs_conn_get(fs);
    struct build b = {.max = fs->remote_list_max ? fs->remote_list_max : OFS_REMOTE_LIST_MAX};
    unsigned secs = fs->remote_list_s ? fs->remote_list_s : OFS_REMOTE_LIST_SECONDS;
    int rc = c ? tier_read_list(fs->tier, c, fs->ns, (uint64_t)secs * 1000u, list_stop, fs->rlists, rl_add, &b)
               : ENOMEM;
    *out = NULL;
    if (rc == 0 && !(*out = build_finish(&b)))
        rc = ENOMEM;
    free(b.names.p);
    free(b.off);
    if (rc == 0 || rc == ECANCELED)
        return rc;
    ofs_count(&fs->count.lookup_errors, rc != ENOMEM);
    if (rc == LIST_FULL)
        fuse_log(FUSE_LOG_ERR, "offloadfs: remote listing: more than %zu names (or %u MiB of them), "
                 "the bound (-o remote_list_max): ls shows no remote-only names until it fits\n",
                 b.max, OFS_REMOTE_LIST_BYTES >> 20);
    else
        fuse_log(FUSE_LOG_ERR, "offloadfs: remote listing: %s\n",
                 rc == ENOMEM ? strerror(rc) : ofs_conn_why(c, rc));
    return rc;
}

/* The lister: fetches a listing each time a readdir wants one, until
 * unmount. Its remote connection is its own (ofs_conn_get()). */
static void *lister(void *arg)
{
    struct ofs *fs = arg;
    struct ofs_rlists *rl = fs->rlists;
    struct ofs_rlist *fresh;
    pthread_mutex_lock(&rl->lock);
    for (;;) {
        while (!rl->wanted && !rl->quit)
            pthread_cond_wait(&rl->want, &rl->lock);
        if (rl->quit)
            break;
        rl->wanted = 0;
        rl->fetching = 1;
        pthread_mutex_unlock(&rl->lock);
        int rc = fetch(fs, &fresh);
        pthread_mutex_lock(&rl->lock);
        rl->fetching = 0;
        rl->gen++;
        if (rc == 0) {
            rlist_put(rl->last);
            rl->last = fresh;
            rl->unused = 1;
            rl->at = fresh->at = common_clock_ms();
        } else if (rc != ECANCELED) {
            rl->retry_at = common_clock_ms() + OFS_REMOTE_LIST_BACKOFF_MS;
        }
        pthread_cond_broadcast(&rl->done);
    }
    pthread_mutex_unlock(&rl->lock);
    return NULL;
}

/* ---- the cache ---------------------------------------------------------- */

/* Waits on RL->done (RL->lock held) until the absolute CLOCK_REALTIME
 * time LIMIT or 100 ms, whichever comes first. */
static void wait_done(struct ofs_rlists *rl, const struct timespec *limit)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 100000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    if (ts.tv_sec > limit->tv_sec || (ts.tv_sec == limit->tv_sec && ts.tv_nsec > limit->tv_nsec))
        ts = *limit;
    pthread_cond_timedwait(&rl->done, &rl->lock, &ts);
}

/* A reference to a listing (*OUT; NULL when there is none): a fresh enough
 * one, else one the lister brings within OFS_REMOTE_LIST_WAIT seconds,
 * else the last one. Returns 0, EINTR when REQ was interrupted while it
 * waited, or the error starting the lister. */
static int rlist_get(struct ofs *fs, fuse_req_t req, struct ofs_rlist **out)
{
    struct ofs_rlists *rl = fs->rlists;
    uint64_t now = common_clock_ms();
    int rc = 0;
    *out = NULL;
    pthread_mutex_lock(&rl->lock);
    int fresh = rl->last && (rl->unused || now - rl->at < (uint64_t)fs->remote_ttl * 1000u);
    if (!fresh && now >= rl->retry_at) {
        if (!rl->running && (rc = pthread_create(&rl->lister, NULL, lister, fs)) == 0)
            rl->running = 1;
        if (rc == 0) {
            struct timespec limit;
            unsigned long gen = rl->gen;
            clock_gettime(CLOCK_REALTIME, &limit);
            limit.tv_sec += OFS_REMOTE_LIST_WAIT;
            if (!rl->fetching) /* else the one under way will do */
                rl->wanted = 1;
            pthread_cond_signal(&rl->want);
            while (rl->gen == gen && rc == 0) {
                struct timespec t;
                wait_done(rl, &limit);
                clock_gettime(CLOCK_REALTIME, &t);
                if (fuse_req_interrupted(req))
                    rc = EINTR;
                else if (t.tv_sec > limit.tv_sec || (t.tv_sec == limit.tv_sec && t.tv_nsec >= limit.tv_nsec))
                    break; /* it comes later: the next readdir takes it */
            }
        }
    }
    if (rc == 0 && (*out = rl->last)) {
        rl->last->refs++;
        rl->unused = 0;
    }
    pthread_mutex_unlock(&rl->lock);
    return rc;
}

/* The index of the first name of L after AFTER. */
static size_t first_after(const struct ofs_rlist *l, const char *after)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(l->names[mid], after) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int ofs_listing_names(struct ofs *fs, fuse_req_t req, struct ofs_rlist **held, const char *after,
                    ofs_remote_name_fn fn, void *ctx)
{
    int rc = 0;
    if (!*held && (rc = rlist_get(fs, req, held)) != 0)
        return rc;
    const struct ofs_rlist *l = *held;
    for (size_t i = l && after ? first_after(l, after) : 0; l && i < l->n && rc == 0; i++) {
        if (store_lookup(fs->st, fs->ns, l->names[i], NULL, NULL) == 0)
            continue; /* live here: listed with the local names */
        struct ofs_listed one = {l->names[i], l->size[i], l->mtime[i], l->at};
        rc = fn(&one, ctx);
    }
    return rc;
}

int ofs_listing_find(struct ofs *fs, const char *key, struct ofs_listed *out)
{
    struct ofs_rlists *rl = fs->rlists;
    int rc = ENOENT;
    if (!rl)
        return ENOENT;
    pthread_mutex_lock(&rl->lock);
    const struct ofs_rlist *l = rl->last;
    if (l && common_clock_ms() - l->at < (uint64_t)fs->remote_ttl * 1000u) {
        size_t lo = 0, hi = l->n;
        while (lo < hi) { /* the first name at or after KEY */
            size_t mid = lo + (hi - lo) / 2;
            if (strcmp(l->names[mid], key) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < l->n && strcmp(l->names[lo], key) == 0) {
            *out = (struct ofs_listed){NULL, l->size[lo], l->mtime[lo], l->at};
            rc = 0;
        }
    }
    pthread_mutex_unlock(&rl->lock);
    return rc;
}
