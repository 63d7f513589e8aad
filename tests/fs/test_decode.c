/* test_decode.c -- the daemon's decoder (fs/decode.c) over a real store,
 * without a mount: exact bytes at any offset from decoded frames, read
 * sequentially (the worker decoding ahead), at random and from several
 * threads at once; raw values left to the plain path; a version replaced
 * or evicted while the worker decodes ahead of its reader gives the old
 * bytes or STORE_EGONE, never another version's. */
#include "../store/fixture.h"
#include "fs/fs.h"
#include "fs/decode.h"

#include <errno.h>
#include <pthread.h>

#define MIB (1u << 20)

/* Text of LEN bytes whose every line names TAG: any mix of two shows. */
static unsigned char *text(size_t len, unsigned tag)
{
    unsigned char *b = malloc(len + 80);
    size_t n = 0;
    assert_non_null(b);
    while (n < len)
        n += (size_t)snprintf((char *)b + n, 80, "version %u, line at %zu: %u widgets\n", tag,
                              n, (unsigned)(n * 2654435761u) % 1000u);
    return b;
}

struct got {
    unsigned char *buf;
    size_t n;
};

static int gather(const struct iovec *iov, size_t iovcnt, size_t total, void *ctx)
{
    struct got *g = ctx;
    g->n = 0;
    for (size_t i = 0; i < iovcnt; i++) {
        memcpy(g->buf + g->n, iov[i].iov_base, iov[i].iov_len);
        g->n += iov[i].iov_len;
    }
    return g->n == total ? 0 : EFAULT;
}

struct dfx {
    struct fx *f;
    struct ofs fs;
};

static int setup(void **state)
{
    struct dfx *d = calloc(1, sizeof *d);
    void *fst;
    assert_non_null(d);
    fx_setup(&fst);
    d->f = fst;
    d->fs.st = d->f->st;
    d->fs.ns = "default";
    d->fs.decode_ahead = MIB;
    assert_int_equal(ofs_decode_start(&d->fs), 0);
    assert_non_null(d->fs.decode);
    *state = d;
    return 0;
}

static int teardown(void **state)
{
    struct dfx *d = *state;
    void *fst = d->f;
    ofs_decode_stop(&d->fs);
    assert_null(d->fs.decode);
    fx_teardown(&fst);
    free(d);
    return 0;
}

/* Reads LEN bytes at OFF of VERSION through the decoder into G; returns
 * its code, and asserts the read was served (compressed value). */
static int dread(struct ofs *fs, uint64_t version, uint64_t off, size_t len, struct got *g)
{
    int served = 0, rc = ofs_decode_read(fs, version, off, len, gather, g, &served);
    assert_int_equal(served, 1);
    return rc;
}

static void expect_bytes(const struct got *g, const unsigned char *want, size_t wlen,
                         uint64_t off, size_t len)
{
    size_t expect = off >= wlen ? 0 : wlen - off < len ? (size_t)(wlen - off) : len;
    assert_int_equal(g->n, expect);
    if (expect && memcmp(g->buf, want + off, expect))
        fail_msg("read at %llu len %zu: wrong bytes", (unsigned long long)off, len);
}

static void decode_read_should_give_exact_bytes_sequential_and_random(void **state)
{
    struct dfx *d = *state;
    size_t len = 3 * MIB + 12345;
    unsigned char *want = text(len, 1);
    struct got g = {malloc(2 * MIB), 0};
    store_entry e;
    uint64_t seed = 7, off = 0;
    assert_int_equal(store_put(d->f->st, NULL, "k", want, len, NULL, &e), 0);
    /* Sequential, in the kernel's request sizes: the worker decodes ahead. */
    while (off < len) {
        size_t n = off < MIB ? 4096u << (off / (256u << 10)) : 256u << 10;
        assert_int_equal(dread(&d->fs, e.version, off, n, &g), 0);
        expect_bytes(&g, want, len, off, n);
        off += g.n;
    }
    /* At random, across frame edges, up to 1 MiB. */
    for (int i = 0; i < 500; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        size_t n = i % 5 == 0 ? (size_t)(seed >> 44) % MIB + 1 : (size_t)(seed >> 50) % 9000 + 1;
        off = (seed >> 20) % len;
        assert_int_equal(dread(&d->fs, e.version, off, n, &g), 0);
        expect_bytes(&g, want, len, off, n);
    }
    free(g.buf);
    free(want);
}

static void decode_read_should_read_values_smaller_than_a_ring(void **state)
{
    struct dfx *d = *state;
    static const size_t sizes[] = {300, 65536, 65537, 200000};
    struct got g = {malloc(300000), 0};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        unsigned char *want = text(sizes[i], 10 + (unsigned)i);
        char key[16];
        store_entry e;
        snprintf(key, sizeof key, "s%zu", i);
        assert_int_equal(store_put(d->f->st, NULL, key, want, sizes[i], NULL, &e), 0);
        uint64_t size;
        uint32_t fsz;
        assert_int_equal(store_version_frames(d->f->st, e.version, &size, &fsz), 0);
        assert_int_equal(fsz, 65536); /* compressed: the decoder serves it */
        for (uint64_t off = 0; off < sizes[i]; off += 4093) {
            assert_int_equal(dread(&d->fs, e.version, off, 70000, &g), 0);
            expect_bytes(&g, want, sizes[i], off, 70000);
        }
        free(want);
    }
    free(g.buf);
}

static void decode_read_should_leave_raw_values_and_the_end_to_the_plain_way(void **state)
{
    struct dfx *d = *state;
    unsigned char *want = text(200000, 2), buf[16];
    struct got g = {buf, 0};
    store_entry e;
    int served = 1;
    assert_int_equal(store_compression_set(d->f->st, STORE_COMPRESS_NONE), 0);
    assert_int_equal(store_put(d->f->st, NULL, "raw", want, 200000, NULL, &e), 0);
    assert_int_equal(ofs_decode_read(&d->fs, e.version, 0, 16, gather, &g, &served), 0);
    assert_int_equal(served, 0);
    assert_int_equal(store_compression_set(d->f->st, STORE_COMPRESS_ZSTD), 0);
    assert_int_equal(store_put(d->f->st, NULL, "z", want, 200000, NULL, &e), 0);
    served = 1;
    assert_int_equal(ofs_decode_read(&d->fs, e.version, 200000, 16, gather, &g, &served), 0);
    assert_int_equal(served, 0); /* at the end: the plain way answers 0 bytes */
    served = 1;
    assert_int_equal(ofs_decode_read(&d->fs, 999999, 0, 16, gather, &g, &served), 0);
    assert_int_equal(served, 0); /* no such version: the plain way says which error */
    free(want);
}

struct reader {
    struct ofs *fs;
    uint64_t version;
    const unsigned char *want;
    size_t len;
    unsigned seed;
    int bad;
};

static void *read_thread(void *arg)
{
    struct reader *r = arg;
    struct got g = {malloc(MIB), 0};
    uint64_t x = r->seed, off = 0;
    for (int i = 0; i < 300 && !r->bad; i++) {
        int served = 0;
        size_t n = 128u << 10;
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        if (r->seed % 2 == 0 || i % 8 == 0) /* the odd ones mostly sequential */
            off = (x >> 20) % r->len;
        int rc = ofs_decode_read(r->fs, r->version, off, n, gather, &g, &served);
        if (!rc && !served) /* frames held by another reader: op_read's way */
            rc = store_read_iov(r->fs->st, r->version, off, n, gather, &g);
        if (rc)
            r->bad = 1;
        else if (g.n != (r->len - off < n ? r->len - off : n) ||
                 memcmp(g.buf, r->want + off, g.n))
            r->bad = 1;
        off = off + g.n >= r->len ? 0 : off + g.n;
    }
    free(g.buf);
    return NULL;
}

static void decode_read_should_serve_threads_at_once(void **state)
{
    struct dfx *d = *state;
    size_t len = 2 * MIB + 777;
    unsigned char *want[2] = {text(len, 3), text(len, 4)};
    struct reader r[6];
    pthread_t t[6];
    store_entry e[2];
    assert_int_equal(store_put(d->f->st, NULL, "a", want[0], len, NULL, &e[0]), 0);
    assert_int_equal(store_put(d->f->st, NULL, "b", want[1], len, NULL, &e[1]), 0);
    for (unsigned i = 0; i < 6; i++) {
        r[i] = (struct reader){&d->fs, e[i % 2].version, want[i % 2], len, i + 1, 0};
        assert_int_equal(pthread_create(&t[i], NULL, read_thread, &r[i]), 0);
    }
    for (unsigned i = 0; i < 6; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(r[i].bad, 0);
    }
    free(want[0]);
    free(want[1]);
}

/* Reads VERSION (holding OLD) on from OFF in 64 KiB reads after it went:
 * every read is OLD's bytes or STORE_EGONE, and STORE_EGONE comes before
 * the end (frames past the window cannot be decoded any more). */
static void expect_old_or_gone(struct ofs *fs, uint64_t version, const unsigned char *old,
                               size_t len, uint64_t off)
{
    struct got g = {malloc(64u << 10), 0};
    int rc = 0;
    while (off < len && !(rc = dread(fs, version, off, 64u << 10, &g))) {
        expect_bytes(&g, old, len, off, 64u << 10);
        off += g.n;
    }
    assert_int_equal(rc, STORE_EGONE);
    assert_true(off < len);
    free(g.buf);
}

static void decode_read_should_give_old_bytes_or_gone_when_replaced_or_evicted(void **state)
{
    struct dfx *d = *state;
    size_t len = 3 * MIB;
    unsigned char *v1 = text(len, 5), *v2 = text(len, 6);
    struct got g = {malloc(64u << 10), 0};
    store_entry e1, e2, e3;
    store_limits lim;
    assert_int_equal(store_put(d->f->st, NULL, "k", v1, len, NULL, &e1), 0);
    assert_int_equal(store_put(d->f->st, NULL, "old", v2, len, NULL, &e3), 0);
    /* Two sequential reads: the worker decodes the next 1 MiB meanwhile. */
    for (uint64_t off = 0; off < (128u << 10); off += 64u << 10) {
        assert_int_equal(dread(&d->fs, e1.version, off, 64u << 10, &g), 0);
        expect_bytes(&g, v1, len, off, 64u << 10);
        assert_int_equal(dread(&d->fs, e3.version, off, 64u << 10, &g), 0);
        expect_bytes(&g, v2, len, off, 64u << 10);
    }
    /* Replaced: "k" is a new version; e1's reader reads on. */
    assert_int_equal(store_put(d->f->st, NULL, "k", v2, len, NULL, &e2), 0);
    expect_old_or_gone(&d->fs, e1.version, v1, len, 128u << 10);
    assert_int_equal(dread(&d->fs, e2.version, 0, 64u << 10, &g), 0);
    expect_bytes(&g, v2, len, 0, 64u << 10);
    /* Evicted: a bound lowered under "old" (the oldest) drops it. */
    assert_int_equal(store_limits_get(d->f->st, &lim), 0);
    lim.max_total_bytes = 64u << 10;
    lim.max_result_bytes = 0;
    assert_int_equal(store_limits_set(d->f->st, &lim, NULL), 0);
    assert_int_equal(store_version_stat(d->f->st, NULL, e3.version, NULL, NULL), STORE_EGONE);
    expect_old_or_gone(&d->fs, e3.version, v2, len, 128u << 10);
    free(g.buf);
    free(v1);
    free(v2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(decode_read_should_give_exact_bytes_sequential_and_random,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(decode_read_should_read_values_smaller_than_a_ring,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            decode_read_should_leave_raw_values_and_the_end_to_the_plain_way, setup, teardown),
        cmocka_unit_test_setup_teardown(decode_read_should_serve_threads_at_once, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            decode_read_should_give_old_bytes_or_gone_when_replaced_or_evicted, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
