/* store.c -- the result store over LMDB.
 *
 * Why it is shaped this way:
 * - Values are split into chunks of one page minus its header, each an LMDB
 *   overflow value of exactly one page. Freed single pages are reusable
 *   anywhere, so churn does not fragment the file the way multi-page
 *   overflow runs do.
 * - Versions come from one counter and are never reused, so the "ver"
 *   database in key order is the write order: eviction takes its first row.
 *   A reader holding a version either finds that version's chunks or none.
 * - Every change appends a row to "log" so the daemon can invalidate exactly
 *   what changed; the log is trimmed to its newest LOG_KEEP rows.
 * - One LMDB environment per directory per process (LMDB forbids opening one
 *   twice); handles share it through a small refcounted registry.
 */
#include "store/store.h"
#include "store/record.h"
#include "store/verify.h"
#include "store/wake.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <lmdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define LOG_KEEP 200000u
#define LIST_BATCH 256u
#define MAP_SLACK (1ull << 30)
#define NAME_BUF (2 * STORE_NAME_MAX + 1)

enum { DB_META, DB_LIVE, DB_VER, DB_DATA, DB_TOMB, DB_TOMBQ, DB_LOG, DB_COUNT };
static const char *const db_names[DB_COUNT] = {"meta", "live", "ver", "data",
                                               "tomb", "tombq", "log"};

/* One open LMDB environment, shared by every handle on the same directory. */
struct shared_env {
    dev_t dev;
    ino_t ino;
    pid_t pid; /* the process that opened it: a forked child must not share it */
    MDB_env *env;
    MDB_dbi dbi[DB_COUNT];
    unsigned flags;
    uint64_t chunk; /* bytes per data chunk, fixed at creation */
    size_t psize;   /* LMDB page size */
    const void *base; /* where LMDB maps data.mdb (verify_map_base), or NULL */
    size_t mapsize;   /* and how much */
    int refs;
    pthread_rwlock_t resize; /* held shared by every txn, exclusively to grow the map */
    struct shared_env *next;
};

struct store {
    struct shared_env *se;
    char *path;
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shared_env *registry;

/* ---- errors ----------------------------------------------------------- */

static int map_err(int rc)
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

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- transactions ------------------------------------------------------ */

typedef struct tx {
    struct shared_env *se;
    MDB_txn *txn;
} tx;

/* Learns where LMDB maps the file, from the state record's page, after
 * the environment is opened or remapped (no transaction of ours open). */
static void map_base_find(struct shared_env *se)
{
    static const char key[] = "state";
    MDB_txn *txn;
    MDB_val k = {sizeof key - 1, (void *)key}, v;
    MDB_envinfo info;
    se->base = NULL;
    if (mdb_txn_begin(se->env, NULL, MDB_RDONLY, &txn))
        return;
    if (!mdb_get(txn, se->dbi[DB_META], &k, &v) && !mdb_env_info(se->env, &info)) {
        se->base = verify_map_base(v.mv_data, se->psize);
        se->mapsize = info.me_mapsize;
    }
    mdb_txn_abort(txn);
}

static int tx_begin(store *st, int write, tx *t)
{
    struct shared_env *se = st->se;
    int rc;
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
        map_base_find(se);
        pthread_rwlock_unlock(&se->resize);
    }
    if (rc) {
        pthread_rwlock_unlock(&se->resize);
        return map_err(rc);
    }
    return 0;
}

static void tx_abort(tx *t)
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

static int tx_commit(tx *t)
{
    int rc = mdb_txn_commit(t->txn);
    pthread_rwlock_unlock(&t->se->resize);
    return map_err(full_disk_errno(t->se->env, rc));
}

/* Ends T: commits when RC is 0, aborts otherwise. Returns the final code. */
static int tx_end(tx *t, int rc)
{
    if (rc) {
        tx_abort(t);
        return rc;
    }
    return tx_commit(t);
}

static MDB_dbi db(const tx *t, int which)
{
    return t->se->dbi[which];
}

static int db_get(const tx *t, int which, const void *k, size_t klen, MDB_val *v)
{
    MDB_val key = {klen, (void *)k};
    int rc = mdb_get(t->txn, db(t, which), &key, v);
    return rc == MDB_NOTFOUND ? STORE_ENOTFOUND : map_err(rc);
}

static int db_put(const tx *t, int which, const void *k, size_t klen,
                  const void *v, size_t vlen, unsigned flags)
{
    MDB_val key = {klen, (void *)k}, val = {vlen, (void *)v};
    return map_err(mdb_put(t->txn, db(t, which), &key, &val, flags));
}

static int db_del(const tx *t, int which, const void *k, size_t klen)
{
    MDB_val key = {klen, (void *)k};
    int rc = mdb_del(t->txn, db(t, which), &key, NULL);
    return rc == MDB_NOTFOUND ? STORE_ENOTFOUND : map_err(rc);
}

/* ---- state ------------------------------------------------------------- */

static int state_load(const tx *t, rec_state *s)
{
    MDB_val v;
    int rc = db_get(t, DB_META, "state", 5, &v);
    if (rc == STORE_ENOTFOUND)
        return STORE_ENOSTORE;
    return rc ? rc : rec_state_decode(v.mv_data, v.mv_size, s);
}

static int state_save(const tx *t, const rec_state *s)
{
    unsigned char buf[REC_STATE_LEN];
    rec_state_encode(s, buf);
    return db_put(t, DB_META, "state", 5, buf, sizeof buf, 0);
}

/* ---- names ------------------------------------------------------------- */

/* Builds ns \0 key into OUT (NAME_BUF bytes) after checking both parts. */
static int name_make(const char *ns, const char *key, char *out, size_t *len)
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

/* ---- change log and tombstones ----------------------------------------- */

static int log_change(const tx *t, rec_state *s, const char *name, size_t len,
                      uint64_t old_version, uint64_t new_version)
{
    unsigned char k[8], v[REC_CHANGE_FIXED + NAME_BUF];
    MDB_cursor *c;
    MDB_val key, val;
    int rc;
    rec_be64(k, ++s->gen);
    rec_le64(v, old_version);
    rec_le64(v + 8, new_version);
    memcpy(v + REC_CHANGE_FIXED, name, len);
    if ((rc = db_put(t, DB_LOG, k, 8, v, REC_CHANGE_FIXED + len, MDB_APPEND)))
        return rc;
    if (s->gen <= LOG_KEEP)
        return 0;
    /* Trim the oldest rows; usually exactly one. */
    if ((rc = mdb_cursor_open(t->txn, db(t, DB_LOG), &c)))
        return map_err(rc);
    while ((rc = mdb_cursor_get(c, &key, &val, MDB_FIRST)) == 0
           && key.mv_size == 8 && rec_get_be64(key.mv_data) <= s->gen - LOG_KEEP)
        if ((rc = mdb_cursor_del(c, 0)))
            break;
    mdb_cursor_close(c);
    return rc == MDB_NOTFOUND || rc == 0 ? 0 : map_err(rc);
}

/* Drops the tombstone of NAME, if any. */
static int tomb_clear(const tx *t, rec_state *s, const char *name, size_t len)
{
    MDB_val v;
    rec_tomb tb;
    unsigned char k[8];
    int rc = db_get(t, DB_TOMB, name, len, &v);
    if (rc == STORE_ENOTFOUND)
        return 0;
    if (rc || (rc = rec_tomb_decode(v.mv_data, v.mv_size, &tb)))
        return rc;
    rec_be64(k, tb.seq);
    if ((rc = db_del(t, DB_TOMB, name, len)))
        return rc;
    rc = db_del(t, DB_TOMBQ, k, 8);
    if (rc && rc != STORE_ENOTFOUND)
        return rc;
    s->tombs--;
    return 0;
}

/* Expires the oldest tombstones until at most max_tombs remain. */
static int tomb_trim(const tx *t, rec_state *s)
{
    MDB_cursor *c;
    MDB_val key, val;
    int rc;
    if (s->tombs <= s->max_tombs)
        return 0;
    if ((rc = mdb_cursor_open(t->txn, db(t, DB_TOMBQ), &c)))
        return map_err(rc);
    while (s->tombs > s->max_tombs) {
        if ((rc = mdb_cursor_get(c, &key, &val, MDB_FIRST)))
            break;
        rc = db_del(t, DB_TOMB, val.mv_data, val.mv_size);
        if (rc && rc != STORE_ENOTFOUND)
            break;
        if ((rc = mdb_cursor_del(c, 0)))
            break;
        s->tombs--;
    }
    mdb_cursor_close(c);
    return rc == MDB_NOTFOUND ? STORE_ECORRUPT : map_err(rc);
}

static int tomb_add(const tx *t, rec_state *s, const char *name, size_t len,
                    uint64_t version, int reason)
{
    rec_tomb tb = {version, now_ns(), ++s->tomb_seq, reason};
    unsigned char v[REC_TOMB_LEN], k[8];
    int rc;
    if ((rc = tomb_clear(t, s, name, len)))
        return rc;
    rec_tomb_encode(&tb, v);
    rec_be64(k, tb.seq);
    if ((rc = db_put(t, DB_TOMB, name, len, v, sizeof v, 0))
        || (rc = db_put(t, DB_TOMBQ, k, 8, name, len, MDB_APPEND)))
        return rc;
    s->tombs++;
    return tomb_trim(t, s);
}

/* ---- versions ---------------------------------------------------------- */

static void data_key(unsigned char *k, uint64_t version, uint32_t idx)
{
    rec_be64(k, version);
    rec_be32(k + 8, idx);
}

/* Deletes the chunks and the ver row of VERSION. */
static int version_drop(const tx *t, uint64_t version)
{
    unsigned char k[12];
    MDB_cursor *c;
    MDB_val key = {12, k}, val;
    int rc;
    data_key(k, version, 0);
    if ((rc = mdb_cursor_open(t->txn, db(t, DB_DATA), &c)))
        return map_err(rc);
    rc = mdb_cursor_get(c, &key, &val, MDB_SET_RANGE);
    while (rc == 0 && key.mv_size == 12 && rec_get_be64(key.mv_data) == version) {
        /* LMDB frees the pages a value's page header names: check it. */
        if ((rc = verify_value_page(val.mv_data, val.mv_size, t->se->base,
                                    t->se->mapsize, t->se->psize))
            || (rc = mdb_cursor_del(c, 0)))
            break;
        rc = mdb_cursor_get(c, &key, &val, MDB_NEXT); /* the row after the deleted one */
    }
    mdb_cursor_close(c);
    if (rc && rc != MDB_NOTFOUND)
        return map_err(rc);
    rec_be64(k, version);
    rc = db_del(t, DB_VER, k, 8);
    return rc == STORE_ENOTFOUND ? STORE_ECORRUPT : rc;
}

/* Drops the live entry NAME (whose record is E) and accounts for it. */
static int entry_drop(const tx *t, rec_state *s, const char *name, size_t len,
                      const store_entry *e)
{
    int rc;
    if ((rc = version_drop(t, e->version)) || (rc = db_del(t, DB_LIVE, name, len)))
        return rc == STORE_ENOTFOUND ? STORE_ECORRUPT : rc;
    if (s->live_bytes < e->size || s->live_entries == 0)
        return STORE_ECORRUPT;
    s->live_bytes -= e->size;
    s->live_entries--;
    return 0;
}

static int entry_load(const tx *t, const char *name, size_t len, store_entry *e)
{
    MDB_val v;
    int rc = db_get(t, DB_LIVE, name, len, &v);
    return rc ? rc : rec_entry_decode(v.mv_data, v.mv_size, e);
}

/* Evicts the oldest entries until NEED more bytes fit the bound. */
static int evict_until(const tx *t, rec_state *s, uint64_t need, uint64_t *count)
{
    while (s->live_bytes + need > s->max_total && s->live_entries > 0) {
        MDB_cursor *c;
        MDB_val key, val;
        char name[NAME_BUF];
        size_t len;
        store_entry e;
        int rc;
        if ((rc = mdb_cursor_open(t->txn, db(t, DB_VER), &c)))
            return map_err(rc);
        rc = mdb_cursor_get(c, &key, &val, MDB_FIRST);
        if (rc == 0 && (val.mv_size > NAME_BUF || key.mv_size != 8))
            rc = MDB_CORRUPTED;
        if (rc == 0) {
            len = val.mv_size;
            memcpy(name, val.mv_data, len);
        }
        mdb_cursor_close(c);
        if (rc)
            return rc == MDB_NOTFOUND ? STORE_ECORRUPT : map_err(rc);
        if ((rc = entry_load(t, name, len, &e)))
            return rc == STORE_ENOTFOUND ? STORE_ECORRUPT : rc;
        if ((rc = entry_drop(t, s, name, len, &e))
            || (rc = tomb_add(t, s, name, len, e.version, STORE_REASON_EVICTED))
            || (rc = log_change(t, s, name, len, e.version, 0)))
            return rc;
        s->evictions++;
        if (count)
            (*count)++;
    }
    return 0;
}

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
        data_key(k, version, idx);
        rc = mdb_put(t->txn, db(t, DB_DATA), &key, &val, MDB_APPEND | MDB_RESERVE);
        if (rc)
            return map_err(rc);
        rec_le32(val.mv_data, rec_crc32c(data + off, n));
        memcpy((unsigned char *)val.mv_data + REC_CHUNK_HDR, data + off, n);
    }
    return 0;
}

/* ---- opening ----------------------------------------------------------- */

static int mkdir_parents(const char *dir)
{
    char *p = strdup(dir);
    int rc = 0;
    if (!p)
        return ENOMEM;
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0700) && errno != EEXIST) {
            rc = errno;
            break;
        }
        *s = '/';
    }
    if (!rc && mkdir(p, 0700) && errno != EEXIST)
        rc = errno;
    free(p);
    return rc;
}

static char *path_join(const char *dir, const char *file)
{
    size_t n = strlen(dir) + strlen(file) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, file);
    return p;
}

/* LMDB maps the file and trusts it: a data.mdb shorter than its own meta
 * says would fault on access, so check before anyone reads a page. */
static int env_check_size(MDB_env *env)
{
    MDB_envinfo info;
    MDB_stat ms;
    mdb_filehandle_t fd;
    struct stat sb;
    if (mdb_env_info(env, &info) || mdb_env_stat(env, &ms) || mdb_env_get_fd(env, &fd)
        || fstat(fd, &sb))
        return STORE_ECORRUPT;
    if ((uint64_t)sb.st_size < ((uint64_t)info.me_last_pgno + 1) * ms.ms_psize)
        return STORE_ECORRUPT;
    return 0;
}

/* Opens the databases in a transaction of kind WRITE; a write transaction
 * also creates them and a fresh state when missing. */
static int env_open_dbs(struct shared_env *se, store *tmp, int write)
{
    rec_state s;
    MDB_stat ms;
    tx t;
    int rc = tx_begin(tmp, write, &t);
    if (rc)
        return rc;
    for (int i = 0; i < DB_COUNT && !rc; i++) {
        rc = mdb_dbi_open(t.txn, db_names[i], write ? MDB_CREATE : 0, &se->dbi[i]);
        rc = rc == MDB_NOTFOUND ? STORE_ENOSTORE : map_err(rc);
    }
    if (!rc && (rc = state_load(&t, &s)) == STORE_ENOSTORE && write) {
        mdb_env_stat(se->env, &ms);
        memset(&s, 0, sizeof s);
        s.format = REC_FORMAT;
        s.chunk = ms.ms_psize - VERIFY_PAGE_HDR - REC_CHUNK_HDR;
        s.max_total = STORE_DEFAULT_MAX_TOTAL;
        s.max_result = STORE_DEFAULT_MAX_RESULT;
        s.max_tombs = STORE_DEFAULT_MAX_TOMBS;
        s.next_version = 2;
        rc = state_save(&t, &s);
    }
    if (!rc)
        se->chunk = s.chunk;
    /* Even a read-only transaction is committed here: LMDB closes database
     * handles opened by a transaction that is aborted. */
    return tx_end(&t, rc);
}

/* Says whether the environment holds databases that are not ours: an
 * LMDB environment made by another program is refused, never written. */
static int env_is_foreign(store *tmp)
{
    MDB_dbi main, meta;
    MDB_stat ms;
    tx t;
    int rc = tx_begin(tmp, 0, &t), foreign;
    if (rc)
        return rc;
    /* Not empty, and without our "meta" (which another process may have
     * just created alongside the rest: then it is ours). */
    foreign = mdb_dbi_open(t.txn, NULL, 0, &main) || mdb_stat(t.txn, main, &ms)
              || (ms.ms_entries > 0 && mdb_dbi_open(t.txn, db_names[DB_META], 0, &meta));
    tx_abort(&t);
    return foreign ? STORE_ECORRUPT : 0;
}

/* Opens the databases: a read transaction when the store is complete (the
 * usual case: no writer lock taken at open), a write one to create it in an
 * environment that holds nothing yet. */
static int env_init_dbs(struct shared_env *se, store *tmp)
{
    int rc = env_open_dbs(se, tmp, 0);
    if (rc == STORE_ENOSTORE && !(se->flags & STORE_RDONLY) && !(rc = env_is_foreign(tmp)))
        rc = env_open_dbs(se, tmp, 1);
    return rc;
}

static int env_open(struct shared_env *se, const char *dir, int creating)
{
    unsigned mflags = MDB_NOTLS;
    store tmp = {se, NULL};
    int rc;
    if (se->flags & STORE_RDONLY)
        mflags |= MDB_RDONLY;
    if (se->flags & STORE_NOSYNC)
        mflags |= MDB_NOSYNC;
    if ((rc = mdb_env_create(&se->env)))
        return map_err(rc);
    mdb_env_set_maxdbs(se->env, DB_COUNT);
    mdb_env_set_maxreaders(se->env, 1024);
    if (creating)
        mdb_env_set_mapsize(se->env, 4 * STORE_DEFAULT_MAX_TOTAL + MAP_SLACK);
    rc = mdb_env_open(se->env, dir, mflags, 0600);
    if (rc == ENOENT)
        rc = STORE_ENOSTORE;
    if (!rc)
        rc = env_check_size(se->env);
    if (!rc)
        rc = verify_env(se->env, db_names, DB_COUNT, !!(se->flags & STORE_VERIFY), NULL, 0);
    if (!rc) {
        int dead;
        MDB_stat ms;
        mdb_reader_check(se->env, &dead);
        rc = env_init_dbs(se, &tmp);
        se->psize = mdb_env_stat(se->env, &ms) ? 0 : ms.ms_psize;
        if (!rc)
            map_base_find(se);
    }
    if (rc) {
        mdb_env_close(se->env);
        se->env = NULL;
    }
    return map_err(rc);
}

/* Finds or opens the shared environment of DIR (registry_lock held). */
static int shared_get(const char *dir, unsigned flags, struct shared_env **out)
{
    struct stat sb;
    struct shared_env *se;
    char *data;
    int creating, rc;
    if (stat(dir, &sb))
        return errno;
    if (!S_ISDIR(sb.st_mode))
        return ENOTDIR;
    for (se = registry; se; se = se->next)
        if (se->dev == sb.st_dev && se->ino == sb.st_ino && se->pid == getpid()) {
            se->refs++;
            *out = se;
            return 0;
        }
    if (!(data = path_join(dir, "data.mdb")))
        return ENOMEM;
    /* Only a data file that is missing means "no store yet": one we may not
     * read is EACCES, and a FIFO or device (which would block or lie) is not
     * a store. */
    rc = stat(data, &sb) ? errno : 0;
    free(data);
    creating = rc == ENOENT;
    if (rc && !creating)
        return rc;
    if (!creating && !S_ISREG(sb.st_mode))
        return STORE_ECORRUPT;
    /* LMDB would initialise an empty data file as a new environment: only a
     * caller allowed to create may do that (a store being made right now by
     * another process is empty for an instant); for the others it is a
     * store that was truncated, and nothing must be written over it. */
    if (!creating && sb.st_size == 0 && !(flags & STORE_CREATE))
        return STORE_ECORRUPT;
    if (creating && !(flags & STORE_CREATE))
        return STORE_ENOSTORE;
    if (!(se = calloc(1, sizeof *se)))
        return ENOMEM;
    se->dev = sb.st_dev;
    se->ino = sb.st_ino;
    se->pid = getpid();
    se->flags = flags;
    se->refs = 1;
    pthread_rwlock_init(&se->resize, NULL);
    if ((rc = env_open(se, dir, creating))) {
        pthread_rwlock_destroy(&se->resize);
        free(se);
        return rc;
    }
    se->next = registry;
    registry = se;
    *out = se;
    return 0;
}

int store_open(store **out, const char *dir, unsigned flags)
{
    store *st;
    int rc = 0;
    *out = NULL;
    if (!dir || !*dir)
        return ENOENT;
    if (flags & STORE_RDONLY)
        flags &= ~STORE_CREATE;
    if ((flags & STORE_CREATE) && (rc = mkdir_parents(dir)))
        return rc;
    if (!(st = calloc(1, sizeof *st)) || !(st->path = strdup(dir))) {
        free(st);
        return ENOMEM;
    }
    pthread_mutex_lock(&registry_lock);
    rc = shared_get(dir, flags, &st->se);
    pthread_mutex_unlock(&registry_lock);
    if (rc) {
        free(st->path);
        free(st);
        return rc;
    }
    *out = st;
    return 0;
}

void store_close(store *st)
{
    struct shared_env **pp, *se;
    if (!st)
        return;
    se = st->se;
    pthread_mutex_lock(&registry_lock);
    if (--se->refs == 0) {
        for (pp = &registry; *pp; pp = &(*pp)->next)
            if (*pp == se) {
                *pp = se->next;
                break;
            }
        mdb_env_close(se->env);
        pthread_rwlock_destroy(&se->resize);
        free(se);
    }
    pthread_mutex_unlock(&registry_lock);
    free(st->path);
    free(st);
}

const char *store_path(const store *st)
{
    return st->path;
}

/* ---- limits ------------------------------------------------------------ */

int store_limits_get(store *st, store_limits *out)
{
    rec_state s;
    tx t;
    int rc = tx_begin(st, 0, &t);
    if (rc)
        return rc;
    rc = state_load(&t, &s);
    tx_abort(&t);
    if (!rc) {
        out->max_total_bytes = s.max_total;
        out->max_result_bytes = s.max_result;
        out->max_tombstones = s.max_tombs;
    }
    return rc;
}

/* Grows the map so that a bound of MAX_TOTAL fits with room for churn.
 * Only when no transaction of this process is open (we hold the lock). */
static int map_fit(store *st, uint64_t max_total)
{
    MDB_envinfo info;
    uint64_t want = 4 * max_total + MAP_SLACK;
    int rc;
    if (max_total > (UINT64_C(1) << 44))
        return STORE_ELIMITS;
    mdb_env_info(st->se->env, &info);
    if (info.me_mapsize >= want)
        return 0;
    pthread_rwlock_wrlock(&st->se->resize);
    rc = mdb_env_set_mapsize(st->se->env, (size_t)want);
    map_base_find(st->se);
    pthread_rwlock_unlock(&st->se->resize);
    return map_err(rc);
}

int store_limits_set(store *st, const store_limits *lim, uint64_t *nevicted)
{
    rec_state s;
    tx t;
    int rc;
    if (nevicted)
        *nevicted = 0;
    if (st->se->flags & STORE_RDONLY)
        return STORE_ERDONLY;
    if (lim->max_total_bytes && (rc = map_fit(st, lim->max_total_bytes)))
        return rc;
    if ((rc = tx_begin(st, 1, &t)))
        return rc;
    if ((rc = state_load(&t, &s)))
        return tx_end(&t, rc);
    if (lim->max_total_bytes)
        s.max_total = lim->max_total_bytes;
    if (lim->max_result_bytes)
        s.max_result = lim->max_result_bytes;
    else if (s.max_result > s.max_total)
        s.max_result = s.max_total;
    if (lim->max_tombstones)
        s.max_tombs = lim->max_tombstones;
    if (s.max_result > s.max_total)
        return tx_end(&t, STORE_ELIMITS);
    if ((rc = evict_until(&t, &s, 0, nevicted)) || (rc = tomb_trim(&t, &s)))
        return tx_end(&t, rc);
    return store_wake_after(st, tx_end(&t, state_save(&t, &s)), s.gen);
}

/* ---- writing ----------------------------------------------------------- */

/* Removes the previous version of NAME, if live, and its tombstone. Sets
 * *OLD to the version dropped (0: none). */
static int put_clear_old(const tx *t, rec_state *s, const char *name,
                         size_t len, uint64_t *old)
{
    store_entry e;
    int rc = entry_load(t, name, len, &e);
    *old = 0;
    if (rc == STORE_ENOTFOUND)
        return tomb_clear(t, s, name, len);
    if (rc || (rc = entry_drop(t, s, name, len, &e)))
        return rc;
    *old = e.version;
    return 0;
}

static int put_fill_entry(store_entry *e, const store_meta *meta, size_t len)
{
    memset(e, 0, sizeof *e);
    e->size = len;
    e->original_size = len;
    e->created_ns = now_ns();
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

/* One attempt at store_put(): NAME is checked, E filled but for its version. */
static int put_once(store *st, const char *name, size_t nlen, const void *data,
                    size_t len, store_entry *e_in, store_entry *out)
{
    unsigned char rec[REC_ENTRY_FIXED + STORE_TOOL_MAX], vk[8];
    store_entry e = *e_in;
    size_t rlen;
    uint64_t old;
    rec_state s;
    tx t;
    int rc;
    if ((rc = tx_begin(st, 1, &t)))
        return rc;
    if ((rc = state_load(&t, &s)))
        goto out;
    if (len > s.max_result) {
        rc = STORE_ETOOBIG;
        goto out;
    }
    if ((rc = put_clear_old(&t, &s, name, nlen, &old))
        || (rc = evict_until(&t, &s, len, NULL)))
        goto out;
    e.version = s.next_version++;
    rec_be64(vk, e.version);
    rlen = rec_entry_encode(&e, rec);
    if ((rc = chunks_write(&t, e.version, s.chunk, data, len))
        || (rc = db_put(&t, DB_VER, vk, 8, name, nlen, MDB_APPEND))
        || (rc = db_put(&t, DB_LIVE, name, nlen, rec, rlen, 0))
        || (rc = log_change(&t, &s, name, nlen, old, e.version)))
        goto out;
    s.live_bytes += len;
    s.live_entries++;
    rc = state_save(&t, &s);
out:
    rc = store_wake_after(st, tx_end(&t, rc), s.gen);
    if (!rc && out)
        *out = e;
    return rc;
}

int store_put(store *st, const char *ns, const char *key, const void *data,
              size_t len, const store_meta *meta, store_entry *out)
{
    char name[NAME_BUF];
    size_t nlen;
    store_entry e;
    int rc, dead = 0;
    if ((rc = name_make(ns, key, name, &nlen)) || (rc = put_fill_entry(&e, meta, len)))
        return rc;
    rc = put_once(st, name, nlen, data, len, &e, out);
    /* A reader that died holding a snapshot pins pages until its slot is
     * cleared; clear dead slots and try once more before saying "full". */
    if ((rc == STORE_EFULL || rc == ENOSPC) && !mdb_reader_check(st->se->env, &dead) && dead)
        rc = put_once(st, name, nlen, data, len, &e, out);
    return rc;
}

int store_remove(store *st, const char *ns, const char *key)
{
    char name[NAME_BUF];
    size_t nlen;
    store_entry e;
    rec_state s;
    tx t;
    int rc;
    if ((rc = name_make(ns, key, name, &nlen)))
        return rc;
    if ((rc = tx_begin(st, 1, &t)))
        return rc;
    if ((rc = state_load(&t, &s)))
        return tx_end(&t, rc);
    rc = entry_load(&t, name, nlen, &e);
    if (rc == STORE_ENOTFOUND) {
        MDB_val v;
        rc = db_get(&t, DB_TOMB, name, nlen, &v) == 0 ? STORE_EEVICTED : STORE_ENOTFOUND;
        return tx_end(&t, rc);
    }
    if (rc || (rc = entry_drop(&t, &s, name, nlen, &e))
        || (rc = tomb_add(&t, &s, name, nlen, e.version, STORE_REASON_REMOVED))
        || (rc = log_change(&t, &s, name, nlen, e.version, 0)))
        return tx_end(&t, rc);
    s.removals++;
    return store_wake_after(st, tx_end(&t, state_save(&t, &s)), s.gen);
}

/* ---- reading ----------------------------------------------------------- */

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

/* ---- listing ----------------------------------------------------------- */

struct list_item {
    char key[STORE_NAME_MAX + 1];
    size_t keylen;
    store_entry e;
};

/* Reads up to LIST_BATCH live keys of NS after PREFIX+AFTER into ITEMS. */
static int list_batch(store *st, const char *prefix, size_t plen, const char *after,
                      size_t alen, int skip_equal, struct list_item *items, size_t *n)
{
    char kbuf[NAME_BUF];
    MDB_val key = {plen + alen, kbuf}, val;
    MDB_cursor *c;
    tx t;
    int rc;
    *n = 0;
    memcpy(kbuf, prefix, plen);
    memcpy(kbuf + plen, after, alen);
    if ((rc = tx_begin(st, 0, &t)))
        return rc;
    if ((rc = mdb_cursor_open(t.txn, db(&t, DB_LIVE), &c))) {
        tx_abort(&t);
        return map_err(rc);
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
                || (rc = rec_entry_decode(val.mv_data, val.mv_size, &it->e)))
                break;
            memcpy(it->key, (char *)key.mv_data + plen, it->keylen);
            it->key[it->keylen] = '\0';
            (*n)++;
        }
        rc = mdb_cursor_get(c, &key, &val, MDB_NEXT);
    }
    mdb_cursor_close(c);
    tx_abort(&t);
    if (rc == MDB_NOTFOUND)
        rc = 0;
    return map_err(rc);
}

int store_list(store *st, const char *ns, const char *after, store_list_fn fn,
               void *ctx)
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
        if ((rc = list_batch(st, prefix, plen, last, alen, skip, items, &n)))
            break;
        for (size_t i = 0; i < n && !rc; i++)
            rc = fn(items[i].key, items[i].keylen, &items[i].e, ctx);
        if (n) {
            alen = items[n - 1].keylen;
            memcpy(last, items[n - 1].key, alen);
            skip = 1;
        }
    } while (!rc && n == LIST_BATCH);
    free(items);
    return rc;
}

/* ---- figures and changes ----------------------------------------------- */

int store_stats_get(store *st, store_stats *out)
{
    rec_state s;
    mdb_filehandle_t fd;
    struct stat sb;
    tx t;
    int rc = tx_begin(st, 0, &t);
    if (rc)
        return rc;
    rc = state_load(&t, &s);
    tx_abort(&t);
    if (rc)
        return rc;
    memset(out, 0, sizeof *out);
    out->entries = s.live_entries;
    out->bytes = s.live_bytes;
    out->max_total_bytes = s.max_total;
    out->max_result_bytes = s.max_result;
    out->evictions = s.evictions;
    out->removals = s.removals;
    out->tombstones = s.tombs;
    out->generation = s.gen;
    if (!mdb_env_get_fd(st->se->env, &fd) && !fstat(fd, &sb))
        out->file_bytes = (uint64_t)sb.st_size;
    return 0;
}

uint64_t store_commit_token(store *st)
{
    /* The id of a fresh read snapshot, not mdb_env_info()'s last txnid: the
     * meta page is written before a commit is visible to new readers, so
     * the latter can run ahead of what store_changes() would then see. */
    uint64_t id;
    tx t;
    if (tx_begin(st, 0, &t))
        return 0;
    id = (uint64_t)mdb_txn_id(t.txn);
    tx_abort(&t);
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
    if ((rc = tx_begin(st, 0, &t)))
        return rc;
    if ((rc = state_load(&t, &s)))
        goto out;
    *gen = s.gen;
    if (since >= s.gen)
        goto out;
    rec_be64(k, since + 1);
    if ((rc = mdb_cursor_open(t.txn, db(&t, DB_LOG), &c))) {
        rc = map_err(rc);
        goto out;
    }
    rc = mdb_cursor_get(c, &key, &val, MDB_SET_RANGE);
    if (rc == 0 && rec_get_be64(key.mv_data) != since + 1)
        rc = STORE_ELOGGONE;
    while (rc == 0 && *n < LIST_BATCH) {
        struct change_item *it = &items[*n];
        const char *name;
        if ((rc = rec_change_decode(val.mv_data, val.mv_size, &it->old_version,
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
    rc = map_err(rc);
out:
    tx_abort(&t);
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
            rc = rec_name_split(items[i].name, items[i].len, &ns, &nslen, &key, &keylen);
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
