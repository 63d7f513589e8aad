/* evict.c -- dropping versions and evicting the oldest entries to keep
 * the bytes the live values occupy (compressed) within max_total_bytes.
 */
#include "store/store_int.h"

#include <string.h>

/* Deletes the chunks (and frame table rows) and the ver row of VERSION;
 * *FREED gets the bytes they held (after their CRCs): what the value
 * occupied. */
static int version_drop(const tx *t, uint64_t version, uint64_t *freed)
{
    unsigned char k[12];
    MDB_cursor *c;
    MDB_val key = {12, k}, val;
    int rc;
    *freed = 0;
    store_data_key(k, version, 0);
    if ((rc = mdb_cursor_open(t->txn, store_db(t, DB_DATA), &c)))
        return store_map_err(rc);
    rc = mdb_cursor_get(c, &key, &val, MDB_SET_RANGE);
    while (rc == 0 && key.mv_size == 12 && store_rec_get_be64(key.mv_data) == version) {
        /* LMDB frees the pages a value's page header names: check it. */
        if ((rc = store_verify_value_page(val.mv_data, val.mv_size, t->se->base,
                                          t->se->mapsize, t->se->psize)))
            break;
        *freed += val.mv_size > REC_CHUNK_HDR ? val.mv_size - REC_CHUNK_HDR : 0;
        if ((rc = mdb_cursor_del(c, 0)))
            break;
        rc = mdb_cursor_get(c, &key, &val, MDB_NEXT); /* the row after the deleted one */
    }
    mdb_cursor_close(c);
    if (rc && rc != MDB_NOTFOUND)
        return store_map_err(rc);
    store_rec_be64(k, version);
    rc = store_db_del(t, DB_VER, k, 8);
    return rc == STORE_ENOTFOUND ? STORE_ECORRUPT : rc;
}

/* Drops the live entry NAME (whose record is E) and accounts for it. */
int store_entry_drop(const tx *t, rec_state *s, const char *name, size_t len,
                      const store_entry *e)
{
    uint64_t freed;
    int rc;
    if ((rc = version_drop(t, e->version, &freed)) || (rc = store_db_del(t, DB_LIVE, name, len)))
        return rc == STORE_ENOTFOUND ? STORE_ECORRUPT : rc;
    if ((rc = store_pending_del(t, e->version)) || (rc = store_cache_mark_del(t, e->version)))
        return rc;
    if (s->live_bytes < e->size || s->live_entries == 0 || s->stored < freed)
        return STORE_ECORRUPT;
    s->live_bytes -= e->size;
    s->stored -= freed;
    s->live_entries--;
    return 0;
}

/* The entry to evict next: the oldest cached copy (store/cache.c), else
 * the oldest version not pending upload: its name into NAME (NAME_BUF
 * bytes), *LEN. STORE_EPENDING when every live version is pending. */
static int oldest_evictable(const tx *t, char *name, size_t *len)
{
    MDB_cursor *c;
    MDB_val key, val;
    int rc, pending = 1;
    if ((rc = store_cache_oldest(t, name, len)) || *len)
        return rc;
    if ((rc = mdb_cursor_open(t->txn, store_db(t, DB_VER), &c)))
        return store_map_err(rc);
    rc = mdb_cursor_get(c, &key, &val, MDB_FIRST);
    while (rc == 0) {
        if (val.mv_size > NAME_BUF || key.mv_size != 8) {
            rc = MDB_CORRUPTED;
            break;
        }
        pending = store_pending_is(t, store_rec_get_be64(key.mv_data));
        if (pending < 0) {
            mdb_cursor_close(c);
            return pending;
        }
        if (!pending) {
            *len = val.mv_size;
            memcpy(name, val.mv_data, val.mv_size);
            break;
        }
        rc = mdb_cursor_get(c, &key, &val, MDB_NEXT);
    }
    mdb_cursor_close(c);
    if (rc == MDB_NOTFOUND)
        return STORE_EPENDING;
    return rc ? store_map_err(rc) : 0;
}

/* Evicts the oldest entries until NEED more bytes fit the bound, passing
 * over versions pending upload. */
int store_evict_until(const tx *t, rec_state *s, uint64_t need, uint64_t *count)
{
    while (s->stored + need > s->max_total && s->live_entries > 0) {
        char name[NAME_BUF];
        size_t len = 0;
        store_entry e;
        int rc;
        if ((rc = oldest_evictable(t, name, &len)))
            return rc;
        if ((rc = store_entry_load(t, name, len, &e)))
            return rc == STORE_ENOTFOUND ? STORE_ECORRUPT : rc;
        if ((rc = store_entry_drop(t, s, name, len, &e))
            || (rc = store_tomb_add(t, s, name, len, e.version, STORE_REASON_EVICTED))
            || (rc = store_log_change(t, s, name, len, e.version, 0)))
            return rc;
        s->evictions++;
        if (count)
            (*count)++;
    }
    return 0;
}
