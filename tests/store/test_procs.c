/* test_procs.c -- the store under several real processes: concurrent
 * writers against a small bound, writers killed with SIGKILL mid-write, and
 * the file size after churning ten times the bound through the store.
 *
 * Keys describe their own content ("s<seed>-<len>") so any live entry can
 * be checked byte for byte without knowing which writer made it. */
#include "fixture.h"

#include <errno.h>
#include <lmdb.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BOUND (256u << 10)
#define CHUNK 4076u

static unsigned rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 8) & 0xffffff;
}

/* A writer: NPUTS puts of random sizes into namespace "w<id>", some over
 * the result bound. Exits 0 when every put ended as expected. */
static int writer(const char *dir, int id, int nputs, unsigned flags)
{
    store *st;
    char ns[16], key[64];
    unsigned seed = (unsigned)id * 7919u + (unsigned)getpid();
    int orc = store_open(&st, dir, flags);
    if (orc) {
        fprintf(stderr, "writer %d: open: %s\n", id, store_strerror(orc));
        return 2;
    }
    snprintf(ns, sizeof ns, "w%d", id);
    for (int i = 0; i < nputs; i++) {
        unsigned s = rnd(&seed);
        size_t len = rnd(&seed) % 12 == 0 ? BOUND / 4 + 1 + s % 1000 : s % (BOUND / 8);
        int rc;
        snprintf(key, sizeof key, "s%u-%zu", s, len);
        rc = fx_put(st, ns, key, len, s, NULL);
        if (rc != (len > BOUND / 4 ? STORE_ETOOBIG : 0)) {
            fprintf(stderr, "writer %d: put %s: %s\n", id, key, store_strerror(rc));
            return 1;
        }
    }
    store_close(st);
    return 0;
}

struct verify {
    store *st;
    const char *ns;
    uint64_t bytes, entries;
};

/* Checks one live entry against the content its key describes. */
static int verify_fn(const char *key, size_t keylen, const store_entry *e, void *ctx)
{
    struct verify *v = ctx;
    unsigned seed;
    size_t len;
    (void)keylen;
    assert_int_equal(sscanf(key, "s%u-%zu", &seed, &len), 2);
    assert_int_equal(e->size, len);
    fx_expect(v->st, v->ns, key, len, seed);
    v->bytes += e->size;
    v->entries++;
    return 0;
}

/* Lists and checks every namespace w0..w(N-1); asserts the store's totals
 * equal the live entries and fit the bound; returns the live bytes. */
static uint64_t verify_all(store *st, int nwriters)
{
    struct verify v = {st, NULL, 0, 0};
    store_stats s;
    char ns[16];
    for (int i = 0; i < nwriters; i++) {
        snprintf(ns, sizeof ns, "w%d", i);
        v.ns = ns;
        assert_int_equal(store_list(st, ns, NULL, verify_fn, &v), 0);
    }
    assert_int_equal(store_stats_get(st, &s), 0);
    assert_int_equal(s.bytes, v.bytes);
    assert_int_equal(s.entries, v.entries);
    assert_true(s.stored_bytes <= s.max_total_bytes);
    return v.bytes;
}

/* No chunk or version row outlives its entry: counts rows with LMDB
 * directly (the store handle must be closed). */
static void verify_no_orphans(const char *dir, uint64_t live_bytes, uint64_t entries,
                              uint64_t min_chunks, uint64_t max_chunks)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi ver, data;
    MDB_stat sv, sd;
    (void)live_bytes;
    assert_int_equal(mdb_env_create(&env), 0);
    mdb_env_set_maxdbs(env, 8);
    assert_int_equal(mdb_env_open(env, dir, MDB_RDONLY, 0600), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "ver", 0, &ver), 0);
    assert_int_equal(mdb_dbi_open(txn, "data", 0, &data), 0);
    assert_int_equal(mdb_stat(txn, ver, &sv), 0);
    assert_int_equal(mdb_stat(txn, data, &sd), 0);
    assert_int_equal(sv.ms_entries, entries);
    assert_in_range(sd.ms_entries, min_chunks, max_chunks);
    mdb_txn_abort(txn);
    mdb_env_close(env);
}

struct chunks {
    uint64_t n;
};

static int chunk_count_fn(const char *key, size_t keylen, const store_entry *e, void *ctx)
{
    (void)key, (void)keylen;
    ((struct chunks *)ctx)->n += (e->size + CHUNK - 1) / CHUNK;
    return 0;
}

static uint64_t count_chunks(store *st, int nwriters)
{
    struct chunks c = {0};
    char ns[16];
    for (int i = 0; i < nwriters; i++) {
        snprintf(ns, sizeof ns, "w%d", i);
        assert_int_equal(store_list(st, ns, NULL, chunk_count_fn, &c), 0);
    }
    return c.n;
}

static void concurrent_writers(void **state, int compressed)
{
    struct fx *f = *state;
    enum { NW = 8, PUTS = 150 };
    pid_t pids[NW];
    uint64_t last = 0, checks = 0;
    int running = NW, status;
    fx_limits(f->st, BOUND, BOUND / 4);
    store_close(f->st);
    f->st = NULL;
    for (int i = 0; i < NW; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0)
            _exit(writer(f->dir, i, PUTS, 0));
    }
    assert_int_equal(store_open(&f->st, f->dir, 0), 0);
    /* The checker: after every commit it sees, the bound holds. */
    while (running > 0) {
        uint64_t tok = store_commit_token(f->st);
        if (tok != last) {
            store_stats s;
            assert_int_equal(store_stats_get(f->st, &s), 0);
            assert_true(s.stored_bytes <= BOUND);
            last = tok;
            checks++;
        }
        pid_t p = waitpid(-1, &status, WNOHANG);
        if (p > 0) {
            assert_true(WIFEXITED(status));
            assert_int_equal(WEXITSTATUS(status), 0);
            running--;
        }
    }
    print_message("checker saw %llu commits of %d writers x %d puts\n",
                  (unsigned long long)checks, NW, PUTS);
    assert_true(checks > 10);
    uint64_t bytes = verify_all(f->st, NW);
    assert_true(bytes > 0);
    store_stats s;
    assert_int_equal(store_stats_get(f->st, &s), 0);
    /* Raw: exactly the chunks the sizes imply; compressed: at least a
     * chunk and a frame table per value, at most the raw count plus one. */
    uint64_t chunks = count_chunks(f->st, NW);
    if (compressed)
        assert_true(s.stored_bytes < s.bytes);
    store_close(f->st);
    f->st = NULL;
    verify_no_orphans(f->dir, bytes, s.entries, compressed ? s.entries : chunks,
                      compressed ? chunks + s.entries : chunks);
    assert_int_equal(store_open(&f->st, f->dir, 0), 0);
}

static void concurrent_writers_should_keep_bound_after_every_commit(void **state)
{
    concurrent_writers(state, 0);
}

/* The same with compressed values: the bound counts stored bytes. */
static void concurrent_compressed_writers_should_keep_bound_after_every_commit(void **state)
{
    struct fx *f = *state;
    assert_int_equal(store_compression_set(f->st, STORE_COMPRESS_ZSTD), 0);
    concurrent_writers(state, 1);
}

static void killed_writers_should_leave_whole_entries_or_none(void **state)
{
    struct fx *f = *state;
    enum { NW = 4, ROUNDS = 25 };
    unsigned seed = 12345;
    fx_limits(f->st, BOUND, BOUND / 4);
    store_close(f->st);
    f->st = NULL;
    f->st = NULL;
    for (int r = 0; r < ROUNDS; r++) {
        pid_t pids[NW];
        for (int i = 0; i < NW; i++) {
            pids[i] = fork();
            assert_true(pids[i] >= 0);
            if (pids[i] == 0)
                _exit(writer(f->dir, i, 1000000, 0));
        }
        struct timespec ts = {0, (long)(rnd(&seed) % 40 + 2) * 1000000L};
        nanosleep(&ts, NULL);
        for (int i = 0; i < NW; i++) {
            kill(pids[i], SIGKILL);
            assert_int_equal(waitpid(pids[i], NULL, 0), pids[i]);
        }
    }
    assert_int_equal(store_open(&f->st, f->dir, 0), 0);
    uint64_t bytes = verify_all(f->st, NW);
    store_stats s;
    assert_int_equal(store_stats_get(f->st, &s), 0);
    uint64_t chunks = count_chunks(f->st, NW);
    store_close(f->st);
    f->st = NULL;
    verify_no_orphans(f->dir, bytes, s.entries, chunks, chunks);
    assert_int_equal(store_open(&f->st, f->dir, 0), 0);
    assert_int_equal(fx_put(f->st, "w0", "after", 100, 9, NULL), 0);
    fx_expect(f->st, "w0", "after", 100, 9);
    print_message("after %d rounds of SIGKILL: %llu entries, %llu bytes, whole\n", ROUNDS,
                  (unsigned long long)s.entries, (unsigned long long)bytes);
}

static void churn_of_ten_bounds_should_keep_file_under_1_5x(void **state)
{
    struct fx *f = *state;
    const uint64_t bound = 64ull << 20;
    uint64_t written = 0;
    unsigned seed = 99;
    store_stats s;
    char key[64];
    store_close(f->st);
    f->st = NULL;
    assert_int_equal(store_open(&f->st, f->dir, STORE_NOSYNC), 0);
    fx_limits(f->st, bound, 8ull << 20);
    for (int i = 0; written < 10 * bound; i++) {
        /* Sizes spread from a few bytes to 8 MiB, skewed small like tool output. */
        unsigned r = rnd(&seed);
        size_t len = (size_t)(r % 4 == 0 ? r % (8u << 20) : r % (256u << 10));
        snprintf(key, sizeof key, "k%d", i % 500);
        assert_int_equal(fx_put(f->st, NULL, key, len, r, NULL), 0);
        written += len;
    }
    assert_int_equal(store_stats_get(f->st, &s), 0);
    print_message("churn: wrote %.1f MiB through a %.0f MiB bound; data.mdb %.1f MiB = "
                  "%.3fx the bound (live %.1f MiB)\n",
                  (double)written / 1048576, (double)bound / 1048576,
                  (double)s.file_bytes / 1048576, (double)s.file_bytes / (double)bound,
                  (double)s.bytes / 1048576);
    assert_true(s.stored_bytes <= bound);
    assert_true((double)s.file_bytes <= 1.5 * (double)bound);
}

/* Opening the store while another process grows its file: every open
 * must see a whole snapshot, never "damaged" (the page check once measured
 * the file before pinning its snapshot, and a commit in between made the
 * snapshot look longer than the file). */
static void opens_during_growth_should_never_see_damage(void **state)
{
    struct fx *f = *state;
    enum { OPENS = 400 };
    int status, refused = 0;
    fx_limits(f->st, 64ull << 20, 1ull << 20);
    store_close(f->st);
    f->st = NULL;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        store *st;
        char key[32];
        if (store_open(&st, f->dir, STORE_NOSYNC))
            _exit(2);
        /* Each put adds pages at the end of the file until it is killed. */
        for (unsigned i = 0;; i++) {
            snprintf(key, sizeof key, "g%u", i);
            if (fx_put(st, NULL, key, 40000 + i % 4096, i, NULL))
                _exit(1);
        }
    }
    for (int i = 0; i < OPENS; i++) {
        store *st;
        int rc = store_open(&st, f->dir, 0);
        if (rc) {
            fprintf(stderr, "open %d: %s\n", i, store_strerror(rc));
            refused++;
            continue;
        }
        store_close(st);
    }
    kill(pid, SIGKILL);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(refused, 0);
    assert_int_equal(store_open(&f->st, f->dir, 0), 0);
}

/* Raw values: the checks count chunks, and the churn needs bytes that
 * do not shrink to reach ten bounds (compressed values: test_compress.c). */
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup_raw, fx_teardown)
int main(void)
{
    const struct CMUnitTest tests[] = {
        T(concurrent_writers_should_keep_bound_after_every_commit),
        T(concurrent_compressed_writers_should_keep_bound_after_every_commit),
        T(killed_writers_should_leave_whole_entries_or_none),
        T(churn_of_ten_bounds_should_keep_file_under_1_5x),
        T(opens_during_growth_should_never_see_damage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
