/* pending.c -- what the store keeps for the remote tier: the remote's URL
 * (the "remote" meta record), the pending marks of versions waiting for
 * their upload (store_pending_*: "pend" + be64 version -> name) and the
 * tombstone-pending marks of removals whose remote tombstone waits
 * (store_tomb_pending_*: "ptmb" + be64 removed version -> name). Keyed by
 * version, so the marks list oldest first and a replaced version's mark
 * cannot stand for the new one (and a key fits LMDB's 511 bytes, which
 * a prefixed name would not). No network here (that is tier/): the store
 * only remembers. */
#include "store/store_int.h"
#include "common/array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define REMOTE_REC "remote"

/* The key of a mark: PREFIX (4 bytes) + be64 VERSION. */
static void mark_key(unsigned char *k, const char *prefix, uint64_t version)
{
    memcpy(k, prefix, 4);
    store_rec_be64(k + 4, version);
}

void store_pending_key(unsigned char *k, uint64_t version)
{
    mark_key(k, PENDING_PREFIX, version);
}

int store_pending_is(const tx *t, uint64_t version)
{
    unsigned char k[PENDING_KEY_LEN];
    MDB_val v;
    store_pending_key(k, version);
    int rc = store_db_get(t, DB_META, k, sizeof k, &v);
    if (rc == STORE_ENOTFOUND)
        return 0;
    return rc ? rc : 1;
}

int store_pending_set(const tx *t, uint64_t version, const char *name, size_t len)
{
    unsigned char k[PENDING_KEY_LEN];
    store_pending_key(k, version);
    return store_db_put(t, DB_META, k, sizeof k, name, len, 0);
}

int store_pending_del(const tx *t, uint64_t version)
{
    unsigned char k[PENDING_KEY_LEN];
    store_pending_key(k, version);
    int rc = store_db_del(t, DB_META, k, sizeof k);
    return rc == STORE_ENOTFOUND ? 0 : rc;
}

/* Walks the marks of PREFIX: FN(ARG, version, name, len) for each, in
 * order. A nonzero value of FN stops the walk and is returned (a positive
 * one as it is: store_map_err() keeps errno values). */
static int mark_walk(const tx *t, const char *prefix, int (*fn)(void *, uint64_t, const char *, size_t),
                     void *arg)
{
    MDB_cursor *c;
    unsigned char k0[PENDING_KEY_LEN];
    MDB_val key = {sizeof k0, k0}, val;
    int rc;
    mark_key(k0, prefix, 0);
    if ((rc = mdb_cursor_open(t->txn, store_db(t, DB_META), &c)))
        return store_map_err(rc);
    rc = mdb_cursor_get(c, &key, &val, MDB_SET_RANGE);
    while (rc == 0 && key.mv_size == PENDING_KEY_LEN && memcmp(key.mv_data, prefix, 4) == 0) {
        if (val.mv_size > NAME_BUF) {
            rc = MDB_CORRUPTED;
            break;
        }
        rc = fn(arg, store_rec_get_be64((const char *)key.mv_data + 4), val.mv_data, val.mv_size);
        if (rc)
            break;
        rc = mdb_cursor_get(c, &key, &val, MDB_NEXT);
    }
    mdb_cursor_close(c);
    if (rc == MDB_NOTFOUND)
        rc = 0;
    return rc > 0 && rc != ENOMEM ? store_map_err(rc) : rc;
}

static int count_one(void *arg, uint64_t version, const char *name, size_t len)
{
    (void)version;
    (void)name;
    (void)len;
    ++*(uint64_t *)arg;
    return 0;
}

int store_pending_count(const tx *t, uint64_t *n)
{
    int rc;
    *n = 0;
    if ((rc = mark_walk(t, PENDING_PREFIX, count_one, n)))
        return rc;
    return mark_walk(t, TOMB_PENDING_PREFIX, count_one, n);
}

int store_tomb_pending_set(const tx *t, uint64_t version, const char *name, size_t len)
{
    unsigned char k[PENDING_KEY_LEN];
    mark_key(k, TOMB_PENDING_PREFIX, version);
    return store_db_put(t, DB_META, k, sizeof k, name, len, 0);
}

typedef struct name_find {
    const char *name;
    size_t len;
    uint64_t version;
} name_find;

static int find_name(void *arg, uint64_t version, const char *name, size_t len)
{
    name_find *f = arg;
    if (len != f->len || memcmp(name, f->name, len) != 0)
        return 0;
    f->version = version;
    return 1;
}

int store_tomb_pending_drop_name(const tx *t, const char *name, size_t len)
{
    name_find f = {name, len, 0};
    unsigned char k[PENDING_KEY_LEN];
    int rc;
    /* one mark per removal: almost always none or one */
    while ((rc = mark_walk(t, TOMB_PENDING_PREFIX, find_name, &f)) == 1) {
        mark_key(k, TOMB_PENDING_PREFIX, f.version);
        if ((rc = store_db_del(t, DB_META, k, sizeof k)))
            return rc;
    }
    return rc;
}

int store_remote_is_set(const tx *t)
{
    MDB_val v;
    int rc = store_db_get(t, DB_META, REMOTE_REC, sizeof REMOTE_REC - 1, &v);
    if (rc == STORE_ENOTFOUND)
        return 0;
    return rc ? rc : 1;
}

int store_remote_get(store *st, char *buf, size_t cap)
{
    tx t;
    MDB_val v;
    int rc = store_tx_begin(st, 0, &t);
    if (rc)
        return rc;
    rc = store_db_get(&t, DB_META, REMOTE_REC, sizeof REMOTE_REC - 1, &v);
    if (rc == STORE_ENOTFOUND) {
        rc = 0;
        v.mv_size = 0;
    }
    if (!rc && v.mv_size + 1 > cap)
        rc = ERANGE;
    if (!rc) {
        if (v.mv_size)
            memcpy(buf, v.mv_data, v.mv_size);
        buf[v.mv_size] = '\0';
    }
    store_tx_abort(&t);
    return rc;
}

int store_remote_set(store *st, const char *url)
{
    size_t n = url ? strlen(url) : 0;
    tx t;
    int rc;
    if (n > STORE_REMOTE_MAX)
        return EINVAL;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)url[i] < 0x20 || url[i] == 0x7f)
            return EINVAL;
    if ((rc = store_tx_begin(st, 1, &t)))
        return rc;
    if (n)
        rc = store_db_put(&t, DB_META, REMOTE_REC, sizeof REMOTE_REC - 1, url, n, 0);
    else if ((rc = store_db_del(&t, DB_META, REMOTE_REC, sizeof REMOTE_REC - 1)) == STORE_ENOTFOUND)
        rc = 0;
    return store_tx_end(&t, rc);
}

int store_pending_clear(store *st, uint64_t version)
{
    tx t;
    int rc = store_tx_begin(st, 1, &t);
    if (rc)
        return rc;
    return store_tx_end(&t, store_pending_del(&t, version));
}

typedef struct mark_item {
    uint64_t version;
    size_t len;
    char name[NAME_BUF];
} mark_item;

typedef struct mark_vec {
    mark_item *v;
    size_t n, cap;
} mark_vec;

static int collect(void *arg, uint64_t version, const char *name, size_t len)
{
    mark_vec *pv = arg;
    mark_item *v = common_array_grow(pv->v, pv->n, &pv->cap, sizeof *v, 16);
    if (!v)
        return ENOMEM;
    pv->v = v;
    mark_item *it = &pv->v[pv->n++];
    it->version = version;
    it->len = len;
    memcpy(it->name, name, len);
    return 0;
}

/* Lists the marks of PREFIX as store_pending_list() does. */
static int marks_list(store *st, const char *prefix, store_pending_fn fn, void *ctx)
{
    mark_vec pv = {0};
    tx t;
    int rc = store_tx_begin(st, 0, &t);
    if (rc)
        return rc;
    rc = mark_walk(&t, prefix, collect, &pv);
    store_tx_abort(&t);
    for (size_t i = 0; !rc && i < pv.n; i++) {
        /* the name is ns \0 key: terminate the key */
        char name[NAME_BUF + 1];
        memcpy(name, pv.v[i].name, pv.v[i].len);
        name[pv.v[i].len] = '\0';
        size_t nslen = strnlen(name, pv.v[i].len);
        if (nslen >= pv.v[i].len) {
            rc = STORE_ECORRUPT;
            break;
        }
        rc = fn(name, name + nslen + 1, pv.v[i].version, ctx);
    }
    free(pv.v);
    return rc;
}

int store_pending_list(store *st, store_pending_fn fn, void *ctx)
{
    return marks_list(st, PENDING_PREFIX, fn, ctx);
}

int store_tomb_pending_list(store *st, store_pending_fn fn, void *ctx)
{
    return marks_list(st, TOMB_PENDING_PREFIX, fn, ctx);
}

int store_tomb_pending_clear(store *st, const char *ns, const char *key)
{
    char name[NAME_BUF];
    size_t nlen;
    name_find f;
    tx t;
    int rc = store_name_make(ns, key, name, &nlen);
    if (rc)
        return rc;
    /* look first: no write transaction when nothing is marked (gc --remote) */
    if ((rc = store_tx_begin(st, 0, &t)))
        return rc;
    f = (name_find){name, nlen, 0};
    rc = mark_walk(&t, TOMB_PENDING_PREFIX, find_name, &f);
    store_tx_abort(&t);
    if (rc != 1)
        return rc;
    if ((rc = store_tx_begin(st, 1, &t)))
        return rc;
    return store_tx_end(&t, store_tomb_pending_drop_name(&t, name, nlen));
}
