/* window.c -- reading remote results through read-ahead windows.
 *
 * The kernel reads a file in pieces of at most 128 KiB (with readahead,
 * several at once). One ranged GET per piece pays a request's latency
 * 512 times for a 64 MiB result; a window that starts at OFS_RWIN_MIN
 * bytes and doubles while the reads go on where it ended (up to
 * OFS_RWIN_MAX) pays it about ten times. Pieces that a window being
 * fetched will hold wait for it rather than ask again. A sequential
 * reader's next windows are fetched ahead: the thread that answers a read
 * from a sequential window (or fetched it) then fetches the first of the
 * two windows after it that is not there yet, so GETs run while the
 * kernel copies this window's bytes out (without it, a 64 MiB cat waits
 * for each GET and each copy in turn: doc/benchmark.md, "Remote tier").
 * A window holds one object version (the inode's ETag, fetched with
 * If-Match), so its bytes can be served to any handle of that inode.
 * The first window of an inode may come with its lookup (ofs_window_offer:
 * lookup.c fetches the first OFS_RWIN_FIRST bytes).
 *
 * Memory: at most OFS_RWIN_COUNT x OFS_RWIN_MAX per mount, and only while
 * reads use it. Each window's buffer is its own anonymous mapping, made on
 * first use: only the pages a fetch fills become resident, and munmap()
 * gives them back to the system at once (an 8 MiB malloc() would do the
 * same only until glibc raised its mmap threshold on the first free, after
 * which freed windows would stay in the heap). The watcher calls
 * ofs_window_sweep() every poll; it unmaps the buffers of windows no read
 * used for OFS_RWIN_IDLE_MS, then asks glibc to return what the reads'
 * other buffers left free (malloc_trim()). The sweep takes a window's
 * buffer away under the lock and never while the window is fetching (it
 * unmaps it after unlocking): a reader copies a window's bytes out under
 * the lock, and a fetch writes into a window no one else may reuse or
 * sweep, so no reader ever touches a buffer being unmapped. A read after
 * the sweep fetches again. (The price: ASan does not check accesses to the
 * mapped buffers as it did to malloc()ed ones.)
 * A read is handed its object (key, version, length) and a connection:
 * nothing here asks the lookups, so the windows can be driven by a test
 * with no lookup at all.
 */
#include "common/buf.h"
#include "common/clock.h"
#include "fs/fs.h"
#include "fs/conn.h"
#include "fs/counters.h"
#include "fs/errmap.h"
#include "fs/window.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { W_EMPTY, W_FETCHING, W_READY };

struct rwin {
    int state;
    fuse_ino_t ino;
    uint64_t off, len;  /* the range held, or being fetched */
    char *data;         /* a mapping of OFS_RWIN_MAX bytes once used, or NULL */
    size_t held;        /* of it, the bytes ever filled (whole pages): resident */
    uint64_t used_at;   /* tick of the last use: the least recent is reused */
    uint64_t used_ms;   /* common_clock_ms() of the last use: the sweep's clock */
    int seq;            /* at offset 0, or where another window of ino ended */
};

struct ofs_rwin {
    pthread_mutex_t lock;
    pthread_cond_t done; /* a fetch ended */
    struct rwin w[OFS_RWIN_COUNT];
    uint64_t tick;
    size_t page;         /* the page size: held counts whole pages */
};

int ofs_window_init(struct ofs *fs)
{
    struct ofs_rwin *rw = calloc(1, sizeof *rw);
    if (!rw)
        return ENOMEM;
    pthread_mutex_init(&rw->lock, NULL);
    pthread_cond_init(&rw->done, NULL);
    long page = sysconf(_SC_PAGESIZE);
    rw->page = page > 0 ? (size_t)page : 4096u;
    fs->rwin = rw;
    return 0;
}

void ofs_window_free(struct ofs *fs)
{
    struct ofs_rwin *rw = fs->rwin;
    if (!rw)
        return;
    for (unsigned i = 0; i < OFS_RWIN_COUNT; i++)
        if (rw->w[i].data) {
            munmap(rw->w[i].data, OFS_RWIN_MAX);
            atomic_fetch_sub_explicit(&fs->count.window_bytes, rw->w[i].held, memory_order_relaxed);
        }
    pthread_cond_destroy(&rw->done);
    pthread_mutex_destroy(&rw->lock);
    free(rw);
    fs->rwin = NULL;
}

/* With RW locked: makes W ready to hold LEN bytes (its mapping made when it
 * has none) and counts the pages that filling them makes resident into
 * fs->count.window_bytes. 0, or ENOMEM (no mapping: W is as it was). */
static int window_map(struct ofs *fs, struct ofs_rwin *rw, struct rwin *w, uint64_t len)
{
    size_t pages = ((size_t)len + rw->page - 1) / rw->page * rw->page;
    if (!w->data) {
        void *p = mmap(NULL, OFS_RWIN_MAX, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return ENOMEM;
        w->data = p;
        w->held = 0;
    }
    if (pages > w->held) {
        ofs_count(&fs->count.window_bytes, pages - w->held);
        w->held = pages;
    }
    return 0;
}

/* With RW locked: W (mapped by window_map()) now holds, or is fetching,
 * [OFF, OFF + LEN) of INO, used now. */
static void window_take(struct ofs_rwin *rw, struct rwin *w, int state, fuse_ino_t ino, uint64_t off,
                        uint64_t len, int seq)
{
    w->state = state;
    w->ino = ino;
    w->off = off;
    w->len = len;
    w->used_at = ++rw->tick;
    w->used_ms = common_clock_ms();
    w->seq = seq;
}

/* With RW locked: W was just used. */
static void window_touch(struct ofs_rwin *rw, struct rwin *w)
{
    w->used_at = ++rw->tick;
    w->used_ms = common_clock_ms();
}

/* The window of INO holding [OFF, OFF + SIZE) in state STATE, or NULL. */
static struct rwin *covering(struct ofs_rwin *rw, fuse_ino_t ino, uint64_t off, size_t size, int state)
{
    for (unsigned i = 0; i < OFS_RWIN_COUNT; i++) {
        struct rwin *w = &rw->w[i];
        if (w->state == state && w->ino == ino && off >= w->off && off + size <= w->off + w->len)
            return w;
    }
    return NULL;
}

/* How much to fetch at OFF: double the window of INO that ends at OFF (a
 * sequential read), else start small; at least SIZE, at most what is left.
 * *SEQ: 1 when the read is sequential (such a window, or OFF 0). */
static uint64_t window_size(struct ofs_rwin *rw, fuse_ino_t ino, uint64_t off, size_t size, uint64_t left,
                            int *seq)
{
    uint64_t n = OFS_RWIN_MIN;
    *seq = off == 0;
    for (unsigned i = 0; i < OFS_RWIN_COUNT; i++) {
        struct rwin *w = &rw->w[i];
        if (w->state != W_EMPTY && w->ino == ino && w->off + w->len == off) {
            *seq = 1;
            if (2 * w->len > n)
                n = 2 * w->len;
        }
    }
    if (n > OFS_RWIN_MAX)
        n = OFS_RWIN_MAX;
    if (n < size)
        n = size;
    return n < left ? n : left;
}

/* An empty window, else the least recently used ready one; NULL when all
 * are being fetched. */
static struct rwin *victim(struct ofs_rwin *rw)
{
    struct rwin *best = NULL;
    for (unsigned i = 0; i < OFS_RWIN_COUNT; i++) {
        struct rwin *w = &rw->w[i];
        if (w->state == W_EMPTY)
            return w;
        if (w->state == W_READY && (!best || w->used_at < best->used_at))
            best = w;
    }
    return best;
}

void ofs_reply_read(struct ofs *fs, fuse_req_t req, const char *buf, size_t size)
{
    ofs_count(&fs->count.reads, 1);
    ofs_count(&fs->count.read_bytes, size);
    fuse_reply_buf(req, buf, size);
}

void ofs_reply_read_err(struct ofs *fs, fuse_req_t req, int err)
{
    if (err == ENODATA)
        ofs_count(&fs->count.evicted_reads, 1);
    fuse_reply_err(req, err);
}

int ofs_window_fetch_to(struct ofs *fs, tier_conn *c, const struct ofs_object *o, uint64_t off, size_t len,
                        tier_sink_fn sink, void *arg)
{
    uint64_t got = 0;
    if (!c)
        return ENOMEM;
    if (!o->etag[0]) { /* lookup.c makes no inode without one: never a mix */
        fuse_log(FUSE_LOG_ERR, "offloadfs: remote read of '%s': no ETag to pin its version\n", o->key);
        return EIO;
    }
    uint64_t start = common_clock_ns();
    int rc = tier_read_version(fs->tier, c, fs->ns, o->key, o->etag, off, len, sink, arg, &got);
    int err = rc == 0 && got != len ? ENODATA : ofs_errno(rc); /* shorter than it was: gone */
    ofs_fetch_done(&fs->count, start, err != 0 && err != ENODATA);
    ofs_count(&fs->count.fetch_bytes, got);
    if (err == ENODATA || err == ENOMEM || err == 0)
        return err; /* ENODATA: this version is gone from the remote */
    fuse_log(FUSE_LOG_ERR, "offloadfs: remote read of '%s': %s\n", o->key, ofs_conn_why(c, rc));
    return EIO; /* whatever errno the remote's failure carried */
}

int ofs_window_fetch(struct ofs *fs, tier_conn *c, const struct ofs_object *o, uint64_t off, size_t len,
                     char *buf)
{
    common_fixbuf f = {buf, 0, len};
    return ofs_window_fetch_to(fs, c, o, off, len, common_fixbuf_sink, &f);
}

/* All windows busy: one GET just for this read. */
static void read_direct(struct ofs *fs, tier_conn *c, fuse_req_t req, const struct ofs_object *o,
                        uint64_t off, size_t size)
{
    char *buf = malloc(size);
    int err = buf ? ofs_window_fetch(fs, c, o, off, size, buf) : ENOMEM;
    if (err)
        ofs_reply_read_err(fs, req, err);
    else
        ofs_reply_read(fs, req, buf, size);
    free(buf);
}

void ofs_window_offer(struct ofs *fs, fuse_ino_t ino, const void *buf, uint64_t len)
{
    struct ofs_rwin *rw = fs->rwin;
    struct rwin *w;
    if (!rw || len == 0 || len > OFS_RWIN_MAX)
        return;
    pthread_mutex_lock(&rw->lock);
    if (!covering(rw, ino, 0, (size_t)len, W_READY) && !covering(rw, ino, 0, (size_t)len, W_FETCHING) &&
        (w = victim(rw)) && window_map(fs, rw, w, len) == 0) {
        memcpy(w->data, buf, (size_t)len);
        window_take(rw, w, W_READY, ino, 0, len, 1);
    }
    pthread_mutex_unlock(&rw->lock);
}

int ofs_window_copy(struct ofs *fs, fuse_ino_t ino, uint64_t len, void *buf)
{
    struct ofs_rwin *rw = fs->rwin;
    struct rwin *w;
    int rc = ENOENT;
    if (!rw || len > OFS_RWIN_MAX)
        return ENOENT;
    pthread_mutex_lock(&rw->lock);
    if ((w = covering(rw, ino, 0, (size_t)len, W_READY))) {
        memcpy(buf, w->data, (size_t)len); /* it covers 0: it starts there */
        rc = 0;
    }
    pthread_mutex_unlock(&rw->lock);
    return rc;
}

/* The window of INO (fetching or ready) that starts at AT, or NULL. */
static struct rwin *starting_at(struct ofs_rwin *rw, fuse_ino_t ino, uint64_t at)
{
    for (unsigned i = 0; i < OFS_RWIN_COUNT; i++)
        if (rw->w[i].state != W_EMPTY && rw->w[i].ino == ino && rw->w[i].off == at)
            return &rw->w[i];
    return NULL;
}

/* With RW locked, after W (of O, sequential) answered a read: fetches
 * the first window not yet there among the two after W, unless the object
 * ends first or no window is free. Returns with RW locked. */
static void read_ahead(struct ofs *fs, tier_conn *c, struct ofs_rwin *rw, struct rwin *w,
                       const struct ofs_object *o)
{
    fuse_ino_t ino = o->ino;
    uint64_t length = o->length;
    uint64_t at = w->off + w->len;
    unsigned ahead = 0;
    struct rwin *x;
    int seq;
    if (!w->seq)
        return;
    for (; at < length && (x = starting_at(rw, ino, at)); at = x->off + x->len)
        if (++ahead == 2)
            return;
    if (at >= length)
        return;
    uint64_t n = window_size(rw, ino, at, 0, length - at, &seq);
    struct rwin *v = victim(rw);
    if (!v || v == w || window_map(fs, rw, v, n))
        return;
    window_take(rw, v, W_FETCHING, ino, at, n, 1);
    pthread_mutex_unlock(&rw->lock);
    int err = ofs_window_fetch(fs, c, o, at, (size_t)n, v->data);
    pthread_mutex_lock(&rw->lock);
    v->state = err ? W_EMPTY : W_READY;
    window_touch(rw, v); /* idle from now, not from when the fetch began */
    pthread_cond_broadcast(&rw->done);
}

void ofs_window_read(struct ofs *fs, tier_conn *c, fuse_req_t req, const struct ofs_object *obj,
                     size_t size, off_t off)
{
    struct ofs_rwin *rw = fs->rwin;
    fuse_ino_t ino = obj->ino;
    uint64_t length = obj->length, o = (uint64_t)off;
    struct rwin *w;
    if (o >= length || size == 0) {
        ofs_reply_read(fs, req, NULL, 0);
        return;
    }
    if ((uint64_t)size > length - o)
        size = (size_t)(length - o);
    pthread_mutex_lock(&rw->lock);
    while (!covering(rw, ino, o, size, W_READY) && covering(rw, ino, o, size, W_FETCHING))
        pthread_cond_wait(&rw->done, &rw->lock);
    if ((w = covering(rw, ino, o, size, W_READY))) {
        window_touch(rw, w);
        ofs_reply_read(fs, req, w->data + (o - w->off), size); /* under the lock: not reused meanwhile */
        read_ahead(fs, c, rw, w, obj);
        pthread_mutex_unlock(&rw->lock);
        return;
    }
    int seq;
    uint64_t n = window_size(rw, ino, o, size, length - o, &seq);
    if (!(w = victim(rw)) || window_map(fs, rw, w, n)) {
        pthread_mutex_unlock(&rw->lock);
        read_direct(fs, c, req, obj, o, size);
        return;
    }
    window_take(rw, w, W_FETCHING, ino, o, n, seq);
    pthread_mutex_unlock(&rw->lock);
    int err = ofs_window_fetch(fs, c, obj, o, (size_t)n, w->data); /* a fetching window is never reused */
    pthread_mutex_lock(&rw->lock);
    w->state = err ? W_EMPTY : W_READY;
    window_touch(rw, w);
    pthread_cond_broadcast(&rw->done);
    if (err) {
        ofs_reply_read_err(fs, req, err);
    } else {
        ofs_reply_read(fs, req, w->data, size);
        read_ahead(fs, c, rw, w, obj);
    }
    pthread_mutex_unlock(&rw->lock);
}

void ofs_window_sweep(struct ofs *fs, uint64_t now_ms)
{
    struct ofs_rwin *rw = fs->rwin;
    char *gone[OFS_RWIN_COUNT];
    size_t held = 0;
    unsigned n = 0;
    if (!rw)
        return;
    pthread_mutex_lock(&rw->lock);
    for (unsigned i = 0; i < OFS_RWIN_COUNT; i++) {
        struct rwin *w = &rw->w[i];
        /* A fetching window is being written by its fetch: never taken. */
        if (w->data && w->state != W_FETCHING && now_ms >= w->used_ms + OFS_RWIN_IDLE_MS) {
            gone[n++] = w->data;
            held += w->held;
            w->data = NULL;
            w->held = 0;
            w->state = W_EMPTY;
        }
    }
    pthread_mutex_unlock(&rw->lock);
    if (!n)
        return;
    /* Outside the lock: no reader can reach these any more. */
    for (unsigned i = 0; i < n; i++)
        munmap(gone[i], OFS_RWIN_MAX);
    atomic_fetch_sub_explicit(&fs->count.window_bytes, held, memory_order_relaxed);
    /* The reads' other buffers (a direct read's, the connections' while
     * they fetched) are malloc()ed and freed; glibc keeps freed memory in
     * its arenas until asked. Once per sweep that freed something: rare. */
    malloc_trim(0);
}
