/* ops.c -- the FUSE low-level handlers of offloadfs.
 *
 * Each handler is split in two: do_x() does the work and returns 0 or an
 * errno value; op_x() is the thin entry point that sends exactly one reply.
 * Nothing here keeps per-inode state: an inode number is a store version id,
 * so every answer can be computed from the store alone (see fs.h).
 */
#include "common/clock.h"
#include "fs/fs.h"
#include "fs/conn.h"
#include "fs/counters.h"
#include "fs/decode.h"
#include "fs/errmap.h"
#include "fs/fill.h"
#include "fs/keep.h"
#include "fs/listing.h"
#include "fs/lookup.h"
#include "fs/ops.h"
#include "fs/window.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>

#define ROOT_INO FUSE_ROOT_ID
#define OFS_DEBUG(fs, ...) \
    do { if ((fs)->debug) fuse_log(FUSE_LOG_DEBUG, __VA_ARGS__); } while (0)

/* ---- attributes ------------------------------------------------------- */

static struct timespec ns_to_ts(uint64_t ns)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    return ts;
}

static void entry_stat(const struct ofs *fs, const store_entry *e, struct stat *st)
{
    memset(st, 0, sizeof *st);
    st->st_ino = (ino_t)e->version;
    st->st_mode = S_IFREG | 0444;
    st->st_nlink = 1;
    st->st_uid = fs->uid;
    st->st_gid = fs->gid;
    st->st_size = (off_t)e->size;
    st->st_blocks = (blkcnt_t)((e->size + 511u) / 512u);
    st->st_blksize = OFS_BLKSIZE;
    st->st_mtim = st->st_ctim = st->st_atim = ns_to_ts(e->created_ns);
}

static void root_stat(struct ofs *fs, struct stat *st)
{
    memset(st, 0, sizeof *st);
    st->st_ino = ROOT_INO;
    st->st_mode = S_IFDIR | 0555;
    st->st_nlink = 2;
    st->st_uid = fs->uid;
    st->st_gid = fs->gid;
    st->st_blksize = OFS_BLKSIZE;
    st->st_mtim = st->st_atim = ns_to_ts(atomic_load(&fs->root_mtime_ns));
    st->st_ctim = ns_to_ts(fs->start_ns); /* this daemon's: fs.h */
}

static void entry_param(struct ofs *fs, const store_entry *e,
                        struct fuse_entry_param *ep)
{
    memset(ep, 0, sizeof *ep);
    ep->ino = e->version;
    ep->attr_timeout = fs->timeout;
    ep->entry_timeout = fs->timeout;
    entry_stat(fs, e, &ep->attr);
}

/* Seconds left of the validity of a listing fetched at AT_MS
 * (common_clock_ms()): listed attributes are valid as long as it is. */
static double listed_ttl(const struct ofs *fs, uint64_t at_ms)
{
    uint64_t age = common_clock_ms() - at_ms, ttl = (uint64_t)fs->remote_ttl * 1000u;
    return age < ttl ? (double)(ttl - age) / 1000.0 : 0.0;
}

/* ---- init ------------------------------------------------------------- */

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
    struct ofs *fs = userdata;
    atomic_store(&fs->no_open, (conn->capable & FUSE_CAP_NO_OPEN_SUPPORT) != 0);
    if (fs->conn_opts)
        fuse_apply_conn_info_opts(fs->conn_opts, conn);
    /* Listing with attributes saves one lookup per name on ls -l; "auto"
     * lets the kernel fall back to plain readdir when nobody stats. */
    if (conn->capable & FUSE_CAP_READDIRPLUS)
        conn->want |= FUSE_CAP_READDIRPLUS;
    if (conn->capable & FUSE_CAP_READDIRPLUS_AUTO)
        conn->want |= FUSE_CAP_READDIRPLUS_AUTO;
    /* Splice lost at 1 MiB requests when measured; plain copies it is. */
    conn->want &= ~(unsigned)(FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE |
                              FUSE_CAP_SPLICE_MOVE);
    OFS_DEBUG(fs, "offloadfs: init: max_write=%u max_readahead=%u no_open=%d\n",
              conn->max_write, conn->max_readahead, atomic_load(&fs->no_open));
}

/* ---- lookup / getattr ------------------------------------------------- */

/* KEY's remote answer for a lookup: from the last listing while it is
 * valid (no request: listing.c, lookup.c), else from the remote. 0 and
 * *EP; ENOENT with *MISS_LEFT (ms); ENODATA, EIO, ENOMEM. */
static int remote_lookup(struct ofs *fs, const char *name, struct fuse_entry_param *ep,
                         uint64_t *miss_left)
{
    struct ofs_listed l;
    store_entry e;
    double ttl = fs->remote_ttl;
    int rc;
    *miss_left = 0;
    if (ofs_listing_find(fs, name, &l) == 0 &&
        ofs_lookup_listed(fs, name, l.size, l.mtime, l.at_ms, &e) == 0) {
        ttl = listed_ttl(fs, l.at_ms);
    } else if ((rc = ofs_lookup_name(fs, name, &e, miss_left)) != 0) {
        return rc;
    }
    entry_param(fs, &e, ep);
    ep->entry_timeout = ep->attr_timeout = ttl;
    return 0;
}

/* NAME's cached copy E of version HAVE, when the remote answered NAME with
 * inode INO of another version: the copy goes (the new version is kept
 * when read). A listed inode not pinned yet tells no version: nothing is
 * asked for it. */
static void drop_if_replaced(struct ofs *fs, const char *name, const store_entry *e, const char *have,
                             fuse_ino_t ino)
{
    char now[TIER_ETAG_MAX + 1];
    if (ofs_lookup_version(fs, ino, now, sizeof now) == 0 && strcmp(now, have) != 0)
        ofs_keep_drop(fs, name, e->version);
}

/* NAME, held here as a cached copy E of version HAVE (kept by a read here, the mount's or
 * a library's: store_put_cached()), which is the remote's answer as of that
 * read: the remote is asked as for a name not here, so a version replaced
 * or removed on another host is not served from the copy; the copy is the
 * answer when the remote cannot give one (EIO), valid for remote_ttl only.
 * After such a failure the copies are answered without asking for
 * OFS_COPY_DOWN_MS: a grep over a thousand copies with the remote down
 * pays the failure bound once, not a thousand times. As remote_lookup(). */
static int cached_lookup(struct ofs *fs, const char *name, const store_entry *e, const char *have,
                         struct fuse_entry_param *ep, uint64_t *miss_left)
{
    uint64_t now = common_clock_ms(), failed = atomic_load(&fs->copy_fail_ms);
    int rc = failed && now - failed < OFS_COPY_DOWN_MS ? EIO : remote_lookup(fs, name, ep, miss_left);
    if (rc == ENODATA || rc == ENOENT) /* removed there, or never there: the copy goes */
        ofs_keep_drop(fs, name, e->version);
    if (rc == 0)
        drop_if_replaced(fs, name, e, have, ep->ino);
    if (rc == EIO) {
        if (!failed || now - failed >= OFS_COPY_DOWN_MS)
            atomic_store(&fs->copy_fail_ms, now);
        entry_param(fs, e, ep);
        ep->entry_timeout = ep->attr_timeout = fs->remote_ttl;
        *miss_left = 0;
        rc = 0;
    }
    return rc;
}

static int do_lookup(struct ofs *fs, fuse_ino_t parent, const char *name,
                     struct fuse_entry_param *ep)
{
    char have[STORE_ETAG_MAX + 1];
    store_entry e;
    uint64_t miss_left = 0;
    int rc;
    if (parent != ROOT_INO)
        return ENOTDIR;
    rc = store_lookup(fs->st, fs->ns, name, &e, NULL);
    if (rc == 0 && fs->tier && store_cached(fs->st, e.version, have, sizeof have) > 0) {
        rc = cached_lookup(fs, name, &e, have, ep, &miss_left);
    } else if (rc == 0) {
        entry_param(fs, &e, ep);
        return 0;
    } else {
        rc = ofs_errno(rc);
        if (fs->tier && (rc == ENOENT || rc == ENODATA)) /* not here: the remote? */
            rc = remote_lookup(fs, name, ep, &miss_left);
    }
    if (rc == 0)
        return 0;
    if (rc == ENODATA)
        ofs_count(&fs->count.evicted_reads, 1);
    if (rc == ENOENT) {
        ofs_count(&fs->count.missing_lookups, 1);
        /* A negative entry the kernel may cache: the watcher invalidates the
         * name as soon as it is written here; another host's write it cannot
         * see, so with a remote the kernel keeps it only as long as the
         * daemon's own miss stays true (lookup.h, OFS_REMOTE_MISS_MS). */
        memset(ep, 0, sizeof *ep);
        ep->entry_timeout = fs->tier ? (double)miss_left / 1000.0 : fs->timeout;
        return 0;
    }
    OFS_DEBUG(fs, "offloadfs: lookup '%s': %s\n", name, strerror(rc));
    return rc;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    struct fuse_entry_param ep;
    int err = do_lookup(ofs_from_req(req), parent, name, &ep);
    if (err)
        fuse_reply_err(req, err);
    else
        fuse_reply_entry(req, &ep);
}

static int do_getattr(struct ofs *fs, fuse_ino_t ino, struct stat *st)
{
    store_entry e;
    int rc;
    if (ino == ROOT_INO) {
        root_stat(fs, st);
        return 0;
    }
    rc = ofs_remote_ino(ino) ? ofs_lookup_entry(fs, ino, &e)
                             : store_version_stat(fs->st, fs->ns, ino, &e, NULL);
    if (rc)
        return ofs_errno(rc);
    entry_stat(fs, &e, st);
    return 0;
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    struct ofs *fs = ofs_from_req(req);
    struct stat st;
    int err = do_getattr(fs, ino, &st);
    (void)fi;
    if (err)
        fuse_reply_err(req, err);
    else
        fuse_reply_attr(req, &st, fs->timeout);
}

/* ---- open / read ------------------------------------------------------ */

static int do_open(struct ofs *fs, fuse_ino_t ino, struct fuse_file_info *fi)
{
    int err;
    if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC))
        return EROFS;
    if (ino == ROOT_INO)
        return EISDIR;
    /* No per-open state is needed (an inode's bytes never change), so let
     * the kernel skip OPEN altogether; it then keeps the page cache too. */
    if (atomic_load(&fs->no_open))
        return ENOSYS;
    fi->keep_cache = 1;
    fi->noflush = 1;
    if (ofs_remote_ino(ino))
        return ofs_lookup_entry(fs, ino, NULL);
    err = ofs_errno(store_version_stat(fs->st, fs->ns, ino, NULL, NULL));
    if (err == ENODATA)
        ofs_count(&fs->count.evicted_reads, 1);
    return err;
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    int err = do_open(ofs_from_req(req), ino, fi);
    if (err)
        fuse_reply_err(req, err);
    else
        fuse_reply_open(req, fi);
}

/* The bytes go to the kernel straight from the store's memory map: one
 * copy fewer than reading into a buffer. store_read_iov() hands them over
 * inside one read transaction, so they are all of version INO or the call
 * fails with ENODATA: never a mix. */
struct read_reply {
    fuse_req_t req;
    int replied;
    size_t total;
};

static int read_send(const struct iovec *iov, size_t iovcnt, size_t total, void *ctx)
{
    struct read_reply *r = ctx;
    r->total = total;
    r->replied = 1;
    fuse_reply_iov(r->req, iov, (int)iovcnt);
    return 0;
}

/* Reads SIZE bytes at OFF of local version VERSION for REQ: 0 once
 * replied, else the errno to answer (nothing replied). */
static int read_version(struct ofs *fs, fuse_req_t req, uint64_t version, size_t size, off_t off)
{
    struct read_reply r = {req, 0, 0};
    int rc, served;
    /* A compressed value's frames come decoded, often ahead (decode.c). */
    rc = ofs_decode_read(fs, version, (uint64_t)off, size, read_send, &r, &served);
    if (!served)
        rc = store_read_iov(fs->st, version, (uint64_t)off, size, read_send, &r);
    if (rc)
        OFS_DEBUG(fs, "offloadfs: read ino %" PRIu64 " @%jd: %s\n", version, (intmax_t)off,
                  store_strerror(rc));
    if (r.replied) {
        ofs_count(&fs->count.reads, 1);
        ofs_count(&fs->count.read_bytes, r.total);
        return 0;
    }
    return rc ? ofs_errno(rc) : EIO;
}

/* After a read of O that no copy answered, a result small enough to come
 * whole with its lookup (fill.h): kept as a cached copy from the lookup's
 * window, with no fetch, unless the window is gone or the store would not
 * take it (so a store that refuses is not written to at every read). */
static void keep_small(struct ofs *fs, const struct ofs_object *o, const store_entry *meta)
{
    char *buf;
    if (o->length == 0 || o->length > ofs_keep_max(fs) || !(buf = malloc((size_t)o->length)))
        return;
    if (ofs_window_copy(fs, o->ino, o->length, buf) == 0)
        ofs_keep_copy(fs, o->key, o->etag, meta, buf, o->length);
    free(buf);
}

/* Answers a read of O from the store's cached copy of its version: 1 when
 * it did. 0 (replied nothing) when there is none, or when it went since it
 * was found (evicted: the remote still has the bytes). */
static int read_copy(struct ofs *fs, fuse_req_t req, const struct ofs_object *o, size_t size,
                     off_t off)
{
    uint64_t copy;
    if (!ofs_keep_find(fs, o->key, o->etag, &copy) || read_version(fs, req, copy, size, off) != 0)
        return 0;
    ofs_count(&fs->count.cache_hits, 1);
    return 1;
}

/* A read of remote inode INO: what it is (lookup.c), then its bytes: from
 * the store when it holds a cached copy of that version (keep.c), else
 * from a fill of the whole result (fill.c), else from the read windows
 * (window.c), on this thread's connection (conn.c). */
static void op_read_remote(struct ofs *fs, fuse_req_t req, fuse_ino_t ino, size_t size, off_t off)
{
    struct ofs_object o;
    store_entry meta;
    int err = ofs_lookup_object(fs, ino, &o);
    if (err) {
        ofs_count(&fs->count.evicted_reads, err == ENODATA);
        fuse_reply_err(req, err);
        return;
    }
    if (read_copy(fs, req, &o, size, off))
        return;
    tier_conn *c = ofs_conn_get(fs);
    int have_meta = ofs_lookup_meta(fs, ino, &meta) == 0;
    int filled = ofs_fill_read(fs, c, req, &o, have_meta ? &meta : NULL, size, off);
    if (filled == OFS_FILL_REPLIED || (filled == OFS_FILL_KEPT && read_copy(fs, req, &o, size, off)))
        return;
    ofs_window_read(fs, c, req, &o, size, off);
    if (o.length <= OFS_RWIN_FIRST && fs->keep)
        keep_small(fs, &o, have_meta ? &meta : NULL);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
    struct ofs *fs = ofs_from_req(req);
    int err;
    (void)fi;
    if (ino == ROOT_INO) {
        fuse_reply_err(req, EISDIR);
        return;
    }
    if (off < 0) {
        fuse_reply_err(req, EINVAL);
        return;
    }
    if (ofs_remote_ino(ino)) {
        op_read_remote(fs, req, ino, size, off);
        return;
    }
    if ((err = read_version(fs, req, ino, size, off)) == 0)
        return;
    if (err == ENODATA)
        ofs_count(&fs->count.evicted_reads, 1);
    fuse_reply_err(req, err);
}

/* ---- directory -------------------------------------------------------- */

/* Per-open-directory state in fi->fh. Offsets are ordinal positions:
 * 0 ".", 1 "..", 2 + i the i-th live key in key order; an entry's d_off is
 * its position + 1. The last key sent lets the next call resume with
 * store_list(after=key) without re-reading what came before. */
struct ofs_dir {
    off_t pos;                      /* position after the last key sent */
    char key[STORE_NAME_MAX + 1];   /* that key ("" before any) */
    int remote;                     /* it came from the remote's names (listing.c),
                                       which follow the local ones */
    struct ofs_rlist *rlist;        /* the remote's names this handle lists
                                       (listing.c), NULL before */
};

#define DIR_FIRST_KEY 2
#define RD_FULL (-1) /* callback sentinel: reply buffer full */

struct rd_ctx {
    fuse_req_t req;
    struct ofs *fs;
    struct ofs_dir *dir;
    char *buf;
    size_t size, used;
    off_t pos;       /* position of the next entry to add */
    off_t skip;      /* keys to pass over before adding (after a seek) */
    int plus;
};

/* Adds one entry at c->pos; returns 0 or RD_FULL. E NULL: a dot entry. */
static int rd_add(struct rd_ctx *c, const char *name, const store_entry *e)
{
    size_t need, room = c->size - c->used;
    off_t next = c->pos + 1;
    if (c->plus) {
        struct fuse_entry_param ep;
        if (e) {
            entry_param(c->fs, e, &ep);
        } else {
            memset(&ep, 0, sizeof ep);
            root_stat(c->fs, &ep.attr);
        }
        need = fuse_add_direntry_plus(c->req, c->buf + c->used, room, name,
                                      &ep, next);
    } else {
        struct stat st;
        memset(&st, 0, sizeof st);
        st.st_ino = e ? (ino_t)e->version : ROOT_INO;
        st.st_mode = e ? S_IFREG : S_IFDIR;
        need = fuse_add_direntry(c->req, c->buf + c->used, room, name, &st, next);
    }
    if (need > room)
        return RD_FULL;
    c->used += need;
    c->pos = next;
    return 0;
}

static int rd_key(const char *key, size_t keylen, const store_entry *e, void *vctx)
{
    struct rd_ctx *c = vctx;
    int rc;
    if (c->skip > 0) {
        c->skip--;
        c->pos++;
        return 0;
    }
    if ((rc = rd_add(c, key, e)))
        return rc;
    memcpy(c->dir->key, key, keylen + 1);
    c->dir->pos = c->pos;
    c->dir->remote = 0;
    return 0;
}

/* A name only the remote holds. In readdirplus it comes with the
 * listing's size and mtime and an inode (lookup.c), valid as long as the
 * listing, so ls -l asks nothing more per name; a name the listing cannot
 * give an inode (removed here, no memory) goes without attributes (ino 0)
 * and the kernel looks it up when asked. */
static int rd_remote(const struct ofs_listed *l, void *vctx)
{
    struct rd_ctx *c = vctx;
    struct fuse_entry_param ep;
    store_entry e;
    size_t need, room = c->size - c->used, keylen = strlen(l->key);
    if (c->skip > 0) {
        c->skip--;
        c->pos++;
        return 0;
    }
    memset(&ep, 0, sizeof ep);
    ep.attr.st_mode = S_IFREG;
    ep.attr.st_ino = (ino_t)(OFS_REMOTE_INO_BASE - 1); /* d_ino only */
    if (c->plus && ofs_lookup_listed(c->fs, l->key, l->size, l->mtime, l->at_ms, &e) == 0) {
        entry_param(c->fs, &e, &ep);
        ep.entry_timeout = ep.attr_timeout = listed_ttl(c->fs, l->at_ms);
    }
    need = c->plus ? fuse_add_direntry_plus(c->req, c->buf + c->used, room, l->key, &ep, c->pos + 1)
                   : fuse_add_direntry(c->req, c->buf + c->used, room, l->key, &ep.attr, c->pos + 1);
    if (need > room)
        return RD_FULL;
    c->used += need;
    c->pos++;
    memcpy(c->dir->key, l->key, keylen + 1);
    c->dir->pos = c->pos;
    c->dir->remote = 1;
    return 0;
}

static int do_readdir(struct rd_ctx *c, off_t off)
{
    const char *after = NULL;
    int rc = 0, in_remote = 0;
    c->pos = off;
    if (c->pos == 0)
        rc = rd_add(c, ".", NULL);
    if (!rc && c->pos == 1)
        rc = rd_add(c, "..", NULL);
    if (rc)
        return 0;
    if (off > DIR_FIRST_KEY && off == c->dir->pos) {
        after = c->dir->key;          /* the common case: carry on */
        in_remote = c->dir->remote;
    } else if (off > DIR_FIRST_KEY) {
        c->pos = DIR_FIRST_KEY;       /* a seek: count from the start */
        c->skip = off - DIR_FIRST_KEY;
        OFS_DEBUG(c->fs, "offloadfs: readdir: seek to %jd, rescanning\n", (intmax_t)off);
    }
    if (!in_remote) {
        rc = store_list(c->fs->st, c->fs->ns, after, rd_key, c);
        if (rc == RD_FULL || rc || !c->fs->tier)
            return rc == RD_FULL ? 0 : ofs_errno(rc);
        after = NULL;
    }
    /* then what only the remote has */
    rc = ofs_listing_names(c->fs, c->req, &c->dir->rlist, after, rd_remote, c);
    return rc == RD_FULL ? 0 : ofs_errno(rc);
}

static void readdir_common(fuse_req_t req, fuse_ino_t ino, size_t size,
                           off_t off, struct fuse_file_info *fi, int plus)
{
    struct rd_ctx c;
    int err;
    memset(&c, 0, sizeof c);
    c.req = req;
    c.fs = ofs_from_req(req);
    c.dir = (struct ofs_dir *)(uintptr_t)fi->fh;
    c.size = size;
    c.plus = plus;
    if (ino != ROOT_INO || !c.dir)
        err = ENOTDIR;
    else if (!(c.buf = malloc(size ? size : 1)))
        err = ENOMEM;
    else
        err = do_readdir(&c, off);
    /* Entries already in the buffer are worth sending even after an error. */
    if (err && c.used == 0)
        fuse_reply_err(req, err);
    else
        fuse_reply_buf(req, c.buf, c.used);
    free(c.buf);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                       struct fuse_file_info *fi)
{
    readdir_common(req, ino, size, off, fi, 0);
}

static void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
                           off_t off, struct fuse_file_info *fi)
{
    readdir_common(req, ino, size, off, fi, 1);
}

static int do_opendir(fuse_ino_t ino, struct fuse_file_info *fi)
{
    struct ofs_dir *d;
    if (ino != ROOT_INO)
        return ENOTDIR;
    if ((fi->flags & O_ACCMODE) != O_RDONLY)
        return EROFS;
    if (!(d = calloc(1, sizeof *d)))
        return ENOMEM;
    fi->fh = (uint64_t)(uintptr_t)d;
    /* No cache_readdir: offsets are positions in the listing, and a pass
     * resumed from a cached listing after a name came or went counted them
     * in the changed one, listing a name twice or missing one (found by
     * tests/faults/test_readdir.sh). Every listing asks the daemon. */
    fi->cache_readdir = 0;
    fi->keep_cache = 0;
    return 0;
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    int err = do_opendir(ino, fi);
    if (err)
        fuse_reply_err(req, err);
    else
        fuse_reply_open(req, fi);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    struct ofs_dir *d = (struct ofs_dir *)(uintptr_t)fi->fh;
    (void)ino;
    if (d)
        ofs_listing_drop(ofs_from_req(req), d->rlist);
    free(d);
    fuse_reply_err(req, 0);
}

/* ---- statfs ----------------------------------------------------------- */

#define STATFS_BSIZE 4096u

static int do_statfs(struct ofs *fs, struct statvfs *sv)
{
    store_stats s;
    int rc = store_stats_get(fs->st, &s);
    if (rc)
        return ofs_errno(rc);
    memset(sv, 0, sizeof *sv);
    sv->f_bsize = sv->f_frsize = STATFS_BSIZE;
    /* The bound counts what results occupy (compressed): df's "used". */
    sv->f_blocks = (fsblkcnt_t)(s.max_total_bytes / STATFS_BSIZE);
    sv->f_bfree = sv->f_bavail = (fsblkcnt_t)(
        s.stored_bytes < s.max_total_bytes ? (s.max_total_bytes - s.stored_bytes) / STATFS_BSIZE
                                           : 0);
    sv->f_files = (fsfilcnt_t)s.entries;
    sv->f_namemax = STORE_NAME_MAX;
    return 0;
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
    struct statvfs sv;
    int err = do_statfs(ofs_from_req(req), &sv);
    (void)ino;
    if (err)
        fuse_reply_err(req, err);
    else
        fuse_reply_statfs(req, &sv);
}

/* ---- extended attributes ---------------------------------------------- */

/* Entries without a recorded tool have no user.offload.tool at all: listed
 * names are exactly the ones getxattr answers. */
enum { XA_TOOL, XA_CREATED, XA_ORIGINAL_SIZE, XA_TRUNCATED, XA_COUNT };
static const char *const xattr_names[XA_COUNT] = {
    "user.offload.tool", "user.offload.created",
    "user.offload.original_size", "user.offload.truncated",
};

/* Formats NS (since the epoch, UTC) as RFC 3339 with microseconds. */
static int rfc3339(uint64_t ns, char *out, size_t outsz)
{
    time_t secs = (time_t)(ns / 1000000000u);
    struct tm tm;
    char day[32];
    if (!gmtime_r(&secs, &tm) || !strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm))
        return EIO;
    return snprintf(out, outsz, "%s.%06uZ", day,
                    (unsigned)(ns % 1000000000u / 1000u)) < (int)outsz ? 0 : EIO;
}

/* Writes attribute WHICH of E into OUT (STORE_TOOL_MAX + 1 bytes at least);
 * *LEN gets its length. ENODATA when E has no such attribute. */
static int xattr_value(const store_entry *e, int which, char *out, size_t outsz,
                       size_t *len)
{
    int rc = 0;
    switch (which) {
    case XA_TOOL:
        if (!e->has_tool)
            return ENODATA;
        snprintf(out, outsz, "%s", e->tool);
        break;
    case XA_CREATED:
        rc = rfc3339(e->created_ns, out, outsz);
        break;
    case XA_ORIGINAL_SIZE:
        snprintf(out, outsz, "%" PRIu64, e->original_size);
        break;
    default:
        snprintf(out, outsz, "%d", e->truncated ? 1 : 0);
        break;
    }
    *len = strlen(out);
    return rc;
}

static int xattr_index(const char *name)
{
    for (int i = 0; i < XA_COUNT; i++)
        if (!strcmp(name, xattr_names[i]))
            return i;
    return -1;
}

/* Fetches the entry behind INO. The root has none of these (ENODATA). */
static int xattr_entry(struct ofs *fs, fuse_ino_t ino, store_entry *e)
{
    if (ino == ROOT_INO)
        return ENODATA;
    if (ofs_remote_ino(ino)) /* a listed inode's metadata: one lookup */
        return ofs_lookup_meta(fs, ino, e);
    return ofs_errno(store_version_stat(fs->st, fs->ns, ino, e, NULL));
}

/* The answer for a name that is not one of ours: ENODATA in the user
 * namespace (doc/contract.md's "unknown name"), EOPNOTSUPP elsewhere
 * (security.*, system.posix_acl_*, trusted.*): this filesystem has no
 * labels and no ACLs at all. ls -l asks every file for security.selinux and
 * system.posix_acl_access, and stops asking for the rest of the device after
 * one EOPNOTSUPP; ENODATA would cost two round trips per file. */
static int xattr_unknown(const char *name)
{
    return strncmp(name, "user.", 5) ? EOPNOTSUPP : ENODATA;
}

/* The root's own attributes: which store and namespace this mount serves,
 * so a reader can tell its mount from another of the same store (another
 * namespace) or of another store (fsname is anything -o fsname= said). */
#define XA_ROOT_STORE "user.offloadfs.store"
#define XA_ROOT_NS "user.offloadfs.namespace"
static const char xattr_root_list[] = XA_ROOT_STORE "\0" XA_ROOT_NS;

/* Points *VAL at the root attribute NAME of FS (static daemon state: the
 * store's real path or the namespace); ENODATA for any other name. */
static int root_xattr(const struct ofs *fs, const char *name, const char **val)
{
    if (!strcmp(name, XA_ROOT_STORE))
        *val = fs->store_path;
    else if (!strcmp(name, XA_ROOT_NS))
        *val = fs->ns;
    else
        return xattr_unknown(name);
    return 0;
}

static int do_getxattr(struct ofs *fs, fuse_ino_t ino, const char *name,
                       char *val, size_t valsz, size_t *len)
{
    store_entry e;
    int which = xattr_index(name), err;
    /* Unknown names are answered without touching the store. */
    if (which < 0)
        return xattr_unknown(name);
    if ((err = xattr_entry(fs, ino, &e)))
        return err;
    return xattr_value(&e, which, val, valsz, len);
}

static void reply_xattr(fuse_req_t req, int err, const char *val, size_t len,
                        size_t size)
{
    if (err)
        fuse_reply_err(req, err);
    else if (size == 0)
        fuse_reply_xattr(req, len);
    else if (len > size)
        fuse_reply_err(req, ERANGE);
    else
        fuse_reply_buf(req, val, len);
}

static void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
                        size_t size)
{
    char val[STORE_TOOL_MAX + 64];
    const char *root_val = NULL;
    size_t len = 0;
    int err;
    if (ino == ROOT_INO) { /* no copy: a store path can be PATH_MAX long */
        err = root_xattr(ofs_from_req(req), name, &root_val);
        reply_xattr(req, err, root_val, err ? 0 : strlen(root_val), size);
        return;
    }
    err = do_getxattr(ofs_from_req(req), ino, name, val, sizeof val, &len);
    reply_xattr(req, err, val, len, size);
}

static int do_listxattr(struct ofs *fs, fuse_ino_t ino, char *list, size_t *len)
{
    store_entry e;
    int err;
    *len = 0;
    if (ino == ROOT_INO) {
        memcpy(list, xattr_root_list, sizeof xattr_root_list);
        *len = sizeof xattr_root_list;
        return 0;
    }
    if ((err = xattr_entry(fs, ino, &e)))
        return err;
    for (int i = 0; i < XA_COUNT; i++) {
        size_t n = strlen(xattr_names[i]) + 1;
        if (i == XA_TOOL && !e.has_tool)
            continue;
        memcpy(list + *len, xattr_names[i], n);
        *len += n;
    }
    return 0;
}

static void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
    char list[256];
    size_t len;
    int err = do_listxattr(ofs_from_req(req), ino, list, &len);
    reply_xattr(req, err, list, len, size);
}

/* ---- everything that would write: EROFS -------------------------------- */

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
                       int to_set, struct fuse_file_info *fi)
{
    (void)ino; (void)attr; (void)to_set; (void)fi;
    fuse_reply_err(req, EROFS);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
                     mode_t mode, dev_t rdev)
{
    (void)parent; (void)name; (void)mode; (void)rdev;
    fuse_reply_err(req, EROFS);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
                     mode_t mode)
{
    (void)parent; (void)name; (void)mode;
    fuse_reply_err(req, EROFS);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    (void)parent; (void)name;
    fuse_reply_err(req, EROFS);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
                       const char *name)
{
    (void)link; (void)parent; (void)name;
    fuse_reply_err(req, EROFS);
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
                      fuse_ino_t newparent, const char *newname, unsigned flags)
{
    (void)parent; (void)name; (void)newparent; (void)newname; (void)flags;
    fuse_reply_err(req, EROFS);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
                    const char *newname)
{
    (void)ino; (void)newparent; (void)newname;
    fuse_reply_err(req, EROFS);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
                     size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)ino; (void)buf; (void)size; (void)off; (void)fi;
    fuse_reply_err(req, EROFS);
}

static void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
                        const char *value, size_t size, int flags)
{
    (void)ino; (void)name; (void)value; (void)size; (void)flags;
    fuse_reply_err(req, EROFS);
}

static void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
    (void)ino; (void)name;
    fuse_reply_err(req, EROFS);
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
                      mode_t mode, struct fuse_file_info *fi)
{
    (void)parent; (void)name; (void)mode; (void)fi;
    fuse_reply_err(req, EROFS);
}

static void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset,
                         off_t length, struct fuse_file_info *fi)
{
    (void)ino; (void)mode; (void)offset; (void)length; (void)fi;
    fuse_reply_err(req, EROFS);
}

static void op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
                               struct fuse_file_info *fi_in, fuse_ino_t ino_out,
                               off_t off_out, struct fuse_file_info *fi_out,
                               size_t len, int flags)
{
    (void)ino_in; (void)off_in; (void)fi_in; (void)ino_out; (void)off_out;
    (void)fi_out; (void)len; (void)flags;
    fuse_reply_err(req, EROFS);
}

/* ---- the table -------------------------------------------------------- */

static const struct fuse_lowlevel_ops ops = {
    .init = op_init,
    .lookup = op_lookup,
    .getattr = op_getattr,
    .setattr = op_setattr,
    .mknod = op_mknod,
    .mkdir = op_mkdir,
    .unlink = op_unlink,
    .rmdir = op_unlink,
    .symlink = op_symlink,
    .rename = op_rename,
    .link = op_link,
    .open = op_open,
    .read = op_read,
    .write = op_write,
    .opendir = op_opendir,
    .readdir = op_readdir,
    .readdirplus = op_readdirplus,
    .releasedir = op_releasedir,
    .statfs = op_statfs,
    .setxattr = op_setxattr,
    .getxattr = op_getxattr,
    .listxattr = op_listxattr,
    .removexattr = op_removexattr,
    .create = op_create,
    .fallocate = op_fallocate,
    .copy_file_range = op_copy_file_range,
};

const struct fuse_lowlevel_ops *ofs_ops(void)
{
    return &ops;
}
