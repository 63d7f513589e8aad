/* test_unmap.c -- STORE_UNMAP: the pages of data.mdb that reads and writes
 * went through are given back to the kernel, so the process's resident
 * memory follows what it uses, while every byte still reads back. The
 * same work on a handle without the flag keeps them mapped: that is what
 * the measure can tell apart. */
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

static int setup_with(void **state, unsigned flags)
{
    fx_setup_flags(state, STORE_NOSYNC | flags);
    struct fx *f = *state;
    /* Raw values: the bytes read are the pages mapped. Room for two. */
    assert_int_equal(store_compression_set(f->st, STORE_COMPRESS_NONE), 0);
    fx_limits(f->st, 2ull * LEN + 4 * MIB, LEN);
    return 0;
}

static int setup_unmap(void **state)
{
    return setup_with(state, STORE_UNMAP);
}

static int setup_plain(void **state)
{
    return setup_with(state, 0);
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

/* Reads a 16 MiB value whole, twice, then writes two more that evict it
 * (the eviction goes through its pages): returns how much more mapped
 * file memory the process holds than before the reads. */
static long growth_after_reads_and_eviction(struct fx *f)
{
    store_entry e;
    assert_int_equal(fx_put(f->st, NULL, "big", LEN, 3, &e), 0);
    long before = mapped_file_kib();
    read_all(f->st, e.version, 3);
    read_all(f->st, e.version, 3);
    long after_reads = mapped_file_kib();
    assert_int_equal(fx_put(f->st, NULL, "second", LEN, 4, NULL), 0);
    assert_int_equal(fx_put(f->st, NULL, "third", LEN, 5, NULL), 0);
    assert_int_equal(store_lookup(f->st, NULL, "big", NULL, NULL), STORE_EEVICTED);
    long after_writes = mapped_file_kib();
    print_message("mapped file memory: %ld kB before, %ld after the reads, %ld after the writes\n",
                  before, after_reads, after_writes);
    return (after_reads > after_writes ? after_reads : after_writes) - before;
}

static void reads_and_writes_should_give_their_pages_back(void **state)
{
    /* 16 MiB read twice, 16 MiB evicted: what stays is the pages the
     * lookups went through (about 1 MiB here, where a fault can map a
     * 2 MiB folio whole). */
    assert_true(growth_after_reads_and_eviction(*state) < 4 * 1024);
}

static void without_the_flag_the_pages_should_stay_mapped(void **state)
{
    /* The control: the same work keeps most of the value mapped. */
    assert_true(growth_after_reads_and_eviction(*state) > 12 * 1024);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(reads_and_writes_should_give_their_pages_back, setup_unmap,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(without_the_flag_the_pages_should_stay_mapped, setup_plain,
                                        fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
