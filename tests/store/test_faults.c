/* test_faults.c -- LMDB failures injected under the store: a commit that
 * fails (EIO, MDB_MAP_FULL), a put that fails mid-value, and a transaction
 * that cannot start because the reader table is full (MDB_READERS_FULL).
 * Each must give a clear error, change nothing, and leave the store ready
 * for the next call.
 */
/* WRAP: -Wl,--wrap=mdb_txn_commit -Wl,--wrap=mdb_put -Wl,--wrap=mdb_txn_begin */
#include "fixture.h"

#include <errno.h>
#include <lmdb.h>

int __real_mdb_txn_commit(MDB_txn *txn);
int __real_mdb_put(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data,
                   unsigned flags);
int __wrap_mdb_txn_commit(MDB_txn *txn);
int __wrap_mdb_put(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data,
                   unsigned flags);
int __real_mdb_txn_begin(MDB_env *env, MDB_txn *parent, unsigned flags, MDB_txn **txn);
int __wrap_mdb_txn_begin(MDB_env *env, MDB_txn *parent, unsigned flags, MDB_txn **txn);

static int fail_commit;     /* error the next commit returns, 0: none */
static int fail_put_after;  /* puts to let through before failing, -1: never */
static int fail_put_code;
static int fail_begin;      /* error the next mdb_txn_begin returns, 0: none */
static unsigned fail_begin_flags; /* flags of the transaction refused */

int __wrap_mdb_txn_commit(MDB_txn *txn)
{
    if (fail_commit) {
        int rc = fail_commit;
        fail_commit = 0;
        mdb_txn_abort(txn); /* a failed commit frees the transaction */
        return rc;
    }
    return __real_mdb_txn_commit(txn);
}

int __wrap_mdb_put(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data, unsigned flags)
{
    if (fail_put_after >= 0 && fail_put_after-- == 0)
        return fail_put_code;
    return __real_mdb_put(txn, dbi, key, data, flags);
}

/* LMDB answers MDB_READERS_FULL from mdb_txn_begin when every reader slot
 * of lock.mdb is taken (maxreaders) by live processes. */
int __wrap_mdb_txn_begin(MDB_env *env, MDB_txn *parent, unsigned flags, MDB_txn **txn)
{
    if (fail_begin) {
        int rc = fail_begin;
        fail_begin = 0;
        fail_begin_flags = flags;
        *txn = NULL;
        return rc;
    }
    return __real_mdb_txn_begin(env, parent, flags, txn);
}

static int setup(void **state)
{
    fail_commit = 0;
    fail_put_after = -1;
    fail_begin = 0;
    return fx_setup(state);
}

/* A snapshot of what a reader can see, to prove a failure changed nothing. */
struct snap {
    store_stats s;
    store_limits l;
};

static void snap_take(store *st, struct snap *sn)
{
    memset(sn, 0, sizeof *sn);
    assert_int_equal(store_stats_get(st, &sn->s), 0);
    assert_int_equal(store_limits_get(st, &sn->l), 0);
    sn->s.file_bytes = 0;
}

static void snap_expect_same(store *st, const struct snap *before)
{
    struct snap now;
    snap_take(st, &now);
    assert_memory_equal(&now, before, sizeof now);
}

static void put_should_report_eio_at_commit_and_change_nothing(void **state)
{
    struct fx *f = *state;
    struct snap sn;
    assert_int_equal(fx_put(f->st, NULL, "keep", 5000, 1, NULL), 0);
    snap_take(f->st, &sn);
    fail_commit = EIO;
    assert_int_equal(fx_put(f->st, NULL, "new", 9000, 2, NULL), EIO);
    assert_int_equal(store_lookup(f->st, NULL, "new", NULL, NULL), STORE_ENOTFOUND);
    snap_expect_same(f->st, &sn);
    fx_expect(f->st, NULL, "keep", 5000, 1);
    assert_int_equal(fx_put(f->st, NULL, "new", 9000, 2, NULL), 0);
    fx_expect(f->st, NULL, "new", 9000, 2);
}

static void put_should_report_map_full_at_commit(void **state)
{
    struct fx *f = *state;
    struct snap sn;
    snap_take(f->st, &sn);
    fail_commit = MDB_MAP_FULL;
    assert_int_equal(fx_put(f->st, NULL, "k", 100, 1, NULL), STORE_EFULL);
    snap_expect_same(f->st, &sn);
    assert_int_equal(fx_put(f->st, NULL, "k", 100, 1, NULL), 0);
}

static void put_failing_mid_value_should_leave_no_chunk(void **state)
{
    struct fx *f = *state;
    struct snap sn;
    store_entry e;
    assert_int_equal(fx_put(f->st, NULL, "k", 3000, 1, &e), 0);
    snap_take(f->st, &sn);
    fail_put_after = 3; /* the fourth chunk of the new value fails */
    fail_put_code = MDB_MAP_FULL;
    assert_int_equal(fx_put(f->st, NULL, "k", 10 * 4080, 2, NULL), STORE_EFULL);
    snap_expect_same(f->st, &sn);
    fx_expect(f->st, NULL, "k", 3000, 1); /* the old version is untouched */
    fail_put_after = -1;
    assert_int_equal(fx_put(f->st, NULL, "k", 10 * 4080, 2, NULL), 0);
    fx_expect(f->st, NULL, "k", 10 * 4080, 2);
}

static void put_failing_during_eviction_should_evict_nothing(void **state)
{
    struct fx *f = *state;
    struct snap sn;
    fx_limits(f->st, 200, 200);
    assert_int_equal(fx_put(f->st, NULL, "a", 100, 1, NULL), 0);
    assert_int_equal(fx_put(f->st, NULL, "b", 100, 2, NULL), 0);
    snap_take(f->st, &sn);
    fail_put_after = 0; /* the tombstone write of the eviction fails */
    fail_put_code = EIO;
    assert_int_equal(fx_put(f->st, NULL, "c", 100, 3, NULL), EIO);
    snap_expect_same(f->st, &sn);
    fx_expect(f->st, NULL, "a", 100, 1);
    fx_expect(f->st, NULL, "b", 100, 2);
}

static void remove_and_limits_should_change_nothing_on_failed_commit(void **state)
{
    struct fx *f = *state;
    struct snap sn;
    store_limits l = {50, 0, 0};
    assert_int_equal(fx_put(f->st, NULL, "a", 100, 1, NULL), 0);
    snap_take(f->st, &sn);
    fail_commit = EIO;
    assert_int_equal(store_remove(f->st, NULL, "a"), EIO);
    fail_commit = MDB_MAP_FULL;
    assert_int_equal(store_limits_set(f->st, &l, NULL), STORE_EFULL);
    snap_expect_same(f->st, &sn);
    fx_expect(f->st, NULL, "a", 100, 1);
    assert_int_equal(store_remove(f->st, NULL, "a"), 0);
}

static void readers_full_should_fail_reads_cleanly_then_work(void **state)
{
    struct fx *f = *state;
    struct snap sn;
    store_entry e;
    store_stats s;
    void *buf = NULL;
    size_t len = 0, n = 0;
    char b[16];
    assert_int_equal(fx_put(f->st, NULL, "k", 5000, 1, &e), 0);
    snap_take(f->st, &sn);
    fail_begin = MDB_READERS_FULL;
    assert_int_equal(store_lookup(f->st, NULL, "k", NULL, NULL), STORE_EREADERS);
    assert_true(fail_begin_flags & MDB_RDONLY);
    fail_begin = MDB_READERS_FULL;
    assert_int_equal(store_get(f->st, NULL, "k", &buf, &len, NULL, NULL), STORE_EREADERS);
    assert_null(buf);
    assert_int_equal(len, 0);
    fail_begin = MDB_READERS_FULL;
    assert_int_equal(store_read(f->st, e.version, 0, b, sizeof b, &n), STORE_EREADERS);
    assert_int_equal(n, 0);
    fail_begin = MDB_READERS_FULL;
    assert_int_equal(store_stats_get(f->st, &s), STORE_EREADERS);
    fail_begin = MDB_READERS_FULL;
    assert_int_equal(store_version_stat(f->st, NULL, e.version, NULL, NULL), STORE_EREADERS);
    assert_string_equal(store_strerror(STORE_EREADERS), store_strerror(STORE_EREADERS));
    assert_non_null(strstr(store_strerror(STORE_EREADERS), "reader"));
    /* The next calls work and nothing changed. */
    snap_expect_same(f->st, &sn);
    fx_expect(f->st, NULL, "k", 5000, 1);
}

static void readers_full_should_refuse_writes_and_change_nothing(void **state)
{
    struct fx *f = *state;
    struct snap sn;
    store_limits l = {50, 0, 0};
    assert_int_equal(fx_put(f->st, NULL, "a", 100, 1, NULL), 0);
    snap_take(f->st, &sn);
    fail_begin = MDB_READERS_FULL;
    assert_int_equal(fx_put(f->st, NULL, "b", 100, 2, NULL), STORE_EREADERS);
    fail_begin = MDB_READERS_FULL;
    assert_int_equal(store_remove(f->st, NULL, "a"), STORE_EREADERS);
    fail_begin = MDB_READERS_FULL;
    assert_int_equal(store_limits_set(f->st, &l, NULL), STORE_EREADERS);
    snap_expect_same(f->st, &sn);
    assert_int_equal(store_lookup(f->st, NULL, "b", NULL, NULL), STORE_ENOTFOUND);
    fx_expect(f->st, NULL, "a", 100, 1);
    assert_int_equal(fx_put(f->st, NULL, "b", 100, 2, NULL), 0);
    fx_expect(f->st, NULL, "b", 100, 2);
}

static void readers_full_at_open_should_fail_cleanly_then_open(void **state)
{
    struct fx *f = *state;
    store *other = NULL;
    /* A second process opening the store: its first transaction fails. The
     * fixture's handle holds the environment of this process, so close it
     * to make store_open() open LMDB again. */
    store_close(f->st);
    f->st = NULL;
    fail_begin = MDB_READERS_FULL;
    assert_int_equal(store_open(&other, f->dir, STORE_RDONLY), STORE_EREADERS);
    assert_null(other);
    assert_int_equal(store_open(&other, f->dir, STORE_RDONLY), 0);
    store_close(other);
    assert_int_equal(store_open(&f->st, f->dir, STORE_NOSYNC), 0);
    assert_int_equal(fx_put(f->st, NULL, "k", 10, 1, NULL), 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, fx_teardown)
int main(void)
{
    const struct CMUnitTest tests[] = {
        T(put_should_report_eio_at_commit_and_change_nothing),
        T(put_should_report_map_full_at_commit),
        T(put_failing_mid_value_should_leave_no_chunk),
        T(put_failing_during_eviction_should_evict_nothing),
        T(remove_and_limits_should_change_nothing_on_failed_commit),
        T(readers_full_should_fail_reads_cleanly_then_work),
        T(readers_full_should_refuse_writes_and_change_nothing),
        T(readers_full_at_open_should_fail_cleanly_then_open),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
