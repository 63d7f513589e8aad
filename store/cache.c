/* cache.c -- cached copies: results this host read from the remote, kept
 * as ordinary live entries plus a mark, and the cache's counters.
 *
 * Why it is shaped so:
 * - A cached copy is a live entry like any other (live, ver, data rows),
 *   so every reader of the store, the daemon included, serves it as it
 *   serves a result written here; only a mark in the meta database says
 *   it is a copy: "cach" + be64(version) -> le64(size) + the remote's
 *   ETag. No record changes layout, so a store from before opens and
 *   serves as before, and code from before sees a cached copy as a local
 *   result (it never uploads one: a copy is never marked pending).
 * - The mark is keyed by version, as the pending marks are: a replaced or
 *   dropped version's mark cannot stand for the new one, and the marks
 *   walk oldest first, which is the order eviction takes them in.
 * - Counters (hits, misses, copies made) live in one meta record, "cstat",
 *   written in the transactions that change them; a missing one is zeros.
 *   Copies made take versions from the put counter and are counted out of
 *   store_stats.puts through it. */
#include "store/store_int.h"

#include <errno.h>
#include <string.h>

#define CSTAT_REC "cstat"
#define CSTAT_LEN 24u

static void cache_key(unsigned char *k, uint64_t version)
{
    memcpy(k, CACHE_PREFIX, 4);
    store_rec_be64(k + 4, version);
}

int store_cache_mark_set(const tx *t, uint64_t version, uint64_t size, const char *etag)
{
    unsigned char k[PENDING_KEY_LEN], v[8 + STORE_ETAG_MAX];
    size_t n = strlen(etag);
    if (n > STORE_ETAG_MAX)
        return EINVAL;
    cache_key(k, version);
    store_rec_le64(v, size);
    memcpy(v + 8, etag, n);
    return store_db_put(t, DB_META, k, sizeof k, v, 8 + n, 0);
}

int store_cache_mark_del(const tx *t, uint64_t version)
{
    unsigned char k[PENDING_KEY_LEN];
    cache_key(k, version);
    int rc = store_db_del(t, DB_META, k, sizeof k);
    return rc == STORE_ENOTFOUND ? 0 : rc;
}

/* 1 and the ETag into ETAG (STORE_ETAG_MAX + 1 bytes, may be NULL) when
 * VERSION is marked cached; 0 when not; or an error (< 0). */
static int mark_get(const tx *t, uint64_t version, char *etag)
{
    unsigned char k[PENDING_KEY_LEN];
    MDB_val v;
    cache_key(k, version);
    int rc = store_db_get(t, DB_META, k, sizeof k, &v);
    if (rc == STORE_ENOTFOUND)
        return 0;
    if (rc)
        return rc;
    if (v.mv_size < 8 || v.mv_size > 8 + STORE_ETAG_MAX)
        return STORE_ECORRUPT;
    if (etag) {
        memcpy(etag, (const char *)v.mv_data + 8, v.mv_size - 8);
        etag[v.mv_size - 8] = '\0';
    }
    return 1;
}

int store_cache_mark_is(const tx *t, uint64_t version)
{
    return mark_get(t, version, NULL);
}

/* 1 when version VERSION is live (has its ver row), 0 when not, or < 0. */
static int version_live(const tx *t, uint64_t version)
{
    unsigned char k[8];
    MDB_val v;
    store_rec_be64(k, version);
    int rc = store_db_get(t, DB_VER, k, sizeof k, &v);
    if (rc == STORE_ENOTFOUND)
        return 0;
    return rc ? rc : 1;
}

int store_cache_oldest(const tx *t, char *name, size_t *len)
{
    MDB_cursor *c;
    unsigned char k0[PENDING_KEY_LEN];
    MDB_val key = {sizeof k0, k0}, val;
    int rc;
    *len = 0;
    cache_key(k0, 0);
    if ((rc = mdb_cursor_open(t->txn, store_db(t, DB_META), &c)))
        return store_map_err(rc);
    rc = mdb_cursor_get(c, &key, &val, MDB_SET_RANGE);
    while (rc == 0 && key.mv_size == PENDING_KEY_LEN && memcmp(key.mv_data, CACHE_PREFIX, 4) == 0) {
        unsigned char vk[8];
        MDB_val nv;
        memcpy(vk, (const char *)key.mv_data + 4, 8);
        /* a mark left by code that dropped the version without it: pass */
        int r = store_db_get(t, DB_VER, vk, 8, &nv);
        if (r == 0) {
            if (nv.mv_size > NAME_BUF) {
                rc = MDB_CORRUPTED;
                break;
            }
            memcpy(name, nv.mv_data, nv.mv_size);
            *len = nv.mv_size;
            break;
        }
        if (r != STORE_ENOTFOUND) {
            mdb_cursor_close(c);
            return r;
        }
        rc = mdb_cursor_get(c, &key, &val, MDB_NEXT);
    }
    mdb_cursor_close(c);
    return rc && rc != MDB_NOTFOUND ? store_map_err(rc) : 0;
}

/* ---- counters ---------------------------------------------------------- */

typedef struct cstat {
    uint64_t hits, misses, fills;
} cstat;

static int cstat_load(const tx *t, cstat *c)
{
    MDB_val v;
    memset(c, 0, sizeof *c);
    int rc = store_db_get(t, DB_META, CSTAT_REC, sizeof CSTAT_REC - 1, &v);
    if (rc == STORE_ENOTFOUND)
        return 0;
    if (rc)
        return rc;
    if (v.mv_size < CSTAT_LEN)
        return STORE_ECORRUPT;
    c->hits = store_rec_get_le64(v.mv_data);
    c->misses = store_rec_get_le64((const char *)v.mv_data + 8);
    c->fills = store_rec_get_le64((const char *)v.mv_data + 16);
    return 0;
}

static int cstat_save(const tx *t, const cstat *c)
{
    unsigned char v[CSTAT_LEN];
    store_rec_le64(v, c->hits);
    store_rec_le64(v + 8, c->misses);
    store_rec_le64(v + 16, c->fills);
    return store_db_put(t, DB_META, CSTAT_REC, sizeof CSTAT_REC - 1, v, sizeof v, 0);
}

int store_cache_fill_count(const tx *t)
{
    cstat c;
    int rc = cstat_load(t, &c);
    if (rc)
        return rc;
    c.fills++;
    return cstat_save(t, &c);
}

int store_cache_count(store *st, uint64_t hits, uint64_t misses)
{
    cstat c;
    tx t;
    int rc;
    if (!hits && !misses)
        return 0;
    if ((rc = store_tx_begin(st, 1, &t)))
        return rc;
    if (!(rc = cstat_load(&t, &c))) {
        c.hits += hits;
        c.misses += misses;
        rc = cstat_save(&t, &c);
    }
    return store_tx_end(&t, rc);
}

int store_cache_figures(const tx *t, store_stats *out)
{
    MDB_cursor *c;
    unsigned char k0[PENDING_KEY_LEN];
    MDB_val key = {sizeof k0, k0}, val;
    cstat cs;
    int rc = cstat_load(t, &cs);
    if (rc)
        return rc;
    out->cache_hits = cs.hits;
    out->cache_misses = cs.misses;
    out->puts -= out->puts >= cs.fills ? cs.fills : out->puts;
    cache_key(k0, 0);
    if ((rc = mdb_cursor_open(t->txn, store_db(t, DB_META), &c)))
        return store_map_err(rc);
    rc = mdb_cursor_get(c, &key, &val, MDB_SET_RANGE);
    while (rc == 0 && key.mv_size == PENDING_KEY_LEN && memcmp(key.mv_data, CACHE_PREFIX, 4) == 0) {
        if (val.mv_size < 8) {
            rc = MDB_CORRUPTED;
            break;
        }
        int live = version_live(t, store_rec_get_be64((const char *)key.mv_data + 4));
        if (live < 0) {
            mdb_cursor_close(c);
            return live;
        }
        if (live) {
            out->cached_entries++;
            out->cached_bytes += store_rec_get_le64(val.mv_data);
        }
        rc = mdb_cursor_get(c, &key, &val, MDB_NEXT);
    }
    mdb_cursor_close(c);
    return rc && rc != MDB_NOTFOUND ? store_map_err(rc) : 0;
}

/* ---- the public calls ---------------------------------------------------- */

int store_cached(store *st, uint64_t version, char *etag, size_t cap)
{
    char tag[STORE_ETAG_MAX + 1];
    tx t;
    int rc = store_tx_begin(st, 0, &t);
    if (rc)
        return rc;
    rc = mark_get(&t, version, tag);
    if (rc == 1 && (rc = version_live(&t, version)) == 1 && etag) {
        if (strlen(tag) + 1 > cap)
            rc = ERANGE;
        else
            memcpy(etag, tag, strlen(tag) + 1);
    }
    store_tx_abort(&t);
    return rc;
}
