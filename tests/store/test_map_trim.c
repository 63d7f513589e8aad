/* test_map_trim.c -- store_map_trim(): the pages of data.mdb that reads
 * and writes mapped are given back to the kernel, so the process's resident
 * memory holds none of them, while every byte still reads back. The same
 * work without the call keeps them mapped: that is what the measure tells
 * apart. */
#include "fixture.h"

enum { MIB = 1024 * 1024, LEN = 16 * MIB, PIECE = 128 * 1024 };

/* The pages of files this process has mapped, in KiB (a store on tmpfs
 * counts as shared memory). */
static long mapped_file_kib(void)
{
    char line[256];
    long kib, total = 0;
    FILE *f = fopen("/proc/self/status", "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "RssFile: %ld kB", &kib) == 1 || sscanf(line, "RssShmem: %ld kB", &kib) == 1)
            total += kib;
    fclose(f);
    return total;
}

static int setup(void **state)
{
    fx_setup(state);
    struct fx *f = *state;
    /* Raw values: the bytes read are the pages mapped. Room for two. */
    assert_int_equal(store_compression_set(f->st, STORE_COMPRESS_NONE), 0);
    fx_limits(f->st, 2ull * LEN + 4 * MIB, LEN);
    return 0;
}

/* Reads VERSION whole in PIECE-byte reads and checks it is the pattern of
 * SEED (fx_put()). */
static void read_all(store *st, uint64_t version, unsigned seed)
{
    unsigned char *buf = malloc(PIECE);
    assert_non_null(buf);
    for (size_t off = 0; off < LEN; off += PIECE) {
        size_t n = 0;
        assert_int_equal(store_read(st, version, off, buf, PIECE, &n), 0);
        assert_int_equal(n, PIECE);
        for (size_t i = 0; i < PIECE; i++) {
            size_t at = off + i;
            if (buf[i] != (unsigned char)(seed * 131u + at * 7u + (at >> 8)))
                fail_msg("byte %zu is %u", at, buf[i]);
        }
    }
    free(buf);
}

/* Reads a 16 MiB value whole, then writes two more that evict it (the
 * eviction goes through its pages), calling store_map_trim() after each
 * step when TRIM: returns the most mapped file memory the process held
 * after a step beyond what it held before. */
static long growth(struct fx *f, int trim)
{
    store_entry e;
    assert_int_equal(fx_put(f->st, NULL, "big", LEN, 3, &e), 0);
    if (trim)
        store_map_trim(f->st);
    long before = mapped_file_kib();
    read_all(f->st, e.version, 3);
    if (trim)
        store_map_trim(f->st);
    long after_reads = mapped_file_kib();
    read_all(f->st, e.version, 3); /* the bytes are all there still */
    assert_int_equal(fx_put(f->st, NULL, "second", LEN, 4, NULL), 0);
    assert_int_equal(fx_put(f->st, NULL, "third", LEN, 5, NULL), 0);
    assert_int_equal(store_lookup(f->st, NULL, "big", NULL, NULL), STORE_EEVICTED);
    if (trim)
        store_map_trim(f->st);
    long after_writes = mapped_file_kib();
    print_message("mapped file memory: %ld kB before, %ld after the reads, %ld after the writes\n",
                  before, after_reads, after_writes);
    return (after_reads > after_writes ? after_reads : after_writes) - before;
}

static void a_trim_should_give_the_pages_back(void **state)
{
    /* 16 MiB read twice, 16 MiB evicted: nothing of it stays mapped. */
    assert_true(growth(*state, 1) < 1024);
}

static void without_a_trim_the_pages_should_stay_mapped(void **state)
{
    /* The control: the same work keeps most of the value mapped. */
    assert_true(growth(*state, 0) > 12 * 1024);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_trim_should_give_the_pages_back, setup, fx_teardown),
        cmocka_unit_test_setup_teardown(without_a_trim_the_pages_should_stay_mapped, setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
