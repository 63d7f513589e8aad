/* fill.c -- remote results fetched whole, then kept (fill.h).
 *
 * A fill is one result version being fetched, or fetched, into one
 * unnamed file (fill_file()), in chunks of OFS_FILL_CHUNK bytes. Each
 * chunk is NONE, FETCHING (with how many of its first bytes are in the
 * file) or DONE. A read takes the chunks under it that no one fetches yet
 * and fetches them itself, answering the read from within the fetch as
 * soon as its bytes are in (file_sink_put()), else waits for the bytes of
 * its range the others fetch; the fill's helper threads (up to
 * OFS_FILL_FETCHERS - 1, started with it, each on a connection of its
 * own) take the other chunks in order from where the last read ended, so
 * a sequential reader finds its next chunks fetched or on their way.
 * Whoever finishes the last chunk keeps the copy (keep.c) once it no
 * longer holds a reader up, and the last use of a fill whose copy is kept
 * closes it: reads go to the copy.
 *
 * Lifetime: a fill's file is closed only with the lock held, no user (a
 * reader copying out, a thread fetching or keeping: f->users) and no
 * fetch running, so no one uses a descriptor being closed. Bytes once in
 * the file never change, so readers read them without the lock.
 * ofs_fill_free() tells the helpers to stop and waits for them (they use
 * the tier), before the connections and the tier go. */
#include "common/buf.h"
#include "common/clock.h"
#include "fs/fs.h"
#include "fs/conn.h"
#include "fs/counters.h"
#include "fs/fill.h"
#include "fs/keep.h"
#include "fs/window.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { C_NONE, C_FETCHING, C_DONE };

struct fill_chunk {
    unsigned char state;       /* C_* */
    uint32_t filled;           /* FETCHING: its first bytes in the file so far */
};

/* A read being answered: REQ, for SIZE bytes at AT; REPLIED once it was
 * (by fill_reply(), maybe from within a fetch: file_sink_put()). */
struct fill_ask {
    fuse_req_t req;
    uint64_t at;
    size_t size;
    int replied;
};

struct fill {
    int used;                  /* holds a result (else free) */
    struct ofs_object o;
    store_entry meta;
    int fd;                    /* its file of o.length bytes (fill_file()) */
    struct fill_chunk *chunk;  /* nchunks of them */
    unsigned nchunks, done;
    unsigned want;             /* where the helpers go on: after the last read */
    int err;                   /* the first failure (ENODATA, EIO, ENOMEM), or 0 */
    int keeping;               /* the copy is being or was kept */
    int kept;                  /* the store holds it: reads go there */
    unsigned users;            /* readers, fetchers, the keeper: never closed while > 0 */
    uint64_t counted;          /* bytes counted into window_bytes */
    uint64_t used_ms;
};

struct ofs_fills {
    pthread_mutex_t lock;
    pthread_cond_t changed;    /* a chunk ended, a helper ended */
    struct fill f[OFS_FILL_COUNT];
    uint64_t held;             /* bytes in the files of all fills */
    unsigned helpers;          /* helper threads running */
    int stopping;
};

struct helper_arg {
    struct ofs *fs;
    struct fill *f;
};

int ofs_fill_init(struct ofs *fs)
{
    struct ofs_fills *fl = calloc(1, sizeof *fl);
    if (!fl)
        return ENOMEM;
    pthread_mutex_init(&fl->lock, NULL);
    pthread_cond_init(&fl->changed, NULL);
    fs->fills = fl;
    return 0;
}

/* With the lock held and no user: forgets F and closes its file. */
static void fill_drop(struct ofs *fs, struct ofs_fills *fl, struct fill *f)
{
    close(f->fd);
    atomic_fetch_sub_explicit(&fs->count.window_bytes, f->counted, memory_order_relaxed);
    fl->held -= f->o.length;
    free(f->chunk);
    memset(f, 0, sizeof *f);
}

void ofs_fill_free(struct ofs *fs)
{
    struct ofs_fills *fl = fs->fills;
    if (!fl)
        return;
    pthread_mutex_lock(&fl->lock);
    fl->stopping = 1;
    while (fl->helpers)
        pthread_cond_wait(&fl->changed, &fl->lock);
    for (unsigned i = 0; i < OFS_FILL_COUNT; i++)
        if (fl->f[i].used)
            fill_drop(fs, fl, &fl->f[i]);
    pthread_mutex_unlock(&fl->lock);
    pthread_cond_destroy(&fl->changed);
    pthread_mutex_destroy(&fl->lock);
    free(fl);
    fs->fills = NULL;
}

/* With the lock held: the fill of O's version, or NULL. */
static struct fill *fill_find(struct ofs_fills *fl, const struct ofs_object *o)
{
    for (unsigned i = 0; i < OFS_FILL_COUNT; i++) {
        struct fill *f = &fl->f[i];
        if (f->used && f->o.ino == o->ino && strcmp(f->o.etag, o->etag) == 0 && !f->err)
            return f;
    }
    return NULL;
}

/* With the lock held: a free place for a fill of LENGTH bytes, the least
 * recently used idle fill dropped for it when need be; NULL when none. */
static struct fill *fill_place(struct ofs *fs, struct ofs_fills *fl, uint64_t length)
{
    struct fill *best = NULL;
    for (unsigned i = 0; i < OFS_FILL_COUNT; i++) {
        struct fill *f = &fl->f[i];
        if (!f->used)
            return fl->held + length <= OFS_FILL_BYTES ? f : NULL;
        if (!f->users && (!best || f->used_ms < best->used_ms))
            best = f;
    }
    if (!best || fl->held - best->o.length + length > OFS_FILL_BYTES)
        return NULL;
    fill_drop(fs, fl, best);
    return best;
}

/* With the lock held: ends a use of F; the last one drops F once the
 * store holds its copy (reads go there: fill_find() then finds no fill
 * and ofs_fill_read() the copy). */
static void fill_unuse(struct ofs *fs, struct ofs_fills *fl, struct fill *f)
{
    if (--f->users == 0 && f->kept)
        fill_drop(fs, fl, f);
}

/* With the lock held: 1 when every byte of [AT, AT + SIZE) of F is in its
 * file (chunks DONE, or FETCHING and filled that far), else 0. */
static int fill_has(const struct fill *f, uint64_t at, size_t size)
{
    for (uint64_t k = at / OFS_FILL_CHUNK; k * OFS_FILL_CHUNK < at + size; k++) {
        const struct fill_chunk *ch = &f->chunk[k];
        uint64_t need = at + size - k * OFS_FILL_CHUNK;
        if (ch->state != C_DONE && !(ch->state == C_FETCHING && ch->filled >= need))
            return 0;
    }
    return 1;
}

static void fill_reply(struct ofs *fs, fuse_req_t req, struct fill *f, int err, uint64_t at, size_t size);

/* Where a chunk's bytes go as they come: its place in F's file. Readers
 * waiting for them are woken as they land, and ASK (the read this thread
 * fetches for, or NULL) is answered as soon as its bytes are all there:
 * a reader does not wait for the rest of a chunk it has no use for. */
struct file_sink {
    struct ofs *fs;
    struct fill *f;
    unsigned i;
    uint64_t at;               /* where the next byte goes */
    struct fill_ask *ask;
};

static int file_sink_put(void *arg, const void *data, size_t n)
{
    struct file_sink *k = arg;
    struct ofs_fills *fl = k->fs->fills;
    while (n) {
        ssize_t w = pwrite(k->f->fd, data, n, (off_t)k->at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        data = (const char *)data + w;
        n -= (size_t)w;
        k->at += (uint64_t)w;
    }
    pthread_mutex_lock(&fl->lock);
    k->f->chunk[k->i].filled = (uint32_t)(k->at - (uint64_t)k->i * OFS_FILL_CHUNK);
    struct fill_ask *ask = k->ask && fill_has(k->f, k->ask->at, k->ask->size) ? k->ask : NULL;
    pthread_cond_broadcast(&fl->changed);
    pthread_mutex_unlock(&fl->lock);
    if (ask) { /* bytes in the file never change: read without the lock */
        fill_reply(k->fs, ask->req, k->f, 0, ask->at, ask->size);
        ask->replied = 1;
        k->ask = NULL;
    }
    return 0;
}

/* With the lock held: takes chunk I of F for fetching by this thread (for
 * read ASK, or NULL), fetches it with the lock released, and records how
 * it went. */
static void fill_fetch(struct ofs *fs, struct ofs_fills *fl, struct fill *f, tier_conn *c, unsigned i,
                       struct fill_ask *ask)
{
    uint64_t off = (uint64_t)i * OFS_FILL_CHUNK;
    size_t len = (size_t)(f->o.length - off < OFS_FILL_CHUNK ? f->o.length - off : OFS_FILL_CHUNK);
    f->chunk[i] = (struct fill_chunk){C_FETCHING, 0};
    pthread_mutex_unlock(&fl->lock);
    struct file_sink k = {fs, f, i, off, ask && !ask->replied ? ask : NULL}; /* this chunk is ours alone */
    int err = ofs_window_fetch_to(fs, c, &f->o, off, len, file_sink_put, &k);
    pthread_mutex_lock(&fl->lock);
    if (err) {
        f->chunk[i] = (struct fill_chunk){C_NONE, 0};
        if (!f->err)
            f->err = err;
    } else {
        f->chunk[i].state = C_DONE;
        f->done++;
        f->counted += len;
        ofs_count(&fs->count.window_bytes, len);
    }
    pthread_cond_broadcast(&fl->changed);
}

/* With the lock held: keeps F's copy when it is whole and no one keeps it
 * yet (the lock released meanwhile). The caller holds a use of F. */
static void fill_keep(struct ofs *fs, struct ofs_fills *fl, struct fill *f)
{
    if (f->keeping || f->err || f->done != f->nchunks)
        return;
    f->keeping = 1;
    pthread_mutex_unlock(&fl->lock);
    /* Mapped only to hand the bytes over: a large copy is written by a
     * child (keep.h), whose reads leave the daemon's memory as it was. */
    void *p = mmap(NULL, (size_t)f->o.length, PROT_READ, MAP_SHARED, f->fd, 0);
    int kept = p != MAP_FAILED && ofs_keep_copy(fs, f->o.key, f->o.etag, &f->meta, p, f->o.length);
    if (p != MAP_FAILED)
        munmap(p, (size_t)f->o.length);
    pthread_mutex_lock(&fl->lock);
    f->kept = kept;
}

/* A helper: fetches F's chunks not taken yet, from where the reads went
 * last, until none is left, the fill failed or the mount stops. */
static void *helper_main(void *arg)
{
    struct helper_arg *h = arg;
    struct ofs *fs = h->fs;
    struct fill *f = h->f;
    struct ofs_fills *fl = fs->fills;
    tier_conn *c = NULL;
    free(h);
    int rc = tier_conn_new(&c, fs->tier);
    pthread_mutex_lock(&fl->lock);
    while (!rc && !f->err && !fl->stopping) {
        unsigned i, n = f->nchunks;
        for (i = 0; i < n && f->chunk[(f->want + i) % n].state != C_NONE; i++)
            ;
        if (i == n)
            break;
        fill_fetch(fs, fl, f, c, (f->want + i) % n, NULL);
    }
    if (!fl->stopping)
        fill_keep(fs, fl, f);
    fill_unuse(fs, fl, f);
    pthread_mutex_unlock(&fl->lock);
    tier_conn_free(c);
    pthread_mutex_lock(&fl->lock);
    fl->helpers--;
    pthread_cond_broadcast(&fl->changed);
    pthread_mutex_unlock(&fl->lock);
    return NULL;
}

/* With the lock held: starts the helpers of F (as many as its chunks
 * need, at most OFS_FILL_FETCHERS - 1). One that cannot start leaves its
 * chunks to the others and to the reads. */
static void fill_helpers(struct ofs *fs, struct ofs_fills *fl, struct fill *f)
{
    pthread_attr_t at;
    unsigned n = f->nchunks - 1 < OFS_FILL_FETCHERS - 1 ? f->nchunks - 1 : OFS_FILL_FETCHERS - 1;
    if (pthread_attr_init(&at))
        return;
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    for (unsigned i = 0; i < n; i++) {
        pthread_t t;
        struct helper_arg *h = malloc(sizeof *h);
        if (!h)
            break;
        *h = (struct helper_arg){fs, f};
        if (pthread_create(&t, &at, helper_main, h)) {
            free(h);
            break;
        }
        f->users++;
        fl->helpers++;
    }
    pthread_attr_destroy(&at);
}

/* An unnamed file of LENGTH bytes, its blocks taken: in the store's
 * directory, whose file system the copy goes to anyway (its pages are the
 * page cache's, which the kernel can write out and reclaim), or else in
 * memory (memfd). The fill's bytes are then never the daemon's own
 * memory. -1 when neither can be made. */
static int fill_file(struct ofs *fs, uint64_t length)
{
    int fd = -1;
    if (fs->pin.held) {
        fd = openat(fs->pin.dir_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd >= 0 && posix_fallocate(fd, 0, (off_t)length) != 0) {
            close(fd);
            fd = -1;
        }
    }
    if (fd < 0) {
        fd = memfd_create("offloadfs-fill", MFD_CLOEXEC);
        if (fd >= 0 && ftruncate(fd, (off_t)length) != 0) {
            close(fd);
            fd = -1;
        }
    }
    return fd;
}

/* With the lock held: a new fill of O in a free place, its helpers
 * started; NULL when there is no room (memory, places). */
static struct fill *fill_start(struct ofs *fs, struct ofs_fills *fl, const struct ofs_object *o,
                               const store_entry *meta)
{
    struct fill *f = fill_place(fs, fl, o->length);
    if (!f)
        return NULL;
    unsigned n = (unsigned)((o->length + OFS_FILL_CHUNK - 1) / OFS_FILL_CHUNK);
    int fd = fill_file(fs, o->length);
    struct fill_chunk *chunk = calloc(n, sizeof *chunk);
    if (fd < 0 || !chunk) {
        if (fd >= 0)
            close(fd);
        free(chunk);
        return NULL;
    }
    *f = (struct fill){.used = 1, .o = *o, .fd = fd, .chunk = chunk, .nchunks = n,
                       .used_ms = common_clock_ms()};
    if (meta)
        f->meta = *meta;
    fl->held += o->length;
    if (!fl->stopping)
        fill_helpers(fs, fl, f);
    return f;
}

/* With the lock held, as a use of F: makes ASK's bytes readable, fetching
 * the chunks under them that no one fetches (which may answer ASK from
 * within the fetch) and waiting for the others' bytes. 0 when they are
 * there or ASK was answered, else F's failure. */
static int fill_wait(struct ofs *fs, struct ofs_fills *fl, struct fill *f, tier_conn *c, struct fill_ask *ask)
{
    unsigned first = (unsigned)(ask->at / OFS_FILL_CHUNK);
    unsigned last = (unsigned)((ask->at + ask->size - 1) / OFS_FILL_CHUNK);
    for (;;) {
        unsigned i;
        if (ask->replied || fill_has(f, ask->at, ask->size))
            return 0;
        if (f->err)
            return f->err;
        for (i = first; i <= last && f->chunk[i].state != C_NONE; i++)
            ;
        if (i <= last)
            fill_fetch(fs, fl, f, c, i, ask);
        else
            pthread_cond_wait(&fl->changed, &fl->lock);
    }
}

/* Answers REQ with ERR, or with the SIZE bytes at AT of F (bytes in its
 * file: they never change, so read without the lock; F is held by a use). */
static void fill_reply(struct ofs *fs, fuse_req_t req, struct fill *f, int err, uint64_t at, size_t size)
{
    char *buf = err ? NULL : malloc(size);
    size_t got = 0;
    int why = 0;
    if (!err && !buf)
        err = ENOMEM;
    while (buf && got < size && !why) {
        ssize_t r = pread(f->fd, buf + got, size - got, (off_t)(at + got));
        if (r > 0)
            got += (size_t)r;
        else if (r == 0 || errno != EINTR)
            why = r ? errno : EIO; /* EIO: the file is shorter than its fill */
    }
    if (why) {
        fuse_log(FUSE_LOG_ERR, "offloadfs: remote read of '%s': reading its fetched bytes: %s\n", f->o.key,
                 strerror(why));
        err = EIO;
    }
    if (err)
        ofs_reply_read_err(fs, req, err);
    else
        ofs_reply_read(fs, req, buf, size);
    free(buf);
}

int ofs_fill_read(struct ofs *fs, tier_conn *c, fuse_req_t req, const struct ofs_object *o,
                  const store_entry *meta, size_t size, off_t off)
{
    struct ofs_fills *fl = fs->fills;
    uint64_t at = (uint64_t)off, copy;
    if (!fl || !c || o->length <= OFS_RWIN_FIRST || o->length > OFS_FILL_MAX || !o->etag[0])
        return OFS_FILL_NONE;
    if (at >= o->length || size == 0) {
        ofs_reply_read(fs, req, NULL, 0);
        return OFS_FILL_REPLIED;
    }
    if ((uint64_t)size > o->length - at)
        size = (size_t)(o->length - at);
    pthread_mutex_lock(&fl->lock);
    struct fill *f = fill_find(fl, o);
    /* No fill: none yet, or one whose copy was kept (and dropped) since
     * the caller looked for a copy: the store is asked again, under the
     * lock that ordered the keeping before the dropping. A result too
     * large to keep has no copy to ask for. */
    if (!f) {
        int kept = 0;
        if (o->length <= ofs_keep_max(fs) && !(kept = ofs_keep_find(fs, o->key, o->etag, &copy)))
            f = fill_start(fs, fl, o, meta);
        if (!f) {
            pthread_mutex_unlock(&fl->lock);
            return kept ? OFS_FILL_KEPT : OFS_FILL_NONE;
        }
    }
    struct fill_ask ask = {req, at, size, 0};
    unsigned last = (unsigned)((at + size - 1) / OFS_FILL_CHUNK);
    f->users++;
    f->want = last + 1 < f->nchunks ? last + 1 : 0;
    int err = fill_wait(fs, fl, f, c, &ask);
    pthread_mutex_unlock(&fl->lock);
    if (!ask.replied)
        fill_reply(fs, req, f, err, at, size);
    pthread_mutex_lock(&fl->lock);
    f->used_ms = common_clock_ms();
    if (!err)
        fill_keep(fs, fl, f);
    fill_unuse(fs, fl, f);
    pthread_mutex_unlock(&fl->lock);
    return OFS_FILL_REPLIED;
}

void ofs_fill_sweep(struct ofs *fs, uint64_t now_ms)
{
    struct ofs_fills *fl = fs->fills;
    if (!fl)
        return;
    unsigned dropped = 0;
    pthread_mutex_lock(&fl->lock);
    for (unsigned i = 0; i < OFS_FILL_COUNT; i++) {
        struct fill *f = &fl->f[i];
        if (f->used && !f->users && (f->kept || f->err || now_ms >= f->used_ms + OFS_RWIN_IDLE_MS)) {
            fill_drop(fs, fl, f);
            dropped++;
        }
    }
    pthread_mutex_unlock(&fl->lock);
    /* What the fetches and the copy's hand-over left free in glibc's arenas
     * (the helpers' connections, the store's transaction) goes back to the
     * system too, as the windows' sweep does: once per fill, rare. */
    if (dropped)
        malloc_trim(0);
}
