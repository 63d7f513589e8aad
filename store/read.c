/* read.c -- lookups and reads: every byte handed out comes from chunks
 * whose CRC-32C was checked, inside one read transaction.
 */
#include "store/store_int.h"
#include "store/frame.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int lookup_in(const tx *t, const char *name, size_t nlen, store_entry *e,
                     store_tomb *tb)
{
    store_entry tmp;
    MDB_val v;
    rec_tomb rt;
    int rc = store_entry_load(t, name, nlen, e ? e : &tmp);
    if (rc != STORE_ENOTFOUND)
        return rc;
    if ((rc = store_db_get(t, DB_TOMB, name, nlen, &v)))
        return rc;
    if ((rc = store_rec_tomb_decode(v.mv_data, v.mv_size, &rt)))
        return rc;
    if (tb) {
        tb->version = rt.version;
        tb->when_ns = rt.when_ns;
        tb->reason = rt.reason;
    }
    return STORE_EEVICTED;
}

int store_lookup(store *st, const char *ns, const char *key, store_entry *e,
                 store_tomb *tb)
{
    char name[NAME_BUF];
    size_t nlen;
    tx t;
    int rc;
    if ((rc = store_name_make(ns, key, name, &nlen)) || (rc = store_tx_begin(st, 0, &t)))
        return rc;
    rc = lookup_in(&t, name, nlen, e, tb);
    store_tx_abort(&t);
    return rc;
}

int store_version_stat(store *st, const char *ns, uint64_t version,
                       store_entry *e, char *keybuf)
{
    unsigned char k[8];
    const char *pns, *pkey;
    size_t nslen, keylen;
    store_entry tmp;
    MDB_val v;
    tx t;
    int rc;
    if (!ns)
        ns = STORE_DEFAULT_NAMESPACE;
    if ((rc = store_tx_begin(st, 0, &t)))
        return rc;
    store_rec_be64(k, version);
    rc = store_db_get(&t, DB_VER, k, 8, &v);
    if (rc == STORE_ENOTFOUND)
        rc = STORE_EGONE;
    if (!rc)
        rc = store_rec_name_split(v.mv_data, v.mv_size, &pns, &nslen, &pkey, &keylen);
    if (!rc && (nslen != strlen(ns) || memcmp(pns, ns, nslen)))
        rc = STORE_EGONE;
    if (!rc) {
        rc = store_entry_load(&t, v.mv_data, v.mv_size, e ? e : &tmp);
        if (rc == STORE_ENOTFOUND || (!rc && (e ? e : &tmp)->version != version))
            rc = STORE_ECORRUPT;
    }
    if (!rc && keybuf) {
        memcpy(keybuf, pkey, keylen);
        keybuf[keylen] = '\0';
    }
    store_tx_abort(&t);
    return rc;
}

/* Gets each piece of a value from its chunk (never a copy), in order. */
typedef void (*piece_fn)(const unsigned char *p, size_t n, void *ctx);

/* Hands FN the bytes of VERSION from byte OFF, up to LEN of them, chunk by
 * chunk; every chunk's CRC-32C is checked before any of it is handed over.
 * *NREAD gets the count. */
static int chunks_walk(const tx *t, uint64_t version, uint64_t chunk, uint64_t off,
                       size_t len, piece_fn fn, void *ctx, size_t *nread)
{
    unsigned char k[12];
    MDB_cursor *c;
    MDB_val key = {12, k}, val;
    uint64_t idx = off / chunk, skip = off % chunk;
    size_t got = 0;
    int rc;
    *nread = 0;
    if (idx > UINT32_MAX)
        return 0;
    store_data_key(k, version, (uint32_t)idx);
    if ((rc = mdb_cursor_open(t->txn, store_db(t, DB_DATA), &c)))
        return store_map_err(rc);
    rc = mdb_cursor_get(c, &key, &val, MDB_SET_KEY);
    while (rc == 0 && got < len) {
        if (key.mv_size != 12 || store_rec_get_be64(key.mv_data) != version)
            break;
        const unsigned char *p = val.mv_data;
        size_t plen = val.mv_size - REC_CHUNK_HDR;
        if (store_rec_get_be32((unsigned char *)key.mv_data + 8) != idx
            || val.mv_size <= REC_CHUNK_HDR || plen > chunk
            || store_rec_crc32c(p + REC_CHUNK_HDR, plen) != store_rec_get_le32(p)) {
            rc = MDB_CORRUPTED;
            break;
        }
        if (plen <= skip) /* past the end, inside the last chunk */
            break;
        size_t n = plen - (size_t)skip;
        if (n > len - got)
            n = len - got;
        fn(p + REC_CHUNK_HDR + skip, n, ctx);
        got += n;
        skip = 0;
        idx++;
        rc = mdb_cursor_get(c, &key, &val, MDB_NEXT);
    }
    mdb_cursor_close(c);
    *nread = got;
    return rc && rc != MDB_NOTFOUND ? store_map_err(rc) : 0;
}

static void piece_copy(const unsigned char *p, size_t n, void *ctx)
{
    unsigned char **to = ctx;
    if (*to != p) /* a frame decoded in place */
        memcpy(*to, p, n);
    *to += n;
}

/* Copies from the chunks of VERSION starting at byte OFF. */
static int chunks_read(const tx *t, uint64_t version, uint64_t chunk,
                       uint64_t off, unsigned char *buf, size_t len, size_t *nread)
{
    return chunks_walk(t, version, chunk, off, len, piece_copy, &buf, nread);
}

/* ---- compressed values (frame.h) ------------------------------------- */

/* Sets *V to the bytes of table row J of VERSION, unchecked. A missing
 * row 0 is STORE_ENOTFOUND (the version is stored raw); any other missing
 * row is STORE_ECORRUPT. */
static int row_get(const tx *t, uint64_t version, uint32_t j, MDB_val *v)
{
    unsigned char k[12];
    int rc;
    store_data_key(k, version, FRAME_ROW_BASE + j);
    if ((rc = store_db_get(t, DB_DATA, k, sizeof k, v)))
        return rc == STORE_ENOTFOUND && j ? STORE_ECORRUPT : rc;
    return 0;
}

/* Loads and checks table row J of VERSION into *R. A missing row 0 is
 * STORE_ENOTFOUND: the version is stored raw. */
static int row_load(const tx *t, uint64_t version, uint32_t j, frame_row *r)
{
    MDB_val v;
    int rc = row_get(t, version, j, &v);
    return rc ? rc : store_frame_row_decode(v.mv_data, v.mv_size, j, r);
}

/* row_load() through Z, which keeps the row it checked last: a row of the
 * same bytes (one memcmp of at most 4 KiB) is not checked again. Checking
 * a row of 1,000 frames (its CRC-32C and every entry) is about 18,000
 * instructions, which every read of a compressed value paid once or more:
 * 4% of a whole value read in 64 KiB requests (callgrind). Row J's
 * bytes decide what store_frame_row_decode() makes of them, whatever version
 * they belong to, so the copy needs no other key. */
static int row_load_z(const tx *t, struct zscratch *z, uint64_t version, uint32_t j,
                      frame_row *r)
{
    MDB_val v;
    int rc;
    if ((rc = row_get(t, version, j, &v)))
        return rc;
    if (z->row_len && v.mv_size == z->row_len && z->row_j == j
        && !memcmp(v.mv_data, z->row_bytes, v.mv_size)) {
        *r = z->row;
        r->entries = (const unsigned char *)v.mv_data + 4 + FRAME_ROW_HDR;
        return 0;
    }
    if ((rc = store_frame_row_decode(v.mv_data, v.mv_size, j, r)))
        return rc;
    z->row_len = 0;
    if (v.mv_size <= sizeof z->row_bytes) {
        memcpy(z->row_bytes, v.mv_data, v.mv_size);
        z->row_len = v.mv_size;
        z->row_j = j;
        z->row = *r;
    }
    return 0;
}

/* The state of one read of a compressed value. */
struct zread {
    const tx *t;
    uint64_t version, chunk;
    frame_row row;   /* the table row loaded last: row ROWJ */
    uint32_t rowj;
    struct zscratch *zs; /* decoder and buffers (zpool.c) */
    uint64_t next, next_off; /* the frame after the last one located, where it starts */
};

/* Hands FN the N bytes at A of frame I (stream bytes at SOFF, SLEN of
 * them, OLEN once decoded), decoding into DST when compressed. */
static int frame_walk(struct zread *z, uint64_t soff, uint32_t slen, int raw,
                      uint32_t olen, uint32_t a, size_t n, unsigned char *dst,
                      piece_fn fn, void *ctx)
{
    unsigned char *zp;
    size_t got;
    uint32_t fsize = z->row.frame_size;
    int rc;
    if (raw) {
        rc = chunks_walk(z->t, z->version, z->chunk, soff + a, n, fn, ctx, &got);
        return rc ? rc : got == n ? 0 : STORE_ECORRUPT;
    }
    unsigned char *buf;
    if ((rc = store_zscratch_frame(z->zs, 2 * (size_t)fsize)))
        return rc;
    zp = buf = z->zs->frame;
    if ((rc = chunks_walk(z->t, z->version, z->chunk, soff, slen, piece_copy, &zp, &got)))
        return rc;
    if (got != slen)
        return STORE_ECORRUPT;
    if (a == 0 && n == olen) { /* the whole frame: decode in place */
        rc = store_frame_decode(z->zs->dctx, buf, slen, dst, olen);
    } else if (!(rc = store_frame_decode(z->zs->dctx, buf, slen, buf + fsize, olen))) {
        memcpy(dst, buf + fsize + a, n);
    }
    if (!rc)
        fn(dst, n, ctx);
    return rc;
}

/* chunks_walk() for a compressed value whose row 0 is R0: hands FN the
 * bytes from OFF, up to LEN of them, decoding each frame they touch once
 * into DST (LEN bytes: byte OFF + x lands at DST + x) with the decoder and
 * buffer of ZS; raw frames come straight from their chunks. *NREAD gets
 * the count. */
static int frames_walk(const tx *t, uint64_t version, uint64_t chunk, const frame_row *r0,
                       struct zscratch *zs, uint64_t off, size_t len, unsigned char *dst,
                       piece_fn fn, void *ctx, size_t *nread)
{
    struct zread z = {t, version, chunk, *r0, 0, zs, 0, 0};
    uint64_t fsize = r0->frame_size;
    size_t pos = 0;
    int rc = 0;
    *nread = 0;
    if (off >= r0->original_size)
        len = 0;
    else if (len > r0->original_size - off)
        len = (size_t)(r0->original_size - off);
    while (pos < len && !rc) {
        uint64_t o = off + pos, i = o / fsize, soff;
        uint32_t j = (uint32_t)(i / FRAME_PER_ROW), slen, olen, a = (uint32_t)(o % fsize);
        int raw;
        if (j != z.rowj) {
            if ((rc = row_load_z(t, zs, version, j, &z.row)))
                break;
            if (z.row.frame_size != r0->frame_size || z.row.original_size != r0->original_size
                || z.row.stream_len != r0->stream_len) {
                rc = STORE_ECORRUPT;
                break;
            }
            z.rowj = j;
        }
        if (i == z.next && i > z.row.first) /* the row's sum is done up to here */
            store_frame_next(&z.row, (uint32_t)i, z.next_off, &soff, &slen, &raw, &olen);
        else
            store_frame_locate(&z.row, (uint32_t)i, &soff, &slen, &raw, &olen);
        z.next = i + 1;
        z.next_off = soff + slen;
        size_t n = olen - a < len - pos ? olen - a : len - pos;
        if (!(rc = frame_walk(&z, soff, slen, raw, olen, a, n, dst + pos, fn, ctx)))
            pos += n;
    }
    *nread = pos;
    return rc;
}

/* ---- the calls ---------------------------------------------------------- */

/* Begins the read transaction of store_read*(): STORE_EGONE unless
 * VERSION is live. */
static int read_begin(store *st, uint64_t version, tx *t)
{
    unsigned char k[8];
    MDB_val v;
    int rc;
    if ((rc = store_tx_begin(st, 0, t)))
        return rc;
    store_rec_be64(k, version);
    rc = store_db_get(t, DB_VER, k, 8, &v);
    if (rc) {
        store_tx_abort(t);
        return rc == STORE_ENOTFOUND ? STORE_EGONE : rc;
    }
    return 0;
}

int store_read(store *st, uint64_t version, uint64_t off, void *buf, size_t len,
               size_t *nread)
{
    tx t;
    int rc;
    *nread = 0;
    frame_row r0;
    unsigned char *to = buf;
    struct zscratch *zs;
    if ((rc = read_begin(st, version, &t)))
        return rc;
    if (!(zs = store_zpool_get(st->se))) {
        store_tx_abort(&t);
        return ENOMEM;
    }
    rc = row_load_z(&t, zs, version, 0, &r0);
    if (rc == STORE_ENOTFOUND)
        rc = chunks_read(&t, version, st->se->chunk, off, buf, len, nread);
    else if (!rc)
        rc = frames_walk(&t, version, st->se->chunk, &r0, zs, off, len, buf, piece_copy, &to,
                         nread);
    store_zpool_put(st->se, zs);
    store_tx_abort(&t);
    return rc;
}

int store_version_frames(store *st, uint64_t version, uint64_t *size,
                         uint32_t *frame_size)
{
    frame_row r0;
    tx t;
    int rc;
    if ((rc = read_begin(st, version, &t)))
        return rc;
    rc = row_load(&t, version, 0, &r0);
    if (rc == STORE_ENOTFOUND) {
        *frame_size = 0;
        rc = 0;
    } else if (!rc) {
        *frame_size = r0.frame_size;
        *size = r0.original_size;
    }
    store_tx_abort(&t);
    return rc;
}

struct iov_list {
    struct iovec *iov;
    size_t n, cap;
    int overflow; /* a piece found no room: never, when cap is right */
};

static void piece_add(const unsigned char *p, size_t n, void *ctx)
{
    struct iov_list *l = ctx;
    if (l->n < l->cap)
        l->iov[l->n++] = (struct iovec){(void *)p, n};
    else
        l->overflow = 1;
}

/* store_read_iov() inside its transaction: hands FN the pieces. */
static int read_iov_in(const tx *t, uint64_t version, uint64_t chunk, uint64_t off,
                       size_t len, store_iov_fn fn, void *ctx)
{
    struct iovec local[64]; /* a 128 KiB FUSE read needs 34 raw, 42 compressed */
    struct iov_list l = {local, 0, len / chunk + 2, 0}; /* may start mid-chunk */
    struct zscratch *zs = store_zpool_get(t->se);
    frame_row r0;
    size_t got;
    int rc, raw;
    if (!zs)
        return ENOMEM;
    rc = row_load_z(t, zs, version, 0, &r0);
    if ((raw = rc == STORE_ENOTFOUND)) {
        store_zpool_put(t->se, zs); /* the raw path needs none */
        zs = NULL;
    } else if (rc) {
        goto out;
    } else {
        /* Decoded bytes need a home until FN has sent them (the set's
         * buffer); a raw frame of a compressed value may add a piece per
         * chunk and two more. */
        len = off >= r0.original_size ? 0
              : (size_t)(len < r0.original_size - off ? len : r0.original_size - off);
        l.cap += 2 * (len / r0.frame_size + 2);
        if ((rc = store_zscratch_out(zs, len ? len : 1)))
            goto out;
    }
    if (l.cap > sizeof local / sizeof *local && !(l.iov = malloc(l.cap * sizeof *l.iov))) {
        rc = ENOMEM;
        goto out;
    }
    rc = raw ? chunks_walk(t, version, chunk, off, len, piece_add, &l, &got)
             : frames_walk(t, version, chunk, &r0, zs, off, len, zs->out, piece_add, &l, &got);
    if (!rc)
        rc = l.overflow ? EFAULT : fn(l.iov, l.n, got, ctx);
out:
    if (l.iov != local)
        free(l.iov);
    store_zpool_put(t->se, zs);
    return rc;
}

int store_read_iov(store *st, uint64_t version, uint64_t off, size_t len,
                   store_iov_fn fn, void *ctx)
{
    tx t;
    int rc;
    if (!(rc = read_begin(st, version, &t))) {
        rc = read_iov_in(&t, version, st->se->chunk, off, len, fn, ctx);
        store_tx_abort(&t);
    }
    return rc;
}

/* Checks that the last chunk E's size implies exists, before a buffer of
 * that size is allocated: a damaged size is STORE_ECORRUPT, not a huge
 * allocation. A compressed value (row 0 in *R0, *COMPRESSED set) must say
 * the same size, and the last chunk of its stream must exist. */
static int size_check(const tx *t, const store_entry *e, uint64_t chunk, frame_row *r0,
                      int *compressed)
{
    unsigned char k[12];
    MDB_val v;
    uint64_t stored = e->size;
    int rc = row_load(t, e->version, 0, r0);
    *compressed = rc == 0;
    if (rc && rc != STORE_ENOTFOUND)
        return rc;
    if (*compressed) {
        if (r0->original_size != e->size)
            return STORE_ECORRUPT;
        stored = r0->stream_len;
    }
    if (!stored)
        return 0;
    if ((stored - 1) / chunk >= FRAME_ROW_BASE || e->size > SIZE_MAX - 1)
        return STORE_ECORRUPT;
    store_data_key(k, e->version, (uint32_t)((stored - 1) / chunk));
    rc = store_db_get(t, DB_DATA, k, sizeof k, &v);
    return rc == STORE_ENOTFOUND ? STORE_ECORRUPT : rc;
}

int store_get(store *st, const char *ns, const char *key, void **buf,
              size_t *len, store_entry *e, store_tomb *tb)
{
    char name[NAME_BUF];
    size_t nlen, got;
    store_entry tmp;
    unsigned char *p = NULL, *to;
    frame_row r0;
    tx t;
    int rc, compressed;
    *buf = NULL;
    *len = 0;
    if (!e)
        e = &tmp;
    if ((rc = store_name_make(ns, key, name, &nlen)) || (rc = store_tx_begin(st, 0, &t)))
        return rc;
    if ((rc = lookup_in(&t, name, nlen, e, tb))
        || (rc = size_check(&t, e, st->se->chunk, &r0, &compressed)))
        goto out;
    if (!(p = malloc((size_t)e->size + 1))) {
        rc = ENOMEM;
        goto out;
    }
    to = p;
    if (compressed) {
        struct zscratch *zs = store_zpool_get(st->se);
        rc = zs ? frames_walk(&t, e->version, st->se->chunk, &r0, zs, 0, (size_t)e->size, p,
                              piece_copy, &to, &got)
                : ENOMEM;
        store_zpool_put(st->se, zs);
    } else {
        rc = chunks_read(&t, e->version, st->se->chunk, 0, p, (size_t)e->size, &got);
    }
    if (!rc && got != e->size)
        rc = STORE_ECORRUPT;
out:
    store_tx_abort(&t);
    if (rc) {
        free(p);
        return rc;
    }
    p[got] = '\0'; /* not counted: for readers that want a C string */
    *buf = p;
    *len = got;
    return 0;
}
