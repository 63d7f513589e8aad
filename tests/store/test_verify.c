/* test_verify.c -- the page walk that runs before LMDB trusts data.mdb
 * (store/verify.c): a store that churned through evictions, removals and
 * tombstone trimming always passes; each kind of damage LMDB cannot survive
 * is refused at open with STORE_ECORRUPT and a reason naming the page; a
 * damaged value page header is refused before LMDB frees from it. */
#include "fixture.h"
#include "store/verify.h"

#include <fcntl.h>
#include <unistd.h>

#define PG 4096u

/* Churn under a 2 MiB bound: evictions, removals, replaced values, small
 * values inside their leaves, a data tree of two levels. */
static void churn(store *st, int rounds)
{
    char key[32];
    for (int i = 0; i < rounds; i++) {
        snprintf(key, sizeof key, "k%04d", i % 150);
        assert_int_equal(fx_put(st, "ns", key, (size_t)(i % 7 == 0 ? 40 : 1000 + (i * 977) % 60000),
                                (unsigned)(i % 200), NULL), 0); /* seeds < 200 */
        if (i % 11 == 5) {
            snprintf(key, sizeof key, "k%04d", (i * 3) % 150);
            int rc = store_remove(st, "ns", key);
            assert_true(rc == 0 || rc == STORE_ENOTFOUND || rc == STORE_EEVICTED);
        }
    }
}

/* Raw values: the damage tests below pick pages by their layout. */
static int vt_setup(void **state)
{
    fx_setup_raw(state);
    struct fx *f = *state;
    store_limits lim;
    assert_int_equal(store_limits_get(f->st, &lim), 0);
    lim.max_total_bytes = 2u << 20;
    lim.max_result_bytes = 1u << 20;
    lim.max_tombstones = 100;
    assert_int_equal(store_limits_set(f->st, &lim, NULL), 0);
    churn(f->st, 400);
    store_close(f->st);
    f->st = NULL;
    return 0;
}

/* store_verify_env on DIR with a raw environment, as store_open does. */
static int verify_dir(const char *dir, char *why, size_t len)
{
    static const char *const names[] = {"meta", "live", "ver", "data", "tomb", "tombq", "log"};
    MDB_env *env;
    int rc;
    assert_int_equal(mdb_env_create(&env), 0);
    mdb_env_set_maxdbs(env, 8);
    assert_int_equal(mdb_env_open(env, dir, MDB_RDONLY, 0600), 0);
    rc = store_verify_env(env, names, 7, 1, why, len);
    mdb_env_close(env);
    return rc;
}

static unsigned char *page_at(int fd, uint64_t pg)
{
    static unsigned char buf[PG];
    assert_int_equal(pread(fd, buf, PG, (off_t)(pg * PG)), PG);
    return buf;
}

static void page_put(int fd, uint64_t pg, const unsigned char *buf)
{
    assert_int_equal(pwrite(fd, buf, PG, (off_t)(pg * PG)), PG);
}

/* The root page of the "data" database and its depth, found from the
 * newest meta page through the catalog (a single leaf here). */
static uint64_t data_root(int fd, unsigned *depth)
{
    uint64_t t0, t1, main_root, root;
    uint16_t d;
    memcpy(&t0, page_at(fd, 0) + 144, 8);
    memcpy(&t1, page_at(fd, 1) + 144, 8);
    memcpy(&main_root, page_at(fd, t1 > t0) + 128, 8);
    unsigned char *p = page_at(fd, main_root);
    uint16_t lower;
    memcpy(&lower, p + 12, 2);
    for (unsigned i = 0; i < (lower - 16u) / 2; i++) {
        uint16_t off, ksize;
        memcpy(&off, p + 16 + 2 * i, 2);
        memcpy(&ksize, p + off + 6, 2);
        if (ksize == 4 && !memcmp(p + off + 8, "data", 4)) {
            memcpy(&d, p + off + 12 + 6, 2);
            memcpy(&root, p + off + 12 + 40, 8);
            *depth = d;
            return root;
        }
    }
    fail_msg("no 'data' in the catalog");
    return 0;
}

/* A live branch page (the data tree's root), or with LEAF its first leaf. */
static uint64_t live_page(int fd, int leaf)
{
    unsigned depth = 0;
    uint64_t pg = data_root(fd, &depth), child = 0;
    assert_true(depth >= 2);
    if (!leaf)
        return pg;
    for (unsigned level = 1; level < depth; level++) {
        unsigned char *p = page_at(fd, pg);
        uint16_t off;
        memcpy(&off, p + 16, 2);
        memcpy(&child, p + off, 6); /* lo, hi, flags: 48 bits, little-endian */
        pg = child;
    }
    return pg;
}

static int open_data(struct fx *f)
{
    char path[128];
    snprintf(path, sizeof path, "%s/data.mdb", f->dir);
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    return fd;
}

/* Opening the store after the damage: refused, with a reason that
 * contains WANT, by the full walk (the daemon's) and by the raw walk alike;
 * by the quick one (every open) too when QUICK says so, else not. */
static void expect_refused(struct fx *f, const char *want, int quick)
{
    char why[200];
    store *st;
    assert_int_equal(store_open(&st, f->dir, STORE_VERIFY), STORE_ECORRUPT);
    assert_int_equal(store_open(&st, f->dir, STORE_RDONLY | STORE_VERIFY), STORE_ECORRUPT);
    if (quick)
        assert_int_equal(store_open(&st, f->dir, STORE_RDONLY), STORE_ECORRUPT);
    else {
        assert_int_equal(store_open(&st, f->dir, STORE_RDONLY), 0);
        store_close(st);
    }
    assert_int_equal(verify_dir(f->dir, why, sizeof why), STORE_ECORRUPT);
    if (!strstr(why, want))
        fail_msg("reason '%s' does not say '%s'", why, want);
}

static void test_churned_store_passes(void **state)
{
    struct fx *f = *state;
    char why[200] = "x";
    store_stats s;
    assert_int_equal(verify_dir(f->dir, why, sizeof why), 0);
    assert_string_equal(why, "");
    /* Reopen and churn more, checking after each round of writes. */
    for (int round = 0; round < 5; round++) {
        assert_int_equal(store_open(&f->st, f->dir, STORE_NOSYNC), 0);
        churn(f->st, 120);
        assert_int_equal(store_stats_get(f->st, &s), 0);
        store_close(f->st);
        f->st = NULL;
        assert_int_equal(verify_dir(f->dir, why, sizeof why), 0);
    }
    assert_true(s.evictions > 100);
}

/* The same churn with compressed values (frame tables among the chunks),
 * under a bound small enough for them to be evicted. */
static void test_churned_compressed_store_passes(void **state)
{
    struct fx *f = *state;
    char why[200] = "x";
    store_stats s, s0;
    assert_int_equal(store_open(&f->st, f->dir, STORE_NOSYNC), 0);
    assert_int_equal(store_compression_set(f->st, STORE_COMPRESS_ZSTD), 0);
    fx_limits(f->st, 64u << 10, 64u << 10);
    assert_int_equal(store_stats_get(f->st, &s0), 0);
    for (int round = 0; round < 3; round++) {
        churn(f->st, 150);
        assert_int_equal(store_stats_get(f->st, &s), 0);
        assert_true(s.stored_bytes <= 64u << 10);
        assert_true(s.stored_bytes < s.bytes);
        store_close(f->st);
        f->st = NULL;
        assert_int_equal(verify_dir(f->dir, why, sizeof why), 0);
        assert_int_equal(store_open(&f->st, f->dir, STORE_NOSYNC | STORE_VERIFY), 0);
    }
    print_message("compressed churn: %llu evictions, %llu bytes in %llu stored\n",
                  (unsigned long long)(s.evictions - s0.evictions),
                  (unsigned long long)s.bytes, (unsigned long long)s.stored_bytes);
    /* Most drops here are replacements (150 keys), a few evictions. */
    assert_true(s.evictions > s0.evictions);
    store_close(f->st);
    f->st = NULL;
}

static void test_branch_flags(void **state)
{
    struct fx *f = *state;
    int fd = open_data(f);
    uint64_t pg = live_page(fd, 0);
    unsigned char *p = page_at(fd, pg);
    p[10] ^= 0xff; /* crashed agentlink put (SIGSEGV) before */
    page_put(fd, pg, p);
    close(fd);
    expect_refused(f, "page has flags", 1); /* the root */
}

static void test_leaf_node_pointer(void **state)
{
    struct fx *f = *state;
    int fd = open_data(f);
    uint64_t pg = live_page(fd, 1);
    unsigned char *p = page_at(fd, pg);
    p[17] ^= 0xff; /* the first node's offset: crashed agentlink get */
    page_put(fd, pg, p);
    close(fd);
    char where[32];
    snprintf(where, sizeof where, "page %llu: ", (unsigned long long)pg);
    expect_refused(f, where, 0); /* the reason depends on where it points now */
}

/* A node whose size reaches into its neighbour, still inside the page:
 * deleting it made LMDB move bytes past the page (fuzz_verify found it,
 * under ASan a heap overflow in mdb_cursor_del). */

/* The offset of the lowest node of leaf page P when it holds two nodes or
 * more and that node keeps its value inside the page, else 0. */
static uint16_t lowest_inline_node(const unsigned char *p)
{
    uint16_t lower, upper, off, flags;
    memcpy(&lower, p + 12, 2);
    memcpy(&upper, p + 14, 2);
    if (lower - 16u < 4)
        return 0;
    for (unsigned i = 0; i < (lower - 16u) / 2; i++) {
        memcpy(&off, p + 16 + 2 * i, 2);
        memcpy(&flags, p + off + 4, 2);
        if (off == upper)
            return flags == 0 ? off : 0;
    }
    return 0;
}

static void test_node_overlaps_neighbour(void **state)
{
    struct fx *f = *state;
    int fd = open_data(f);
    unsigned depth = 0;
    uint64_t root = data_root(fd, &depth), pg = 0;
    uint16_t lower, off = 0, dlo;
    unsigned char *p;
    assert_int_equal(depth, 2);
    memcpy(&lower, page_at(fd, root) + 12, 2);
    for (unsigned i = 0; !off && i < (lower - 16u) / 2; i++) {
        uint16_t at;
        p = page_at(fd, root);
        memcpy(&at, p + 16 + 2 * i, 2);
        pg = 0;
        memcpy(&pg, p + at, 6); /* the child's page number, 48 bits */
        off = lowest_inline_node(page_at(fd, pg));
    }
    assert_int_not_equal(off, 0);
    p = page_at(fd, pg);
    memcpy(&dlo, p + off, 2);
    dlo += 2; /* two bytes into the node above it */
    memcpy(p + off, &dlo, 2);
    page_put(fd, pg, p);
    close(fd);
    expect_refused(f, "overlap others", 0);
}

/* A leaf with no node: LMDB frees a leaf it empties (and a root with it),
 * and putting into one crashed it (SIGBUS: fuzz_verify). */
static void test_empty_leaf(void **state)
{
    struct fx *f = *state;
    int fd = open_data(f);
    uint64_t pg = live_page(fd, 1);
    unsigned char *p = page_at(fd, pg);
    uint16_t lower = 16;
    memcpy(p + 12, &lower, 2);
    page_put(fd, pg, p);
    close(fd);
    expect_refused(f, "leaf page with 0 keys", 0);
}

/* The newest meta page naming a page size of 0: mdb_env_open() divided by
 * it (SIGFPE: fuzz_verify). Any open refuses the store before LMDB does. */
static void test_meta_page_size(void **state)
{
    struct fx *f = *state;
    static const uint32_t sizes[] = {0, 1000, 256, 1u << 17};
    int fd = open_data(f);
    uint64_t t0, t1;
    memcpy(&t0, page_at(fd, 0) + 144, 8);
    memcpy(&t1, page_at(fd, 1) + 144, 8);
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        store *st;
        unsigned char *p = page_at(fd, t1 > t0);
        memcpy(p + 40, &sizes[i], 4);
        page_put(fd, t1 > t0, p);
        assert_int_equal(store_open(&st, f->dir, STORE_RDONLY), STORE_ECORRUPT);
        assert_int_equal(store_open(&st, f->dir, STORE_VERIFY), STORE_ECORRUPT);
    }
    close(fd);
}

static void test_free_list_flags(void **state)
{
    struct fx *f = *state;
    int fd = open_data(f);
    uint64_t t0, t1, pg;
    memcpy(&t0, page_at(fd, 0) + 16 + 128, 8);
    memcpy(&t1, page_at(fd, 1) + 16 + 128, 8);
    pg = t1 > t0;
    unsigned char *p = page_at(fd, pg);
    p[44] ^= 0xff; /* the free list's flags: an assertion in LMDB before */
    page_put(fd, pg, p);
    close(fd);
    expect_refused(f, "core database flags", 1);
}

static void test_child_claimed_twice(void **state)
{
    struct fx *f = *state;
    int fd = open_data(f);
    uint64_t pg = live_page(fd, 0);
    unsigned char *p = page_at(fd, pg);
    uint16_t n0, n1;
    memcpy(&n0, p + 16, 2);
    memcpy(&n1, p + 18, 2);
    memcpy(p + n0, p + n1, 6); /* child 0 := child 1 */
    page_put(fd, pg, p);
    close(fd);
    expect_refused(f, "already in use", 1);
}

static void test_child_outside_file(void **state)
{
    struct fx *f = *state;
    int fd = open_data(f);
    uint64_t pg = live_page(fd, 0);
    unsigned char *p = page_at(fd, pg);
    uint16_t n0;
    memcpy(&n0, p + 16, 2);
    p[n0 + 4] ^= 0x01; /* bit 32 of the child's page number */
    page_put(fd, pg, p);
    close(fd);
    expect_refused(f, "outside the file", 1);
}

/* A value page whose header names another page: dropping the value would
 * free a live page. The drop is refused; every other key still reads. */
static void test_value_header_refused_on_drop(void **state)
{
    struct fx *f = *state;
    store_entry e;
    void *buf;
    size_t len;
    assert_int_equal(store_open(&f->st, f->dir, STORE_NOSYNC), 0);
    assert_int_equal(fx_put(f->st, "ns", "victim", 9000, 250, &e), 0);
    assert_int_equal(fx_put(f->st, "ns", "other", 9000, 8, NULL), 0);
    store_close(f->st);
    f->st = NULL;
    int fd = open_data(f);
    uint64_t found = 0;
    unsigned char want[64];
    for (size_t i = 0; i < sizeof want; i++) /* fx_put's pattern for seed 250 */
        want[i] = (unsigned char)(250u * 131u + i * 7u + (i >> 8));
    for (uint64_t pg = 2; !found; pg++) { /* the first chunk of "victim" */
        unsigned char *p = page_at(fd, pg);
        if (p[10] == 4 && !memcmp(p + 16 + 4, want, sizeof want)) {
            found = pg;
            p[0] ^= 0x01; /* its page number */
            page_put(fd, pg, p);
        }
    }
    close(fd);
    assert_int_equal(store_open(&f->st, f->dir, STORE_NOSYNC), 0); /* the walk skips values */
    assert_int_equal(store_remove(f->st, "ns", "victim"), STORE_ECORRUPT);
    assert_int_equal(store_get(f->st, "ns", "victim", &buf, &len, NULL, NULL), 0);
    free(buf);
    fx_expect(f->st, "ns", "other", 9000, 8);
    assert_int_equal(fx_put(f->st, "ns", "victim", 10, 9, NULL), STORE_ECORRUPT);
    assert_int_equal(store_remove(f->st, "ns", "other"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_churned_store_passes, vt_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_churned_compressed_store_passes, vt_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(test_branch_flags, vt_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_leaf_node_pointer, vt_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_node_overlaps_neighbour, vt_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_empty_leaf, vt_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_meta_page_size, vt_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_free_list_flags, vt_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_child_claimed_twice, vt_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_child_outside_file, vt_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_value_header_refused_on_drop, vt_setup,
                                        fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
