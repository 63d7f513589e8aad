/* test_killpoints.c -- a writer killed with SIGKILL at every step of a put:
 * before each LMDB write of the transaction (eviction, every chunk, the
 * version row, the entry, the log, the state), just before the commit and
 * just after it. The kill is driven by wrapping LMDB calls in the child, not
 * by luck. Afterwards the key holds its old value or its new one, whole; no
 * row is orphaned; the bound and the totals hold; the next write succeeds.
 * Once with raw values, once compressed (stream chunks and frame table).
 */
/* WRAP: -Wl,--wrap=mdb_txn_commit -Wl,--wrap=mdb_put */
#include "fixture.h"

#include <lmdb.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHUNK 4076u
#define NEW_LEN (5 * CHUNK + 17)

int __real_mdb_txn_commit(MDB_txn *txn);
int __real_mdb_put(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data,
                   unsigned flags);
int __wrap_mdb_txn_commit(MDB_txn *txn);
int __wrap_mdb_put(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data,
                   unsigned flags);

static int kill_at_put = -1; /* die before this mdb_put call (0-based) */
static int kill_at_commit;   /* 1: before the commit, 2: after it */
static int puts_seen;

int __wrap_mdb_put(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data, unsigned flags)
{
    if (puts_seen++ == kill_at_put)
        raise(SIGKILL);
    return __real_mdb_put(txn, dbi, key, data, flags);
}

int __wrap_mdb_txn_commit(MDB_txn *txn)
{
    int rc;
    if (kill_at_commit == 1)
        raise(SIGKILL);
    rc = __real_mdb_txn_commit(txn);
    if (kill_at_commit == 2)
        raise(SIGKILL);
    return rc;
}

/* Counts the puts one replacing put makes, so every one can be a kill point. */
static int count_puts(struct fx *f)
{
    int n;
    assert_int_equal(fx_put(f->st, NULL, "probe", 1024, 3, NULL), 0);
    puts_seen = 0;
    assert_int_equal(fx_put(f->st, NULL, "probe", NEW_LEN, 3, NULL), 0);
    n = puts_seen;
    assert_int_equal(store_remove(f->st, NULL, "probe"), 0);
    return n;
}

/* Runs one put of "k" in a child that dies at the chosen point. */
static void put_and_die(const char *dir, int at_put, int at_commit)
{
    pid_t pid = fork();
    int status;
    assert_true(pid >= 0);
    if (pid == 0) {
        store *st;
        if (store_open(&st, dir, 0)) /* commits too: arm the kill after it */
            _exit(2);
        kill_at_put = at_put;
        kill_at_commit = at_commit;
        puts_seen = 0;
        fx_put(st, NULL, "k", NEW_LEN, 2, NULL);
        _exit(3); /* not reached: the kill point is always hit */
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFSIGNALED(status))
        fail_msg("child at put %d commit %d exited %d", at_put, at_commit, WEXITSTATUS(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);
}

/* Checks that "k" is old (1 KiB of seed 1) or new, whole, and the totals hold. */
static int check_after(struct fx *f)
{
    store_entry e;
    store_stats s;
    int is_new;
    assert_int_equal(store_lookup(f->st, NULL, "k", &e, NULL), 0);
    is_new = e.size == NEW_LEN;
    if (is_new)
        fx_expect(f->st, NULL, "k", NEW_LEN, 2);
    else
        fx_expect(f->st, NULL, "k", 1024, 1);
    fx_expect(f->st, NULL, "other", 1000, 5);
    assert_int_equal(store_stats_get(f->st, &s), 0);
    assert_int_equal(s.entries, 2);
    assert_int_equal(s.bytes, 1000 + e.size);
    assert_true(s.stored_bytes <= s.max_total_bytes);
    return is_new;
}

static void counted_rows(const char *dir, size_t *vers, size_t *chunks)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi ver, data;
    MDB_stat sv, sd;
    assert_int_equal(mdb_env_create(&env), 0);
    mdb_env_set_maxdbs(env, 8);
    assert_int_equal(mdb_env_open(env, dir, MDB_RDONLY, 0600), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "ver", 0, &ver), 0);
    assert_int_equal(mdb_dbi_open(txn, "data", 0, &data), 0);
    assert_int_equal(mdb_stat(txn, ver, &sv), 0);
    assert_int_equal(mdb_stat(txn, data, &sd), 0);
    *vers = sv.ms_entries;
    *chunks = sd.ms_entries;
    mdb_txn_abort(txn);
    mdb_env_close(env);
}

/* The old value, and an older entry; the bound just fits all three. */
static void put_old(struct fx *f)
{
    fx_limits(f->st, 1000 + 1024 + NEW_LEN, NEW_LEN);
    assert_int_equal(fx_put(f->st, NULL, "other", 1000, 5, NULL), 0);
    assert_int_equal(fx_put(f->st, NULL, "k", 1024, 1, NULL), 0);
    store_close(f->st);
    f->st = NULL;
}

/* Data rows after put_old() (*OLD) and after the new value's put (*NEW). */
static void rows_expected(struct fx *f, size_t *old_rows, size_t *new_rows)
{
    size_t vers;
    put_old(f);
    counted_rows(f->dir, &vers, old_rows);
    assert_int_equal(store_open(&f->st, f->dir, 0), 0);
    assert_int_equal(fx_put(f->st, NULL, "k", NEW_LEN, 2, NULL), 0);
    store_close(f->st);
    counted_rows(f->dir, &vers, new_rows);
    assert_int_equal(store_open(&f->st, f->dir, 0), 0);
}

static void killed_puts(void **state, unsigned compression)
{
    struct fx *f = *state;
    int nputs, old_seen = 0, new_seen = 0;
    size_t old_rows, new_rows;
    store_close(f->st);
    f->st = NULL;
    assert_int_equal(store_open(&f->st, f->dir, 0), 0); /* durable, like agents */
    assert_int_equal(store_compression_set(f->st, compression), 0);
    nputs = count_puts(f);
    rows_expected(f, &old_rows, &new_rows);
    if (compression == STORE_COMPRESS_NONE) {
        assert_true(nputs >= 6 + 4); /* 6 chunks plus ver, live, log, state, codec rows */
        assert_int_equal(old_rows, 2);
        assert_int_equal(new_rows, 1 + 6);
    } else {
        assert_true(nputs >= 2 + 4); /* a chunk and a frame table at least */
        assert_int_equal(old_rows, 2 * 2); /* each: one chunk, one table row */
        assert_true(new_rows >= 2 + 2 && new_rows < 1 + 6);
    }
    for (int point = 0; point < nputs + 2; point++) {
        size_t vers, chunks;
        int is_new;
        put_old(f);
        if (point < nputs)
            put_and_die(f->dir, point, 0);
        else
            put_and_die(f->dir, -1, point - nputs + 1);
        assert_int_equal(store_open(&f->st, f->dir, 0), 0);
        is_new = check_after(f);
        new_seen += is_new;
        old_seen += !is_new;
        store_close(f->st);
        f->st = NULL;
        counted_rows(f->dir, &vers, &chunks);
        assert_int_equal(vers, 2);
        assert_int_equal(chunks, is_new ? new_rows : old_rows);
        assert_int_equal(store_open(&f->st, f->dir, 0), 0);
    }
    print_message("%d kill points: %d left the old value, %d the new one\n", nputs + 2,
                  old_seen, new_seen);
    assert_int_equal(new_seen, 1); /* only the kill after the commit */
    assert_int_equal(fx_put(f->st, NULL, "after", 10, 7, NULL), 0);
    fx_expect(f->st, NULL, "after", 10, 7);
}

static void put_killed_at_every_step_should_leave_old_or_new_whole(void **state)
{
    killed_puts(state, STORE_COMPRESS_NONE);
}

static void compressed_put_killed_at_every_step_should_leave_old_or_new_whole(void **state)
{
    killed_puts(state, STORE_COMPRESS_ZSTD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(put_killed_at_every_step_should_leave_old_or_new_whole,
                                        fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(
            compressed_put_killed_at_every_step_should_leave_old_or_new_whole, fx_setup,
            fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
