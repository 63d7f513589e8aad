/* decode.c -- compressed results read from decoded frames: a worker thread
 * decodes ahead of a sequential reader, and the frames decoded last are kept
 * for the next read of the same frame.
 *
 * Why: a read of a compressed result decodes whole 64 KiB frames (about
 * 27 us of CPU each here). Two things cost more than the decode itself:
 * - Frames decoded twice. A reader of small pieces (read() of 4 KiB, sed,
 *   head) gets its bytes from the kernel's readahead, which ramps up with
 *   16, 32 and 64 KiB requests and then asks for 128 KiB at 112 KiB + k x
 *   128 KiB: every request cuts two frames, and each cut frame was decoded
 *   once for each request (the daemon's CPU for 64 MiB: 63 ms, against
 *   44 ms for cat's frame-aligned 256 KiB requests). Kept frames are
 *   decoded once.
 * - Decoding on the reader's path. The worker decodes the frames after a
 *   sequential read while the kernel copies this one, on the other core
 *   when it is free.
 * doc/design.md ("Reading compressed results") has what was measured and
 * tried; on two busy cores the decode's CPU is what is left.
 *
 * How: a small table of streams, one per value being read (by inode, that
 * is by version: with FUSE_CAP_NO_OPEN_SUPPORT there is no open file to hang
 * state on). Each stream has a ring of slots, frame F in slot F % nslot,
 * tagged with F. A read pins the slots of its frames (decoding the missing
 * ones itself, or waiting for the worker when it is decoding one), sends
 * them with one fuse_reply_iov() and unpins them. A read that starts where
 * the last one ended (or at 0) asks the worker for the frames after it, up
 * to the window (-o decode_ahead); a read elsewhere cancels that (the
 * worker stops at the next frame). Memory: DEC_STREAMS rings of at most
 * DEC_STREAM_BYTES (4 MiB for the largest frames), allocated on first use.
 *
 * Versions: a slot holds bytes of one version, decoded in one read
 * transaction by store_read(), and a stream is keyed by version, which is
 * never reused; a read either sends bytes of its version only, or fails
 * (the store says STORE_EGONE once the version is replaced or evicted):
 * never a mix. Frames decoded before the version went may still be sent:
 * the old version's bytes, which the contract allows on a handle opened
 * on it.
 *
 * Locking: one mutex over the table; decoding runs outside it, with the
 * slot marked busy. Nothing here waits on the kernel, so shutdown just
 * joins the worker once the session has ended.
 */
#include "common/clock.h"
#include "fs/fs.h"
#include "fs/decode.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEC_STREAMS 4                /* values decoded ahead at once */
#define DEC_SLOTS 32                 /* frames held per stream at most */
#define DEC_STREAM_BYTES (2u << 20)  /* a stream's slots: 32 frames of 64 KiB */
#define DEC_MIN_SLOTS 4u             /* ... but at least 4 of larger ones */
#define DEC_IDLE_MS 2000u            /* a stream unread this long is freed */

#define DEC_DEBUG(fs, ...) \
    do { if ((fs)->debug) fuse_log(FUSE_LOG_DEBUG, __VA_ARGS__); } while (0)

enum { SLOT_EMPTY, SLOT_BUSY, SLOT_READY };

struct dec_slot {
    uint64_t frame;   /* the frame it holds (READY) or is decoding (BUSY) */
    int state;
    unsigned pins;    /* reads sending it now: not to be reused */
};

struct dec_stream {
    uint64_t version;    /* 0: unused */
    uint64_t size;       /* original length */
    uint32_t fsz;        /* frame size; 0: stored raw, nothing to decode */
    unsigned nslot;
    unsigned char *buf;  /* nslot * fsz bytes, or NULL */
    size_t buf_cap;
    uint64_t low;        /* first frame of the latest read: kept */
    uint64_t want;       /* the worker decodes frames [low, want) */
    uint64_t next_off;   /* where the latest read ended */
    uint64_t used;       /* tick of the latest read (LRU) */
    uint64_t last_ms;    /* CLOCK_MONOTONIC ms of the latest read */
    int gone;            /* the worker found the version gone */
    struct dec_slot slot[DEC_SLOTS];
};

struct ofs_decode {
    pthread_mutex_t lock;
    pthread_cond_t work;  /* the worker: a stream wants frames, or stop */
    pthread_cond_t done;  /* a slot settled or was unpinned */
    pthread_t thread;
    int stop;
    uint64_t tick;
    unsigned rr;          /* the stream the worker looks at first */
    struct dec_stream s[DEC_STREAMS];
    unsigned long ahead;  /* frames the worker decoded, for -d */
};

#define DEC_FALLBACK 1 /* pin_frames(): the ring cannot serve this read */

static unsigned char *slot_mem(const struct dec_stream *s, uint64_t f)
{
    return s->buf + (size_t)(f % s->nslot) * s->fsz;
}

static uint32_t frame_len(const struct dec_stream *s, uint64_t f)
{
    uint64_t start = f * s->fsz;
    return (uint32_t)(s->size - start < s->fsz ? s->size - start : s->fsz);
}

static uint64_t nframes(const struct dec_stream *s)
{
    return (s->size + s->fsz - 1) / s->fsz;
}

/* Decodes frame F of S into its slot (marked busy by the caller, which
 * must not hold the lock). Returns 0 or a store code. */
static int decode_frame(store *st, const struct dec_stream *s, uint64_t f)
{
    uint32_t len = frame_len(s, f);
    size_t n;
    int rc = store_read(st, s->version, f * s->fsz, slot_mem(s, f), len, &n);
    return rc ? rc : n == len ? 0 : STORE_ECORRUPT;
}

/* Decodes frame F of S into its slot SL, called with the lock held: marks
 * SL busy, drops the lock while decoding, takes it again and marks SL
 * ready (or empty on an error). Returns 0 or a store code. */
static int slot_fill(struct ofs *fs, struct dec_stream *s, struct dec_slot *sl, uint64_t f)
{
    struct ofs_decode *d = fs->decode;
    sl->state = SLOT_BUSY;
    sl->frame = f;
    pthread_mutex_unlock(&d->lock);
    int rc = decode_frame(fs->st, s, f);
    pthread_mutex_lock(&d->lock);
    sl->state = rc ? SLOT_EMPTY : SLOT_READY;
    return rc;
}

/* ---- the table ----------------------------------------------------------- */

static int stream_idle(const struct dec_stream *s)
{
    for (unsigned i = 0; i < s->nslot; i++)
        if (s->slot[i].pins || s->slot[i].state == SLOT_BUSY)
            return 0;
    return 1;
}

/* Makes S the stream of VERSION, stored as SIZE and FSZ (0: raw). Returns
 * 0 or ENOMEM (S is then unused). */
static int stream_reset(struct dec_stream *s, uint64_t version, uint64_t size, uint32_t fsz)
{
    size_t need = 0;
    memset(s->slot, 0, sizeof s->slot);
    s->version = version;
    s->size = size;
    s->fsz = fsz;
    s->nslot = 0;
    s->low = s->want = s->next_off = 0;
    s->gone = 0;
    if (fsz) {
        s->nslot = DEC_STREAM_BYTES / fsz;
        if (s->nslot > DEC_SLOTS)
            s->nslot = DEC_SLOTS;
        if (s->nslot < DEC_MIN_SLOTS)
            s->nslot = DEC_MIN_SLOTS;
        need = (size_t)s->nslot * fsz;
        if (nframes(s) <= s->nslot) { /* the whole value fits: no more than it */
            s->nslot = (unsigned)nframes(s);
            need = (size_t)size;
        }
    }
    if (need > s->buf_cap || (need == 0 && s->buf)) {
        free(s->buf);
        s->buf = NULL;
        s->buf_cap = 0;
        if (need && !(s->buf = malloc(need))) {
            s->version = 0;
            return ENOMEM;
        }
        s->buf_cap = need;
    }
    return 0;
}

/* The stream of VERSION, made (replacing the least recently read idle one)
 * when there is none. Called with the lock held; drops it to ask the store
 * how VERSION is stored. NULL when no stream is free (or no memory) or the
 * store could not tell: the caller reads the plain way. */
static struct dec_stream *stream_get(struct ofs *fs, uint64_t version)
{
    struct ofs_decode *d = fs->decode;
    struct dec_stream *s, *victim = NULL;
    uint64_t size = 0;
    uint32_t fsz;
    int rc;
    for (unsigned i = 0; i < DEC_STREAMS; i++)
        if (d->s[i].version == version)
            return &d->s[i];
    pthread_mutex_unlock(&d->lock);
    rc = store_version_frames(fs->st, version, &size, &fsz);
    pthread_mutex_lock(&d->lock);
    if (rc)
        return NULL;
    for (unsigned i = 0; i < DEC_STREAMS; i++) {
        s = &d->s[i];
        if (s->version == version) /* another read made it meanwhile */
            return s;
        if (stream_idle(s) && (!victim || s->used < victim->used))
            victim = s;
    }
    if (!victim || stream_reset(victim, version, size, fsz))
        return NULL;
    victim->used = ++d->tick;
    victim->last_ms = common_clock_ms();
    return victim;
}

/* ---- reads ---------------------------------------------------------------- */

/* Steers the worker for a read of frames I0..I1 from OFF (LEN bytes): on a
 * sequential read, the frames after it up to the window; otherwise none. */
static void steer(struct ofs *fs, struct dec_stream *s, uint64_t off, size_t len,
                  uint64_t i0, uint64_t i1)
{
    uint64_t ahead = (fs->decode_ahead + s->fsz - 1) / s->fsz, want;
    /* In order, from the start, or inside the window already asked for (the
     * kernel's readahead requests may arrive out of order). */
    int seq = off == s->next_off || off == 0 || (i0 >= s->low && i0 < s->want);
    if (seq && i0 > s->low)
        s->low = i0;
    else if (!seq)
        s->low = i0;
    want = seq ? i1 + 1 + ahead : s->low;
    if (want > s->low + s->nslot)
        want = s->low + s->nslot;
    if (want > nframes(s))
        want = nframes(s);
    s->want = want;
    s->next_off = off + len;
    if (want > i1 + 1 && !s->gone)
        pthread_cond_signal(&fs->decode->work);
}

static void unpin(struct dec_stream *s, uint64_t i0, uint64_t i1)
{
    for (uint64_t f = i0; f <= i1; f++)
        s->slot[f % s->nslot].pins--;
}

/* Pins the slots of frames I0..I1 of S (of its current version), each
 * holding its frame: waits for the worker on a frame it is decoding,
 * decodes the others here, in order. Called with the lock held. Returns 0
 * (all pinned), DEC_FALLBACK (a slot is held by another read for another
 * frame, or S went to another value: nothing pinned) or a store code from
 * decoding (nothing pinned). */
static int pin_frames(struct ofs *fs, struct dec_stream *s, uint64_t i0, uint64_t i1)
{
    uint64_t version = s->version;
    struct ofs_decode *d = fs->decode;
    uint64_t f = i0;
    int rc = 0;
    while (f <= i1) {
        struct dec_slot *sl = &s->slot[f % s->nslot];
        if (sl->state == SLOT_BUSY) {
            pthread_cond_wait(&d->done, &d->lock);
            /* Unless it holds a pin already, S may have gone to another
             * value (or been freed) meanwhile. */
            if (s->version != version) {
                rc = DEC_FALLBACK;
                break;
            }
            continue;
        }
        if (sl->state == SLOT_READY && sl->frame == f) {
            sl->pins++;
            f++;
            continue;
        }
        if (sl->pins) {
            rc = DEC_FALLBACK;
            break;
        }
        rc = slot_fill(fs, s, sl, f);
        pthread_cond_broadcast(&d->done);
        if (rc)
            break;
    }
    if (rc && f > i0)
        unpin(s, i0, f - 1);
    return rc;
}

int ofs_decode_read(struct ofs *fs, uint64_t version, uint64_t off, size_t len,
                    store_iov_fn fn, void *ctx, int *served)
{
    struct ofs_decode *d = fs->decode;
    struct iovec iov[DEC_SLOTS];
    struct dec_stream *s;
    uint64_t i0, i1;
    size_t n = 0;
    int rc;
    *served = 0;
    if (!d || len == 0)
        return 0;
    pthread_mutex_lock(&d->lock);
    if (!(s = stream_get(fs, version)) || !s->fsz || off >= s->size) {
        pthread_mutex_unlock(&d->lock); /* raw, or past the end: the plain way */
        return 0;
    }
    if (len > s->size - off)
        len = (size_t)(s->size - off);
    i0 = off / s->fsz;
    i1 = (off + len - 1) / s->fsz;
    if (i1 - i0 >= s->nslot) {
        pthread_mutex_unlock(&d->lock);
        return 0;
    }
    s->used = ++d->tick;
    s->last_ms = common_clock_ms();
    steer(fs, s, off, len, i0, i1);
    rc = pin_frames(fs, s, i0, i1);
    pthread_mutex_unlock(&d->lock);
    if (rc == DEC_FALLBACK)
        return 0;
    *served = 1;
    if (rc)
        return rc;
    for (uint64_t f = i0; f <= i1; f++) {
        uint64_t start = f * s->fsz, a = off > start ? off - start : 0;
        uint64_t e = off + len - start < frame_len(s, f) ? off + len - start : frame_len(s, f);
        iov[n++] = (struct iovec){slot_mem(s, f) + a, (size_t)(e - a)};
    }
    rc = fn(iov, n, len, ctx);
    pthread_mutex_lock(&d->lock);
    unpin(s, i0, i1);
    pthread_cond_broadcast(&d->done);
    pthread_mutex_unlock(&d->lock);
    return rc;
}

/* ---- the worker ------------------------------------------------------------ */

/* A frame some stream wants decoded and whose slot is free to take: *S and
 * *F, or 0 when there is none. Called with the lock held. */
static int next_job(struct ofs_decode *d, struct dec_stream **sp, uint64_t *fp)
{
    for (unsigned k = 0; k < DEC_STREAMS; k++) {
        struct dec_stream *s = &d->s[(d->rr + k) % DEC_STREAMS];
        if (!s->version || !s->fsz || s->gone)
            continue;
        for (uint64_t f = s->low; f < s->want; f++) {
            struct dec_slot *sl = &s->slot[f % s->nslot];
            if (sl->state != SLOT_EMPTY && sl->frame == f)
                continue; /* there, or being decoded */
            if (sl->state == SLOT_BUSY || sl->pins)
                break;    /* a read still sends what it holds */
            d->rr = (d->rr + k + 1) % DEC_STREAMS;
            *sp = s;
            *fp = f;
            return 1;
        }
    }
    return 0;
}

/* Forgets the streams nobody read for DEC_IDLE_MS, freeing their slots;
 * returns 1 when some stream still holds memory (check again later).
 * Called with the lock held. */
static int streams_expire(struct ofs_decode *d)
{
    uint64_t now = common_clock_ms();
    int held = 0;
    for (unsigned i = 0; i < DEC_STREAMS; i++) {
        struct dec_stream *s = &d->s[i];
        if (s->version && now - s->last_ms >= DEC_IDLE_MS && stream_idle(s)) {
            free(s->buf);
            memset(s, 0, sizeof *s);
        }
        held |= s->buf != NULL;
    }
    return held;
}

/* Waits for work; with memory held, at most DEC_IDLE_MS (to free it once
 * its readers are gone). */
static void worker_wait(struct ofs_decode *d)
{
    if (!streams_expire(d)) {
        pthread_cond_wait(&d->work, &d->lock);
        return;
    }
    uint64_t at = common_clock_ns() + (uint64_t)DEC_IDLE_MS * 1000000u; /* the cond's clock */
    struct timespec ts = {(time_t)(at / 1000000000u), (long)(at % 1000000000u)};
    pthread_cond_timedwait(&d->work, &d->lock, &ts);
}

static void *decode_main(void *arg)
{
    struct ofs *fs = arg;
    struct ofs_decode *d = fs->decode;
    struct dec_stream *s;
    uint64_t f;
    int rc;
    pthread_mutex_lock(&d->lock);
    while (!d->stop) {
        if (!next_job(d, &s, &f)) {
            worker_wait(d);
            continue;
        }
        struct dec_slot *sl = &s->slot[f % s->nslot];
        rc = slot_fill(fs, s, sl, f);
        if (rc) {
            /* Replaced or evicted (or damaged): reads find out themselves. */
            s->gone = 1;
            DEC_DEBUG(fs, "offloadfs: decode ahead: version %" PRIu64 " frame %" PRIu64
                      ": %s\n", s->version, f, store_strerror(rc));
        } else {
            d->ahead++;
            DEC_DEBUG(fs, "offloadfs: decoded ahead: version %" PRIu64 " frame %" PRIu64 "\n",
                      s->version, f);
        }
        pthread_cond_broadcast(&d->done);
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

/* ---- start and stop -------------------------------------------------------- */

int ofs_decode_start(struct ofs *fs)
{
    struct ofs_decode *d;
    int rc;
    fs->decode = NULL;
    if (fs->decode_ahead == 0)
        return 0;
    if (!(d = calloc(1, sizeof *d)))
        return ENOMEM;
    pthread_condattr_t ca;
    pthread_mutex_init(&d->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* worker_wait()'s deadline */
    pthread_cond_init(&d->work, &ca);
    pthread_condattr_destroy(&ca);
    pthread_cond_init(&d->done, NULL);
    fs->decode = d;
    if ((rc = pthread_create(&d->thread, NULL, decode_main, fs))) {
        fs->decode = NULL;
        pthread_cond_destroy(&d->done);
        pthread_cond_destroy(&d->work);
        pthread_mutex_destroy(&d->lock);
        free(d);
        return rc;
    }
    return 0;
}

void ofs_decode_stop(struct ofs *fs)
{
    struct ofs_decode *d = fs->decode;
    if (!d)
        return;
    pthread_mutex_lock(&d->lock);
    d->stop = 1;
    pthread_cond_signal(&d->work);
    pthread_mutex_unlock(&d->lock);
    pthread_join(d->thread, NULL);
    DEC_DEBUG(fs, "offloadfs: decode ahead: %lu frames decoded ahead\n", d->ahead);
    for (unsigned i = 0; i < DEC_STREAMS; i++)
        free(d->s[i].buf);
    pthread_cond_destroy(&d->done);
    pthread_cond_destroy(&d->work);
    pthread_mutex_destroy(&d->lock);
    free(d);
    fs->decode = NULL;
}
