/* changes.c -- the change log: one row per change, trimmed to the newest
 * LOG_KEEP, so the daemon can invalidate exactly what changed.
 */
#include "store/store_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int store_log_change(const tx *t, rec_state *s, const char *name, size_t len,
                      uint64_t old_version, uint64_t new_version)
{
    unsigned char k[8], v[REC_CHANGE_FIXED + NAME_BUF];
    MDB_cursor *c;
    MDB_val key, val;
    int rc;
    store_rec_be64(k, ++s->gen);
    store_rec_le64(v, old_version);
    store_rec_le64(v + 8, new_version);
    memcpy(v + REC_CHANGE_FIXED, name, len);
    if ((rc = store_db_put(t, DB_LOG, k, 8, v, REC_CHANGE_FIXED + len, MDB_APPEND)))
        return rc;
    if (s->gen <= LOG_KEEP)
        return 0;
    /* Trim the oldest rows; usually exactly one. */
    if ((rc = mdb_cursor_open(t->txn, store_db(t, DB_LOG), &c)))
        return store_map_err(rc);
    while ((rc = mdb_cursor_get(c, &key, &val, MDB_FIRST)) == 0
           && key.mv_size == 8 && store_rec_get_be64(key.mv_data) <= s->gen - LOG_KEEP)
        if ((rc = mdb_cursor_del(c, 0)))
            break;
    mdb_cursor_close(c);
    return rc == MDB_NOTFOUND || rc == 0 ? 0 : store_map_err(rc);
}

uint64_t store_commit_token(store *st)
{
    /* The id of a fresh read snapshot, not mdb_env_info()'s last txnid: the
     * meta page is written before a commit is visible to new readers, so
     * the latter can run ahead of what store_changes() would then see. */
    uint64_t id;
    tx t;
    if (store_tx_begin(st, 0, &t))
        return 0;
    id = (uint64_t)mdb_txn_id(t.txn);
    store_tx_abort(&t);
    return id;
}

struct change_item {
    char name[NAME_BUF + 1];
    size_t len;
    uint64_t old_version, new_version;
};

/* Reads up to LIST_BATCH changes after SINCE into ITEMS; sets *GEN. */
static int changes_batch(store *st, uint64_t since, struct change_item *items,
                         size_t *n, uint64_t *gen)
{
    unsigned char k[8];
    MDB_val key = {8, k}, val;
    MDB_cursor *c;
    rec_state s;
    tx t;
    int rc;
    *n = 0;
    if ((rc = store_tx_begin(st, 0, &t)))
        return rc;
    if ((rc = store_state_load(&t, &s)))
        goto out;
    *gen = s.gen;
    if (since >= s.gen)
        goto out;
    store_rec_be64(k, since + 1);
    if ((rc = mdb_cursor_open(t.txn, store_db(&t, DB_LOG), &c))) {
        rc = store_map_err(rc);
        goto out;
    }
    rc = mdb_cursor_get(c, &key, &val, MDB_SET_RANGE);
    if (rc == 0 && store_rec_get_be64(key.mv_data) != since + 1)
        rc = STORE_ELOGGONE;
    while (rc == 0 && *n < LIST_BATCH) {
        struct change_item *it = &items[*n];
        const char *name;
        if ((rc = store_rec_change_decode(val.mv_data, val.mv_size, &it->old_version,
                                          &it->new_version, &name, &it->len)))
            break;
        if (it->len > NAME_BUF) {
            rc = STORE_ECORRUPT;
            break;
        }
        memcpy(it->name, name, it->len);
        (*n)++;
        rc = mdb_cursor_get(c, &key, &val, MDB_NEXT);
    }
    mdb_cursor_close(c);
    if (rc == MDB_NOTFOUND)
        rc = *n ? 0 : STORE_ELOGGONE;
    rc = store_map_err(rc);
out:
    store_tx_abort(&t);
    return rc;
}

int store_changes(store *st, uint64_t since, store_change_fn fn, void *ctx,
                  uint64_t *now)
{
    struct change_item *items = malloc(LIST_BATCH * sizeof *items);
    uint64_t gen = 0;
    size_t n = 0;
    int rc;
    if (!items)
        return ENOMEM;
    do {
        if ((rc = changes_batch(st, since, items, &n, &gen)))
            break;
        for (size_t i = 0; i < n && !rc; i++) {
            const char *ns, *key;
            size_t nslen, keylen;
            items[i].name[items[i].len] = '\0';
            rc = store_rec_name_split(items[i].name, items[i].len, &ns, &nslen, &key, &keylen);
            if (!rc)
                fn(ns, key, items[i].old_version, items[i].new_version, ctx);
        }
        since += n;
    } while (!rc && n == LIST_BATCH);
    free(items);
    /* The log is contiguous, so SINCE has advanced to the last change seen. */
    *now = rc == STORE_ELOGGONE ? gen : since;
    return rc;
}
