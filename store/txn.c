/* txn.c -- transactions and the records every part of the store shares:
 * errors from LMDB, short transactions under the map's resize lock, the
 * state record, names, live entries and data keys.
 */
#include "store/store_int.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

int store_map_err(int rc)
{
    if (rc <= STORE_ERR_BASE) /* already ours */
        return rc;
    switch (rc) {
    case MDB_SUCCESS: return 0;
    case MDB_MAP_FULL: return STORE_EFULL;
    case MDB_CORRUPTED:
    case MDB_PAGE_NOTFOUND:
    case MDB_INVALID:
    case MDB_BAD_TXN:
    case MDB_PANIC: return STORE_ECORRUPT;
    case MDB_VERSION_MISMATCH: return STORE_EVERSION;
    case MDB_READERS_FULL: return STORE_EREADERS;
    default: return rc > 0 ? rc : STORE_ELMDB;
    }
}

uint64_t store_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Learns where LMDB maps the file, from the state record's page, after
 * the environment is opened or remapped (no transaction of ours open). */
void store_map_base_find(struct shared_env *se)
{
    static const char key[] = "state";
    MDB_txn *txn;
    MDB_val k = {sizeof key - 1, (void *)key}, v;
    MDB_envinfo info;
    se->base = NULL;
    if (mdb_txn_begin(se->env, NULL, MDB_RDONLY, &txn))
        return;
    if (!mdb_get(txn, se->dbi[DB_META], &k, &v) && !mdb_env_info(se->env, &info)) {
        se->base = store_verify_map_base(v.mv_data, se->psize);
        se->mapsize = info.me_mapsize;
    }
    mdb_txn_abort(txn);
}

int store_tx_begin(store *st, int write, tx *t)
{
    struct shared_env *se = st->se;
    int rc;
    /* A child of fork() must not use its parent's environment (LMDB's rule:
     * the reader slot and the writer lock would be the parent's). */
    if (se->pid != getpid())
        return STORE_EFORKED;
    if (write && (se->flags & STORE_RDONLY))
        return STORE_ERDONLY;
    t->se = se;
    for (int tries = 0;; tries++) {
        pthread_rwlock_rdlock(&se->resize);
        rc = mdb_txn_begin(se->env, NULL, write ? 0 : MDB_RDONLY, &t->txn);
        if (rc != MDB_MAP_RESIZED || tries > 2)
            break;
        /* Another process grew the map: adopt its size, then retry. */
        pthread_rwlock_unlock(&se->resize);
        pthread_rwlock_wrlock(&se->resize);
        mdb_env_set_mapsize(se->env, 0);
        store_map_base_find(se);
        pthread_rwlock_unlock(&se->resize);
    }
    if (rc) {
        pthread_rwlock_unlock(&se->resize);
        return store_map_err(rc);
    }
    return 0;
}

void store_tx_abort(tx *t)
{
    mdb_txn_abort(t->txn);
    pthread_rwlock_unlock(&t->se->resize);
}

/* LMDB reports a short write as EIO; on a full filesystem that is ENOSPC,
 * which tells the user what to do. */
static int full_disk_errno(MDB_env *env, int rc)
{
    mdb_filehandle_t fd;
    struct statvfs sv;
    if (rc == EIO && !mdb_env_get_fd(env, &fd) && !fstatvfs(fd, &sv)
        && (uint64_t)sv.f_bavail * sv.f_frsize < (1u << 20))
        return ENOSPC;
    return rc;
}

void store_map_trim(store *st)
{
    struct shared_env *se = st->se;
    if (se->pid != getpid())
        return;
    pthread_rwlock_rdlock(&se->resize); /* the map stays where it is */
    if (se->base)
        (void)madvise((void *)se->base, se->mapsize, MADV_DONTNEED);
    pthread_rwlock_unlock(&se->resize);
}

static int tx_commit(tx *t)
{
    int rc = mdb_txn_commit(t->txn);
    pthread_rwlock_unlock(&t->se->resize);
    return store_map_err(full_disk_errno(t->se->env, rc));
}

/* Ends T: commits when RC is 0, aborts otherwise. Returns the final code. */
int store_tx_end(tx *t, int rc)
{
    if (rc) {
        store_tx_abort(t);
        return rc;
    }
    return tx_commit(t);
}

MDB_dbi store_db(const tx *t, int which)
{
    return t->se->dbi[which];
}

int store_db_get(const tx *t, int which, const void *k, size_t klen, MDB_val *v)
{
    MDB_val key = {klen, (void *)k};
    int rc = mdb_get(t->txn, store_db(t, which), &key, v);
    return rc == MDB_NOTFOUND ? STORE_ENOTFOUND : store_map_err(rc);
}

int store_db_put(const tx *t, int which, const void *k, size_t klen,
                  const void *v, size_t vlen, unsigned flags)
{
    MDB_val key = {klen, (void *)k}, val = {vlen, (void *)v};
    return store_map_err(mdb_put(t->txn, store_db(t, which), &key, &val, flags));
}

int store_db_del(const tx *t, int which, const void *k, size_t klen)
{
    MDB_val key = {klen, (void *)k};
    int rc = mdb_del(t->txn, store_db(t, which), &key, NULL);
    return rc == MDB_NOTFOUND ? STORE_ENOTFOUND : store_map_err(rc);
}

/* ---- state ------------------------------------------------------------- */

int store_state_load(const tx *t, rec_state *s)
{
    MDB_val v;
    int rc = store_db_get(t, DB_META, "state", 5, &v);
    if (rc == STORE_ENOTFOUND)
        return STORE_ENOSTORE;
    if (rc || (rc = store_rec_state_decode(v.mv_data, v.mv_size, s)))
        return rc;
    /* The codec record: missing in a store made before compression. */
    rc = store_db_get(t, DB_META, "codec", 5, &v);
    if (rc == STORE_ENOTFOUND) {
        if (s->format != REC_FORMAT)
            return STORE_ECORRUPT;
        s->compression = STORE_COMPRESS_ZSTD;
        rc = 0;
    } else if (rc || (rc = store_rec_codec_decode(v.mv_data, v.mv_size, s))) {
        return rc;
    }
    /* Format 1 holds raw values only, maybe written by code that keeps no
     * codec record: they occupy exactly their size. */
    if (s->format == REC_FORMAT)
        s->stored = s->live_bytes;
    return 0;
}

int store_state_read(store *st, rec_state *s)
{
    tx t;
    int rc = store_tx_begin(st, 0, &t);
    if (rc)
        return rc;
    rc = store_state_load(&t, s);
    store_tx_abort(&t);
    return rc;
}

int store_state_save(const tx *t, const rec_state *s)
{
    unsigned char buf[REC_STATE_LEN], codec[REC_CODEC_LEN];
    int rc;
    store_rec_state_encode(s, buf);
    store_rec_codec_encode(s, codec);
    if ((rc = store_db_put(t, DB_META, "state", 5, buf, sizeof buf, 0)))
        return rc;
    return store_db_put(t, DB_META, "codec", 5, codec, sizeof codec, 0);
}

/* ---- names ------------------------------------------------------------- */

/* Builds ns \0 key into OUT (NAME_BUF bytes) after checking both parts. */
int store_name_make(const char *ns, const char *key, char *out, size_t *len)
{
    size_t nslen, keylen;
    int rc;
    if (!ns)
        ns = STORE_DEFAULT_NAMESPACE;
    if (!key)
        return STORE_ENAME_EMPTY;
    nslen = strnlen(ns, STORE_NAME_MAX + 1);
    keylen = strnlen(key, STORE_NAME_MAX + 1);
    if ((rc = store_name_check(ns, nslen)) || (rc = store_name_check(key, keylen)))
        return rc;
    memcpy(out, ns, nslen);
    out[nslen] = '\0';
    memcpy(out + nslen + 1, key, keylen);
    *len = nslen + 1 + keylen;
    return 0;
}


/* ---- live entries and data keys ----------------------------------------- */

int store_entry_load(const tx *t, const char *name, size_t len, store_entry *e)
{
    MDB_val v;
    int rc = store_db_get(t, DB_LIVE, name, len, &v);
    return rc ? rc : store_rec_entry_decode(v.mv_data, v.mv_size, e);
}


void store_data_key(unsigned char *k, uint64_t version, uint32_t idx)
{
    store_rec_be64(k, version);
    store_rec_be32(k + 8, idx);
}
