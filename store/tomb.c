/* tomb.c -- tombstones: the names evicted or removed, kept so readers can
 * tell "evicted" from "never existed", the newest max_tombs of them.
 */
#include "store/store_int.h"

/* Drops the tombstone of NAME, if any. */
int store_tomb_clear(const tx *t, rec_state *s, const char *name, size_t len)
{
    MDB_val v;
    rec_tomb tb;
    unsigned char k[8];
    int rc = store_db_get(t, DB_TOMB, name, len, &v);
    if (rc == STORE_ENOTFOUND)
        return 0;
    if (rc || (rc = store_rec_tomb_decode(v.mv_data, v.mv_size, &tb)))
        return rc;
    store_rec_be64(k, tb.seq);
    if ((rc = store_db_del(t, DB_TOMB, name, len)))
        return rc;
    rc = store_db_del(t, DB_TOMBQ, k, 8);
    if (rc && rc != STORE_ENOTFOUND)
        return rc;
    s->tombs--;
    return 0;
}

/* Expires the oldest tombstones until at most max_tombs remain. */
int store_tomb_trim(const tx *t, rec_state *s)
{
    MDB_cursor *c;
    MDB_val key, val;
    int rc;
    if (s->tombs <= s->max_tombs)
        return 0;
    if ((rc = mdb_cursor_open(t->txn, store_db(t, DB_TOMBQ), &c)))
        return store_map_err(rc);
    while (s->tombs > s->max_tombs) {
        if ((rc = mdb_cursor_get(c, &key, &val, MDB_FIRST)))
            break;
        rc = store_db_del(t, DB_TOMB, val.mv_data, val.mv_size);
        if (rc && rc != STORE_ENOTFOUND)
            break;
        if ((rc = mdb_cursor_del(c, 0)))
            break;
        s->tombs--;
    }
    mdb_cursor_close(c);
    return rc == MDB_NOTFOUND ? STORE_ECORRUPT : store_map_err(rc);
}

int store_tomb_add(const tx *t, rec_state *s, const char *name, size_t len,
                    uint64_t version, int reason)
{
    rec_tomb tb = {version, store_now_ns(), ++s->tomb_seq, reason};
    unsigned char v[REC_TOMB_LEN], k[8];
    int rc;
    if ((rc = store_tomb_clear(t, s, name, len)))
        return rc;
    store_rec_tomb_encode(&tb, v);
    store_rec_be64(k, tb.seq);
    if ((rc = store_db_put(t, DB_TOMB, name, len, v, sizeof v, 0))
        || (rc = store_db_put(t, DB_TOMBQ, k, 8, name, len, MDB_APPEND)))
        return rc;
    s->tombs++;
    return store_tomb_trim(t, s);
}
