/* write.c -- store_put() and store_remove(): one write transaction each.
 * A value is compressed (frame.h) before the transaction begins, so
 * writers compress side by side and hold the writer lock only to copy. */
#include "store/store_int.h"
#include "store/frame.h"

#include <errno.h>
#include <string.h>

/* Writes LEN bytes of DATA as the chunks of VERSION, each behind its
 * CRC-32C, straight into the pages LMDB reserves for them. */
static int chunks_write(const tx *t, uint64_t version, uint64_t chunk,
                        const unsigned char *data, size_t len)
{
    unsigned char k[12];
    uint32_t idx = 0;
    for (size_t off = 0; off < len; off += chunk, idx++) {
        size_t n = len - off < chunk ? len - off : (size_t)chunk;
        MDB_val key = {12, k}, val = {n + REC_CHUNK_HDR, NULL};
        int rc;
        store_data_key(k, version, idx);
        rc = mdb_put(t->txn, store_db(t, DB_DATA), &key, &val, MDB_APPEND | MDB_RESERVE);
        if (rc)
            return store_map_err(rc);
        store_rec_le32(val.mv_data, store_rec_crc32c(data + off, n));
        memcpy((unsigned char *)val.mv_data + REC_CHUNK_HDR, data + off, n);
    }
    return 0;
}

/* Writes the frame table rows of the compressed value P of VERSION, after
 * its stream's chunks. */
static int rows_write(const tx *t, uint64_t version, const frame_packed *p)
{
    unsigned char k[12];
    for (size_t j = 0; j < p->nrows; j++) {
        const unsigned char *row = p->rows + j * FRAME_ROW_MAX;
        MDB_val key = {12, k}, val = {p->row_len[j] + REC_CHUNK_HDR, NULL};
        int rc;
        store_data_key(k, version, FRAME_ROW_BASE + (uint32_t)j);
        rc = mdb_put(t->txn, store_db(t, DB_DATA), &key, &val, MDB_APPEND | MDB_RESERVE);
        if (rc)
            return store_map_err(rc);
        store_rec_le32(val.mv_data, store_rec_crc32c(row, p->row_len[j]));
        memcpy((unsigned char *)val.mv_data + REC_CHUNK_HDR, row, p->row_len[j]);
    }
    return 0;
}

/* Writes the value of VERSION: PK's stream and tables when it was
 * compressed (PK->stream not NULL), else LEN raw bytes of DATA. */
static int value_write(const tx *t, rec_state *s, uint64_t version,
                       const frame_packed *pk, const void *data, size_t len)
{
    int rc;
    if (!pk->stream)
        return chunks_write(t, version, s->chunk, data, len);
    if (pk->stream_len / s->chunk >= FRAME_ROW_BASE)
        return STORE_ETOOBIG;
    if ((rc = chunks_write(t, version, s->chunk, pk->stream, pk->stream_len))
        || (rc = rows_write(t, version, pk)))
        return rc;
    s->format = REC_FORMAT_FRAMES; /* older code must now refuse the store */
    return 0;
}

/* Removes the previous version of NAME, if live, and its tombstone. Sets
 * *OLD to the version dropped (0: none). */
static int put_clear_old(const tx *t, rec_state *s, const char *name,
                         size_t len, uint64_t *old)
{
    store_entry e;
    int rc = store_entry_load(t, name, len, &e);
    *old = 0;
    if (rc == STORE_ENOTFOUND)
        return store_tomb_clear(t, s, name, len);
    if (rc || (rc = store_entry_drop(t, s, name, len, &e)))
        return rc;
    *old = e.version;
    return 0;
}

static int put_fill_entry(store_entry *e, const store_meta *meta, size_t len)
{
    memset(e, 0, sizeof *e);
    e->size = len;
    e->original_size = len;
    e->created_ns = store_now_ns();
    if (!meta)
        return 0;
    if (meta->tool) {
        size_t n = strlen(meta->tool);
        if (n > STORE_TOOL_MAX)
            return EINVAL;
        memcpy(e->tool, meta->tool, n + 1);
        e->has_tool = 1;
    }
    if (meta->created_ns)
        e->created_ns = meta->created_ns;
    if (meta->original_size)
        e->original_size = meta->original_size;
    e->truncated = meta->truncated ? 1 : 0;
    return 0;
}

/* Whether a cached copy of STORED bytes may take NAME: STORE_ETOOBIG when
 * it would take over half the bound (a copy never empties the store for
 * itself), STORE_EGONE when NAME holds a result written here (written
 * since the remote was asked: never replaced by an older copy), else 0. */
static int cache_room(const tx *t, const rec_state *s, const char *name, size_t nlen,
                      uint64_t stored)
{
    store_entry e;
    if (stored > s->max_total / 2)
        return STORE_ETOOBIG;
    int rc = store_entry_load(t, name, nlen, &e);
    if (rc == STORE_ENOTFOUND)
        return 0;
    if (rc)
        return rc;
    rc = store_cache_mark_is(t, e.version);
    return rc == 0 ? STORE_EGONE : rc < 0 ? rc : 0;
}

/* One attempt at store_put(): NAME is checked, E filled but for its version. */
static int put_once(store *st, const char *name, size_t nlen, const void *data,
                    size_t len, const frame_packed *pk, store_entry *e_in,
                    const char *etag, store_entry *out)
{
    unsigned char rec[REC_ENTRY_FIXED + STORE_TOOL_MAX], vk[8];
    store_entry e = *e_in;
    size_t rlen;
    uint64_t old, stored = pk->stream ? pk->stored : len;
    rec_state s;
    tx t;
    int rc, pending;
    if ((rc = store_tx_begin(st, 1, &t)))
        return rc;
    if ((rc = store_state_load(&t, &s)))
        goto out;
    if (len > s.max_result) {
        rc = STORE_ETOOBIG;
        goto out;
    }
    if ((pending = store_remote_is_set(&t)) < 0) {
        rc = pending;
        goto out;
    }
    if (etag && (rc = cache_room(&t, &s, name, nlen, stored)))
        goto out;
    if ((rc = put_clear_old(&t, &s, name, nlen, &old))
        || (rc = store_evict_until(&t, &s, stored, NULL)))
        goto out;
    e.version = s.next_version++;
    store_rec_be64(vk, e.version);
    rlen = store_rec_entry_encode(&e, rec);
    if ((rc = value_write(&t, &s, e.version, pk, data, len))
        || (rc = store_db_put(&t, DB_VER, vk, 8, name, nlen, MDB_APPEND))
        || (rc = store_db_put(&t, DB_LIVE, name, nlen, rec, rlen, 0))
        || (rc = store_log_change(&t, &s, name, nlen, old, e.version))
        || (etag && (rc = store_cache_mark_set(&t, e.version, len, etag)))
        || (etag && (rc = store_cache_fill_count(&t)))
        || (!etag && pending && (rc = store_pending_set(&t, e.version, name, nlen)))
        || (!etag && pending && (rc = store_tomb_pending_drop_name(&t, name, nlen))))
        goto out;
    s.live_bytes += len;
    s.stored += stored;
    s.live_entries++;
    rc = store_state_save(&t, &s);
out:
    rc = store_wake_after_commit(st, store_tx_end(&t, rc), s.gen);
    if (!rc && out)
        *out = e;
    return rc;
}

/* Compresses the value into *PK when the store compresses and the value
 * shrinks; leaves *PK empty otherwise. Errors: ENOMEM, LMDB failures. */
static int put_pack(store *st, const void *data, size_t len, frame_packed *pk)
{
    unsigned how;
    int rc;
    if (st->se->flags & STORE_RDONLY)
        return STORE_ERDONLY;
    if (len < FRAME_MIN_INPUT || st->se->chunk < FRAME_ROW_MAX)
        return 0;
    if ((rc = store_compression_get(st, &how)) || how != STORE_COMPRESS_ZSTD)
        return rc;
    rc = store_frame_pack(data, len, pk);
    return rc == 1 ? 0 : rc;
}

/* store_put() and store_put_cached(): ETAG NULL for a result written here. */
static int put_any(store *st, const char *ns, const char *key, const void *data,
                   size_t len, const store_meta *meta, const char *etag, store_entry *out)
{
    char name[NAME_BUF];
    size_t nlen;
    store_entry e;
    frame_packed pk = {0};
    int rc, dead = 0;
    if ((rc = store_name_make(ns, key, name, &nlen)) || (rc = put_fill_entry(&e, meta, len))
        || (rc = put_pack(st, data, len, &pk)))
        return rc;
    rc = put_once(st, name, nlen, data, len, &pk, &e, etag, out);
    /* A reader that died holding a snapshot pins pages until its slot is
     * cleared; clear dead slots and try once more before saying "full". */
    if ((rc == STORE_EFULL || rc == ENOSPC) && !mdb_reader_check(st->se->env, &dead) && dead)
        rc = put_once(st, name, nlen, data, len, &pk, &e, etag, out);
    store_frame_packed_free(&pk);
    return rc;
}

int store_put(store *st, const char *ns, const char *key, const void *data,
              size_t len, const store_meta *meta, store_entry *out)
{
    return put_any(st, ns, key, data, len, meta, NULL, out);
}

int store_put_cached(store *st, const char *ns, const char *key, const void *data,
                     size_t len, const store_meta *meta, const char *etag, store_entry *out)
{
    if (!etag || !etag[0] || strlen(etag) > STORE_ETAG_MAX)
        return EINVAL;
    return put_any(st, ns, key, data, len, meta, etag, out);
}

int store_remove(store *st, const char *ns, const char *key)
{
    char name[NAME_BUF];
    size_t nlen;
    store_entry e;
    rec_state s;
    tx t;
    int rc;
    if ((rc = store_name_make(ns, key, name, &nlen)))
        return rc;
    if ((rc = store_tx_begin(st, 1, &t)))
        return rc;
    if ((rc = store_state_load(&t, &s)))
        return store_tx_end(&t, rc);
    rc = store_entry_load(&t, name, nlen, &e);
    if (rc == STORE_ENOTFOUND) {
        MDB_val v;
        rc = store_db_get(&t, DB_TOMB, name, nlen, &v) == 0 ? STORE_EEVICTED : STORE_ENOTFOUND;
        return store_tx_end(&t, rc);
    }
    if (rc || (rc = store_entry_drop(&t, &s, name, nlen, &e))
        || (rc = store_tomb_add(&t, &s, name, nlen, e.version, STORE_REASON_REMOVED))
        || (rc = store_log_change(&t, &s, name, nlen, e.version, 0)))
        return store_tx_end(&t, rc);
    /* On a store with a remote the tombstone is pending until written */
    if ((rc = store_remote_is_set(&t)) < 0 ||
        (rc && (rc = store_tomb_pending_set(&t, e.version, name, nlen))))
        return store_tx_end(&t, rc);
    s.removals++;
    return store_wake_after_commit(st, store_tx_end(&t, store_state_save(&t, &s)), s.gen);
}

/* In this file, not cache.c: a drop is a removal (evict.c's, which calls
 * cache.c for the marks), so cache.c calls no file that calls it. */
int store_cache_drop(store *st, const char *ns, const char *key, uint64_t version)
{
    char name[NAME_BUF];
    size_t nlen;
    store_entry e;
    rec_state s;
    tx t;
    int rc;
    if ((rc = store_name_make(ns, key, name, &nlen)))
        return rc;
    if ((rc = store_tx_begin(st, 1, &t)))
        return rc;
    if ((rc = store_state_load(&t, &s)))
        return store_tx_end(&t, rc);
    rc = store_entry_load(&t, name, nlen, &e);
    if (rc == STORE_ENOTFOUND || (rc == 0 && e.version != version)) {
        store_tx_abort(&t);
        return 0; /* replaced or gone meanwhile: nothing of that copy left */
    }
    if (rc)
        return store_tx_end(&t, rc);
    if ((rc = store_cache_mark_is(&t, version)) <= 0) {
        store_tx_abort(&t);
        return rc; /* 0: a result written here, not the cache's to drop */
    }
    if ((rc = store_entry_drop(&t, &s, name, nlen, &e))
        || (rc = store_log_change(&t, &s, name, nlen, e.version, 0)))
        return store_tx_end(&t, rc);
    return store_wake_after_commit(st, store_tx_end(&t, store_state_save(&t, &s)), s.gen);
}
