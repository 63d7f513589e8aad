/* read.c -- lookups and reads: every byte handed out comes from chunks
 * whose CRC-32C was checked, inside one read transaction.
 */
#include "store/store_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int lookup_in(const tx *t, const char *name, size_t nlen, store_entry *e,
                     store_tomb *tb)
{
    store_entry tmp;
    MDB_val v;
    rec_tomb rt;
    int rc = entry_load(t, name, nlen, e ? e : &tmp);
    if (rc != STORE_ENOTFOUND)
        return rc;
    if ((rc = db_get(t, DB_TOMB, name, nlen, &v)))
        return rc;
    if ((rc = rec_tomb_decode(v.mv_data, v.mv_size, &rt)))
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
    if ((rc = name_make(ns, key, name, &nlen)) || (rc = tx_begin(st, 0, &t)))
        return rc;
    rc = lookup_in(&t, name, nlen, e, tb);
    tx_abort(&t);
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
    if ((rc = tx_begin(st, 0, &t)))
        return rc;
    rec_be64(k, version);
    rc = db_get(&t, DB_VER, k, 8, &v);
    if (rc == STORE_ENOTFOUND)
        rc = STORE_EGONE;
    if (!rc)
        rc = rec_name_split(v.mv_data, v.mv_size, &pns, &nslen, &pkey, &keylen);
    if (!rc && (nslen != strlen(ns) || memcmp(pns, ns, nslen)))
        rc = STORE_EGONE;
    if (!rc) {
        rc = entry_load(&t, v.mv_data, v.mv_size, e ? e : &tmp);
        if (rc == STORE_ENOTFOUND || (!rc && (e ? e : &tmp)->version != version))
            rc = STORE_ECORRUPT;
    }
    if (!rc && keybuf) {
        memcpy(keybuf, pkey, keylen);
        keybuf[keylen] = '\0';
    }
    tx_abort(&t);
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
    data_key(k, version, (uint32_t)idx);
    if ((rc = mdb_cursor_open(t->txn, db(t, DB_DATA), &c)))
        return map_err(rc);
    rc = mdb_cursor_get(c, &key, &val, MDB_SET_KEY);
    while (rc == 0 && got < len) {
        if (key.mv_size != 12 || rec_get_be64(key.mv_data) != version)
            break;
        const unsigned char *p = val.mv_data;
        size_t plen = val.mv_size - REC_CHUNK_HDR;
        if (rec_get_be32((unsigned char *)key.mv_data + 8) != idx
            || val.mv_size <= REC_CHUNK_HDR || plen > chunk
            || rec_crc32c(p + REC_CHUNK_HDR, plen) != rec_get_le32(p)) {
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
    return rc && rc != MDB_NOTFOUND ? map_err(rc) : 0;
}

static void piece_copy(const unsigned char *p, size_t n, void *ctx)
{
    unsigned char **to = ctx;
    memcpy(*to, p, n);
    *to += n;
}

/* Copies from the chunks of VERSION starting at byte OFF. */
static int chunks_read(const tx *t, uint64_t version, uint64_t chunk,
                       uint64_t off, unsigned char *buf, size_t len, size_t *nread)
{
    return chunks_walk(t, version, chunk, off, len, piece_copy, &buf, nread);
}

/* Begins the read transaction of store_read*(): STORE_EGONE unless
 * VERSION is live. */
static int read_begin(store *st, uint64_t version, tx *t)
{
    unsigned char k[8];
    MDB_val v;
    int rc;
    if ((rc = tx_begin(st, 0, t)))
        return rc;
    rec_be64(k, version);
    rc = db_get(t, DB_VER, k, 8, &v);
    if (rc) {
        tx_abort(t);
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
    if ((rc = read_begin(st, version, &t)))
        return rc;
    rc = chunks_read(&t, version, st->se->chunk, off, buf, len, nread);
    tx_abort(&t);
    return rc;
}

struct iov_list {
    struct iovec *iov;
    size_t n, cap;
};

static void piece_add(const unsigned char *p, size_t n, void *ctx)
{
    struct iov_list *l = ctx;
    if (l->n < l->cap)
        l->iov[l->n++] = (struct iovec){(void *)p, n};
}

int store_read_iov(store *st, uint64_t version, uint64_t off, size_t len,
                   store_iov_fn fn, void *ctx)
{
    struct iovec local[64]; /* a 128 KiB FUSE read needs 34 */
    struct iov_list l = {local, 0, len / st->se->chunk + 2}; /* may start mid-chunk */
    size_t got;
    tx t;
    int rc;
    if (l.cap > sizeof local / sizeof *local && !(l.iov = malloc(l.cap * sizeof *l.iov)))
        return ENOMEM;
    if (!(rc = read_begin(st, version, &t))) {
        rc = chunks_walk(&t, version, st->se->chunk, off, len, piece_add, &l, &got);
        if (!rc)
            rc = fn(l.iov, l.n, got, ctx);
        tx_abort(&t);
    }
    if (l.iov != local)
        free(l.iov);
    return rc;
}

/* Checks that the last chunk E's size implies exists, before a buffer of
 * that size is allocated: a damaged size is STORE_ECORRUPT, not a huge
 * allocation. */
static int size_check(const tx *t, const store_entry *e, uint64_t chunk)
{
    unsigned char k[12];
    MDB_val v;
    uint64_t last = e->size ? (e->size - 1) / chunk : 0;
    if (!e->size)
        return 0;
    if (last > UINT32_MAX || e->size > SIZE_MAX - 1)
        return STORE_ECORRUPT;
    data_key(k, e->version, (uint32_t)last);
    int rc = db_get(t, DB_DATA, k, sizeof k, &v);
    return rc == STORE_ENOTFOUND ? STORE_ECORRUPT : rc;
}

int store_get(store *st, const char *ns, const char *key, void **buf,
              size_t *len, store_entry *e, store_tomb *tb)
{
    char name[NAME_BUF];
    size_t nlen, got;
    store_entry tmp;
    unsigned char *p = NULL;
    tx t;
    int rc;
    *buf = NULL;
    *len = 0;
    if (!e)
        e = &tmp;
    if ((rc = name_make(ns, key, name, &nlen)) || (rc = tx_begin(st, 0, &t)))
        return rc;
    if ((rc = lookup_in(&t, name, nlen, e, tb)) || (rc = size_check(&t, e, st->se->chunk)))
        goto out;
    if (!(p = malloc((size_t)e->size + 1))) {
        rc = ENOMEM;
        goto out;
    }
    rc = chunks_read(&t, e->version, st->se->chunk, 0, p, (size_t)e->size, &got);
    if (!rc && got != e->size)
        rc = STORE_ECORRUPT;
out:
    tx_abort(&t);
    if (rc) {
        free(p);
        return rc;
    }
    *buf = p;
    *len = got;
    return 0;
}
