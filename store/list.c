/* list.c -- store_list(): live keys of a namespace, in batches;
 * store_list_tombs(): the names of its tombstones, the same way. */
#include "store/store_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct list_item {
    char key[STORE_NAME_MAX + 1];
    size_t keylen;
    store_entry e;
};

/* Reads up to LIST_BATCH keys of NS after PREFIX+AFTER into ITEMS, from the
 * table WHICH: DB_LIVE (with their entries) or DB_TOMB (names only). */
static int list_batch(store *st, int which, const char *prefix, size_t plen,
                      const char *after, size_t alen, int skip_equal,
                      struct list_item *items, size_t *n)
{
    char kbuf[NAME_BUF];
    MDB_val key = {plen + alen, kbuf}, val;
    MDB_cursor *c;
    tx t;
    int rc;
    *n = 0;
    memcpy(kbuf, prefix, plen);
    memcpy(kbuf + plen, after, alen);
    if ((rc = store_tx_begin(st, 0, &t)))
        return rc;
    if ((rc = mdb_cursor_open(t.txn, store_db(&t, which), &c))) {
        store_tx_abort(&t);
        return store_map_err(rc);
    }
    rc = mdb_cursor_get(c, &key, &val, MDB_SET_RANGE);
    while (rc == 0 && *n < LIST_BATCH) {
        if (key.mv_size <= plen || memcmp(key.mv_data, prefix, plen))
            break;
        struct list_item *it = &items[*n];
        it->keylen = key.mv_size - plen;
        if (!(skip_equal && it->keylen == alen
              && !memcmp((char *)key.mv_data + plen, after, alen))) {
            if (it->keylen > STORE_NAME_MAX
                || (which == DB_LIVE
                    && (rc = store_rec_entry_decode(val.mv_data, val.mv_size, &it->e))))
                break;
            memcpy(it->key, (char *)key.mv_data + plen, it->keylen);
            it->key[it->keylen] = '\0';
            (*n)++;
        }
        rc = mdb_cursor_get(c, &key, &val, MDB_NEXT);
    }
    mdb_cursor_close(c);
    store_tx_abort(&t);
    if (rc == MDB_NOTFOUND)
        rc = 0;
    return store_map_err(rc);
}

static int list_in(store *st, int which, const char *ns, const char *after,
                   store_list_fn fn, void *ctx)
{
    char prefix[STORE_NAME_MAX + 2], last[STORE_NAME_MAX + 1];
    size_t plen, alen, n;
    struct list_item *items;
    int rc, skip;
    if (!ns)
        ns = STORE_DEFAULT_NAMESPACE;
    plen = strnlen(ns, STORE_NAME_MAX + 1);
    if ((rc = store_name_check(ns, plen)))
        return rc;
    memcpy(prefix, ns, plen);
    prefix[plen++] = '\0';
    alen = after ? strnlen(after, STORE_NAME_MAX) : 0;
    memcpy(last, after ? after : "", alen);
    skip = alen > 0;
    if (!(items = malloc(LIST_BATCH * sizeof *items)))
        return ENOMEM;
    do {
        if ((rc = list_batch(st, which, prefix, plen, last, alen, skip, items, &n)))
            break;
        for (size_t i = 0; i < n && !rc; i++)
            rc = fn(items[i].key, items[i].keylen, which == DB_LIVE ? &items[i].e : NULL, ctx);
        if (n) {
            alen = items[n - 1].keylen;
            memcpy(last, items[n - 1].key, alen);
            skip = 1;
        }
    } while (!rc && n == LIST_BATCH);
    free(items);
    return rc;
}

int store_list(store *st, const char *ns, const char *after, store_list_fn fn,
               void *ctx)
{
    return list_in(st, DB_LIVE, ns, after, fn, ctx);
}

int store_list_tombs(store *st, const char *ns, store_list_fn fn, void *ctx)
{
    return list_in(st, DB_TOMB, ns, NULL, fn, ctx);
}
