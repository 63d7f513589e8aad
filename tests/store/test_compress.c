/* test_compress.c -- compressed values (store/frame.h): exact bytes at any
 * offset and length through store_read, store_read_iov and store_get, for
 * values of compressed frames, raw frames and both; the bound counting
 * stored bytes; values that do not shrink kept raw (one piece per chunk,
 * straight from the map); the setting and the format mark; a flipped bit
 * in any row of a compressed value is STORE_ECORRUPT, never wrong bytes. */
#include "fixture.h"
#include "store/frame.h"

#include <errno.h>
#include <lmdb.h>
#include <sys/uio.h>

#define CHUNK 4076u

/* Text-like bytes: log lines with numbers, SEED varies them. */
static unsigned char *text(size_t len, unsigned seed)
{
    unsigned char *b = malloc(len + 64);
    size_t n = 0;
    unsigned x = seed;
    assert_non_null(b);
    while (n < len) {
        x = x * 1103515245u + 12345u;
        n += (size_t)snprintf((char *)b + n, 64, "line %zu: step %u of job %u ok\n", n,
                              (x >> 16) % 1000, seed);
    }
    return b;
}

/* Bytes that do not compress. */
static unsigned char *noise(size_t len, unsigned seed)
{
    unsigned char *b = malloc(len + 1);
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    assert_non_null(b);
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b[i] = (unsigned char)(x >> 32);
    }
    return b;
}

struct gathered {
    unsigned char buf[300000];
    size_t n, pieces;
};

static int gather(const struct iovec *iov, size_t iovcnt, size_t total, void *ctx)
{
    struct gathered *g = ctx;
    g->n = 0;
    for (size_t i = 0; i < iovcnt; i++) {
        memcpy(g->buf + g->n, iov[i].iov_base, iov[i].iov_len);
        g->n += iov[i].iov_len;
    }
    g->pieces = iovcnt;
    assert_int_equal(g->n, total);
    return 0;
}

/* Reads V (holding WANT, LEN bytes) at many offsets and lengths, both ways. */
static void expect_reads(store *st, uint64_t version, const unsigned char *want, size_t len)
{
    static struct gathered g;
    static unsigned char buf[300000];
    uint64_t seed = 5;
    for (int i = 0; i < 400; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t off = (seed >> 20) % (len + 1000);
        size_t l = i % 4 == 0 ? (size_t)(seed >> 40) % 200000 : (size_t)(seed >> 44) % 5000;
        size_t n, expect = off >= len ? 0 : (len - off < l ? (size_t)(len - off) : l);
        assert_int_equal(store_read(st, version, off, buf, l, &n), 0);
        assert_int_equal(n, expect);
        if (n && memcmp(buf, want + off, n))
            fail_msg("store_read at %llu len %zu: wrong bytes", (unsigned long long)off, l);
        assert_int_equal(store_read_iov(st, version, off, l, gather, &g), 0);
        assert_int_equal(g.n, expect);
        if (n && memcmp(g.buf, want + off, n))
            fail_msg("store_read_iov at %llu len %zu: wrong bytes", (unsigned long long)off, l);
    }
}

static void expect_get(store *st, const char *key, const unsigned char *want, size_t len)
{
    void *buf;
    size_t n;
    store_entry e;
    assert_int_equal(store_get(st, NULL, key, &buf, &n, &e, NULL), 0);
    assert_int_equal(n, len);
    assert_int_equal(e.size, len);
    assert_memory_equal(buf, want, len);
    free(buf);
}

static void compressed_value_should_read_exactly_at_any_offset(void **state)
{
    struct fx *f = *state;
    const size_t len = 5 * FRAME_SIZE + 12345;
    unsigned char *t = text(len, 1), *mixed = noise(len, 2);
    store_entry e, m;
    store_stats s;
    /* Mixed: frames 1 and 3 are text (compressed), the others noise (raw). */
    memcpy(mixed + FRAME_SIZE, t + FRAME_SIZE, FRAME_SIZE);
    memcpy(mixed + 3 * FRAME_SIZE, t + 3 * FRAME_SIZE, FRAME_SIZE);
    assert_int_equal(store_put(f->st, NULL, "text", t, len, NULL, &e), 0);
    assert_int_equal(store_put(f->st, NULL, "mixed", mixed, len, NULL, &m), 0);
    assert_int_equal(e.size, len);
    expect_reads(f->st, e.version, t, len);
    expect_reads(f->st, m.version, mixed, len);
    expect_get(f->st, "text", t, len);
    expect_get(f->st, "mixed", mixed, len);
    assert_int_equal(store_stats_get(f->st, &s), 0);
    assert_int_equal(s.bytes, 2 * len);
    assert_true(s.stored_bytes < len + len / 2); /* text shrank, noise did not */
    assert_true(s.stored_bytes > 4 * FRAME_SIZE - 2 * FRAME_SIZE);
    free(t);
    free(mixed);
}

static void bound_should_count_stored_bytes(void **state)
{
    struct fx *f = *state;
    const size_t len = 100000;
    store_stats s;
    char key[16];
    fx_limits(f->st, 200000, 100000);
    for (unsigned i = 0; i < 10; i++) { /* 1 MB of text in a 200 KB bound */
        unsigned char *t = text(len, i);
        snprintf(key, sizeof key, "t%u", i);
        assert_int_equal(store_put(f->st, NULL, key, t, len, NULL, NULL), 0);
        free(t);
    }
    assert_int_equal(store_stats_get(f->st, &s), 0);
    assert_int_equal(s.evictions, 0);
    assert_int_equal(s.bytes, 10 * len);
    assert_true(s.stored_bytes <= 200000);
    /* Noise does not shrink: it takes its full size and evicts. */
    unsigned char *n = noise(len, 9);
    assert_int_equal(store_put(f->st, NULL, "noise", n, len, NULL, NULL), 0);
    assert_int_equal(store_stats_get(f->st, &s), 0);
    assert_true(s.evictions > 0);
    assert_true(s.stored_bytes <= 200000);
    assert_true(s.stored_bytes >= len);
    expect_get(f->st, "noise", n, len);
    free(n);
}

static void value_that_does_not_shrink_should_stay_raw(void **state)
{
    struct fx *f = *state;
    const size_t len = 20 * CHUNK + 7;
    unsigned char *n = noise(len, 3);
    static struct gathered g;
    store_entry e;
    store_stats s;
    assert_int_equal(store_put(f->st, NULL, "n", n, len, NULL, &e), 0);
    assert_int_equal(store_stats_get(f->st, &s), 0);
    assert_int_equal(s.stored_bytes, len);
    /* Straight from the map: one piece per chunk, as before compression. */
    assert_int_equal(store_read_iov(f->st, e.version, 100, 10 * CHUNK, gather, &g), 0);
    assert_int_equal(g.pieces, 11);
    assert_memory_equal(g.buf, n + 100, 10 * CHUNK);
    /* Short values are never compressed either. */
    assert_int_equal(store_put(f->st, NULL, "short", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 30, NULL, NULL), 0);
    assert_int_equal(store_stats_get(f->st, &s), 0);
    assert_int_equal(s.stored_bytes, len + 30);
    free(n);
}

/* The state record's format field, read with LMDB directly. */
static uint64_t format_of(const char *dir)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_val k = {5, "state"}, v;
    uint64_t fmt = 0;
    assert_int_equal(mdb_env_create(&env), 0);
    mdb_env_set_maxdbs(env, 8);
    assert_int_equal(mdb_env_open(env, dir, MDB_RDONLY, 0600), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "meta", 0, &dbi), 0);
    assert_int_equal(mdb_get(txn, dbi, &k, &v), 0);
    for (int i = 7; i >= 0; i--)
        fmt = fmt << 8 | ((unsigned char *)v.mv_data)[8 + i];
    mdb_txn_abort(txn);
    mdb_env_close(env);
    return fmt;
}

static void setting_should_apply_to_later_writes_only(void **state)
{
    struct fx *f = *state;
    const size_t len = 3 * FRAME_SIZE;
    unsigned char *t = text(len, 4);
    unsigned how;
    store_stats s;
    assert_int_equal(store_compression_get(f->st, &how), 0);
    assert_int_equal(how, STORE_COMPRESS_ZSTD); /* new stores compress */
    assert_int_equal(store_compression_set(f->st, 7), EINVAL);
    assert_int_equal(store_compression_set(f->st, STORE_COMPRESS_NONE), 0);
    assert_int_equal(store_put(f->st, NULL, "raw", t, len, NULL, NULL), 0);
    assert_int_equal(store_stats_get(f->st, &s), 0);
    assert_int_equal(s.stored_bytes, len);
    store_close(f->st);
    assert_int_equal(format_of(f->dir), 1); /* nothing compressed yet: old code reads it */
    assert_int_equal(store_open(&f->st, f->dir, 0), 0);
    assert_int_equal(store_compression_get(f->st, &how), 0);
    assert_int_equal(how, STORE_COMPRESS_NONE); /* kept across a reopen */
    assert_int_equal(store_compression_set(f->st, STORE_COMPRESS_ZSTD), 0);
    assert_int_equal(store_put(f->st, NULL, "z", t, len, NULL, NULL), 0);
    assert_int_equal(store_stats_get(f->st, &s), 0);
    assert_true(s.stored_bytes < len + len / 4);
    store_close(f->st);
    assert_int_equal(format_of(f->dir), 2); /* now older code refuses the store */
    assert_int_equal(store_open(&f->st, f->dir, STORE_VERIFY), 0);
    assert_int_equal(store_compression_set(f->st, STORE_COMPRESS_NONE), 0);
    expect_get(f->st, "raw", t, len);
    expect_get(f->st, "z", t, len);
    free(t);
}

/* Flips one bit of the payload of VERSION's data row IDX at AT (LMDB
 * directly, the store closed). */
static void flip_row_bit(const char *dir, uint64_t version, uint32_t idx, size_t at)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    unsigned char k[12], *copy;
    MDB_val key = {12, k}, val;
    for (int i = 0; i < 8; i++)
        k[i] = (unsigned char)(version >> (56 - 8 * i));
    for (int i = 0; i < 4; i++)
        k[8 + i] = (unsigned char)(idx >> (24 - 8 * i));
    assert_int_equal(mdb_env_create(&env), 0);
    mdb_env_set_maxdbs(env, 8);
    assert_int_equal(mdb_env_open(env, dir, 0, 0600), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "data", 0, &dbi), 0);
    assert_int_equal(mdb_get(txn, dbi, &key, &val), 0);
    copy = malloc(val.mv_size);
    memcpy(copy, val.mv_data, val.mv_size);
    copy[at % val.mv_size] ^= 0x10;
    val.mv_data = copy;
    assert_int_equal(mdb_put(txn, dbi, &key, &val, 0), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
    free(copy);
}

static void flipped_bit_in_compressed_value_should_be_corrupt_never_wrong(void **state)
{
    struct fx *f = *state;
    const size_t len = 4 * FRAME_SIZE + 999;
    unsigned char *t = text(len, 6), *buf = malloc(len);
    store_entry e;
    void *all;
    size_t n, got;
    uint32_t nchunks = 0, tried = 0, refused = 0;
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_stat ms;
    assert_non_null(buf);
    assert_int_equal(store_put(f->st, NULL, "k", t, len, NULL, &e), 0);
    store_close(f->st);
    f->st = NULL;
    /* The data rows are this value's only: its stream chunks, then one
     * frame table row. */
    assert_int_equal(mdb_env_create(&env), 0);
    mdb_env_set_maxdbs(env, 8);
    assert_int_equal(mdb_env_open(env, f->dir, MDB_RDONLY, 0600), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "data", 0, &dbi), 0);
    assert_int_equal(mdb_stat(txn, dbi, &ms), 0);
    mdb_txn_abort(txn);
    mdb_env_close(env);
    nchunks = (uint32_t)ms.ms_entries - 1;
    assert_true(nchunks >= 1);
    for (uint32_t r = 0; r <= nchunks; r++) {
        uint32_t idx = r < nchunks ? r : FRAME_ROW_BASE;
        for (size_t at = 0; at < 4000; at += 397) {
            flip_row_bit(f->dir, e.version, idx, at);
            assert_int_equal(store_open(&f->st, f->dir, STORE_NOSYNC), 0);
            int rc = store_get(f->st, NULL, "k", &all, &got, NULL, NULL);
            tried++;
            if (rc == 0) { /* the flip fell outside the row: the bytes are right */
                assert_int_equal(got, len);
                assert_memory_equal(all, t, len);
                free(all);
            } else {
                assert_int_equal(rc, STORE_ECORRUPT);
                refused++;
            }
            /* Every frame read alone: right bytes or STORE_ECORRUPT. */
            for (uint64_t off = 0; off < len; off += FRAME_SIZE / 2) {
                rc = store_read(f->st, e.version, off, buf, 5000, &n);
                if (rc == 0)
                    assert_memory_equal(buf, t + off, n);
                else
                    assert_int_equal(rc, STORE_ECORRUPT);
            }
            store_close(f->st);
            f->st = NULL;
            flip_row_bit(f->dir, e.version, idx, at); /* undo */
        }
    }
    print_message("%u flips in %u rows: %u refused\n", tried, nchunks + 1, refused);
    assert_true(refused >= tried * 9 / 10);
    assert_int_equal(store_open(&f->st, f->dir, 0), 0);
    expect_get(f->st, "k", t, len);
    free(t);
    free(buf);
}

/* A value of more than one table row: reads that start in one row and end
 * in the next, or start at any frame of the second, locate each frame
 * (store_frame_locate, then store_frame_next for the frames after it) in the right
 * row. Frames 999 and 1001 are raw, the others compressed. */
static void reads_across_table_rows_should_be_exact(void **state)
{
    struct fx *f = *state;
    const size_t len = (FRAME_PER_ROW + 3) * (size_t)FRAME_SIZE + 777;
    const size_t edge = FRAME_PER_ROW * (size_t)FRAME_SIZE; /* row 1 starts here */
    unsigned char *t = text(len, 7), *z = noise(FRAME_SIZE, 8);
    static struct gathered g;
    store_entry e;
    memcpy(t + edge - FRAME_SIZE, z, FRAME_SIZE);
    memcpy(t + edge + FRAME_SIZE, z, FRAME_SIZE);
    assert_int_equal(store_put(f->st, NULL, "k", t, len, NULL, &e), 0);
    for (size_t from = edge - 2 * FRAME_SIZE - 100; from < len; from += FRAME_SIZE / 3) {
        size_t l = from % 2 ? 256u << 10 : 5000, want = len - from < l ? len - from : l;
        assert_int_equal(store_read_iov(f->st, e.version, from, l, gather, &g), 0);
        assert_int_equal(g.n, want);
        if (memcmp(g.buf, t + from, want))
            fail_msg("store_read_iov at %zu len %zu: wrong bytes", from, l);
    }
    expect_get(f->st, "k", t, len);
    free(t);
    free(z);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
    const struct CMUnitTest tests[] = {
        T(compressed_value_should_read_exactly_at_any_offset),
        T(bound_should_count_stored_bytes),
        T(value_that_does_not_shrink_should_stay_raw),
        T(setting_should_apply_to_later_writes_only),
        T(flipped_bit_in_compressed_value_should_be_corrupt_never_wrong),
        T(reads_across_table_rows_should_be_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
