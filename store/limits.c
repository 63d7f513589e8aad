/* limits.c -- the store's limits and store-wide figures. */
#include "store/store_int.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The state's max_result is the limit in force, never above max_total, so
 * every reader (and every earlier version) applies it as it is. The value
 * the user configured, when a lower bound holds it down, is kept beside it
 * in "result_cfg": two le64, the configured value and the state's
 * max_result it was saved with. A writer that does not know this record
 * (an earlier version) changes max_result without it; the second value
 * then no longer matches and the record is ignored. */
#define RESULT_CFG "result_cfg"

static uint64_t result_cfg_load(const tx *t, const rec_state *s)
{
    MDB_val v;
    uint64_t cfg;
    if (store_db_get(t, DB_META, RESULT_CFG, sizeof RESULT_CFG - 1, &v) || v.mv_size != 16
        || store_rec_get_le64((const unsigned char *)v.mv_data + 8) != s->max_result)
        return s->max_result;
    cfg = store_rec_get_le64(v.mv_data);
    return cfg > s->max_result ? cfg : s->max_result;
}

static int result_cfg_save(const tx *t, const rec_state *s, uint64_t cfg)
{
    unsigned char buf[16];
    int rc;
    if (cfg <= s->max_result) {
        rc = store_db_del(t, DB_META, RESULT_CFG, sizeof RESULT_CFG - 1);
        return rc == STORE_ENOTFOUND ? 0 : rc;
    }
    store_rec_le64(buf, cfg);
    store_rec_le64(buf + 8, s->max_result);
    return store_db_put(t, DB_META, RESULT_CFG, sizeof RESULT_CFG - 1, buf, sizeof buf, 0);
}

int store_limits_get(store *st, store_limits *out)
{
    rec_state s;
    int rc = store_state_read(st, &s);
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
    store_map_base_find(st->se);
    pthread_rwlock_unlock(&st->se->resize);
    return store_map_err(rc);
}

int store_limits_set(store *st, const store_limits *lim, uint64_t *nevicted)
{
    uint64_t cfg;
    rec_state s;
    tx t;
    int rc;
    if (nevicted)
        *nevicted = 0;
    if (st->se->pid != getpid())
        return STORE_EFORKED; /* before map_fit() resizes the parent's map */
    if (st->se->flags & STORE_RDONLY)
        return STORE_ERDONLY;
    if (lim->max_total_bytes && (rc = map_fit(st, lim->max_total_bytes)))
        return rc;
    if ((rc = store_tx_begin(st, 1, &t)))
        return rc;
    if ((rc = store_state_load(&t, &s)))
        return store_tx_end(&t, rc);
    cfg = result_cfg_load(&t, &s);
    if (lim->max_total_bytes)
        s.max_total = lim->max_total_bytes;
    if (lim->max_result_bytes)
        cfg = lim->max_result_bytes;
    if (lim->max_tombstones)
        s.max_tombs = lim->max_tombstones;
    if (lim->max_result_bytes > s.max_total)
        return store_tx_end(&t, STORE_ELIMITS);
    /* The configured value holds unless the bound is lower. */
    s.max_result = cfg < s.max_total ? cfg : s.max_total;
    if ((rc = store_evict_until(&t, &s, 0, nevicted)) || (rc = store_tomb_trim(&t, &s))
        || (rc = result_cfg_save(&t, &s, cfg)))
        return store_tx_end(&t, rc);
    return store_wake_after_commit(st, store_tx_end(&t, store_state_save(&t, &s)), s.gen);
}

int store_stats_get(store *st, store_stats *out)
{
    uint64_t cfg;
    rec_state s;
    mdb_filehandle_t fd;
    struct stat sb;
    tx t;
    int rc = store_tx_begin(st, 0, &t);
    if (rc)
        return rc;
    uint64_t pending = 0;
    rc = store_state_load(&t, &s);
    cfg = rc ? 0 : result_cfg_load(&t, &s);
    if (!rc)
        rc = store_pending_count(&t, &pending);
    memset(out, 0, sizeof *out);
    if (!rc) {
        out->puts = s.next_version - 2; /* record.h: one version per put */
        rc = store_cache_figures(&t, out);
    }
    store_tx_abort(&t);
    if (rc)
        return rc;
    out->pending = pending;
    out->max_result_configured = cfg;
    out->entries = s.live_entries;
    out->bytes = s.live_bytes;
    out->max_total_bytes = s.max_total;
    out->max_result_bytes = s.max_result;
    out->evictions = s.evictions;
    out->removals = s.removals;
    out->tombstones = s.tombs;
    out->generation = s.gen;
    out->stored_bytes = s.stored;
    if (!mdb_env_get_fd(st->se->env, &fd) && !fstat(fd, &sb))
        out->file_bytes = (uint64_t)sb.st_size;
    return 0;
}
