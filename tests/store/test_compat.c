/* test_compat.c -- a store made by the code before compression (format 1,
 * tests/store/data/v1-store/data.mdb, see make_v1_store.c) opens and works
 * with today's code: every entry reads back exactly, tombstones and limits
 * hold, new writes land and the old entries still read. Run from the
 * repository's root (tests/run.sh does). */
#include "tests/store/fixture.h"
#include "tests/store/data/v1_content.h"

#define V1_FILE "tests/store/data/v1-store/data.mdb"

struct cfx {
    char base[64], dir[96];
};

/* Copies the checked-in data.mdb into a fresh directory (never opened in place). */
static int cfx_setup(void **state)
{
    struct cfx *c = calloc(1, sizeof *c);
    char cmd[256];
    assert_non_null(c);
    snprintf(c->base, sizeof c->base, "/tmp/offloadfs-compat.XXXXXX");
    assert_non_null(mkdtemp(c->base));
    snprintf(c->dir, sizeof c->dir, "%s/store", c->base);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cp " V1_FILE " '%s/data.mdb'", c->dir, c->dir);
    assert_int_equal(system(cmd), 0);
    *state = c;
    return 0;
}

static int cfx_teardown(void **state)
{
    struct cfx *c = *state;
    fx_rmrf(c->base);
    free(c);
    return 0;
}

static void expect_item(store *st, const struct v1_item *it)
{
    void *buf;
    size_t got;
    store_entry e;
    assert_int_equal(store_get(st, it->ns, it->key, &buf, &got, &e, NULL), 0);
    assert_int_equal(got, it->len);
    assert_int_equal(e.size, it->len);
    assert_int_equal(e.original_size, it->len);
    assert_int_equal(e.has_tool, it->tool != NULL);
    assert_string_equal(e.tool, it->tool ? it->tool : "");
    for (size_t i = 0; i < got; i++)
        if (((unsigned char *)buf)[i] != (it->noise ? v1_noise_byte(it->seed, i)
                                                    : v1_text_byte(it->seed, i)))
            fail_msg("%s: byte %zu differs", it->key, i);
    free(buf);
    /* A read at an odd offset gives the same bytes. */
    if (got > 4100) {
        unsigned char part[300];
        size_t n;
        assert_int_equal(store_read(st, e.version, 4000, part, sizeof part, &n), 0);
        assert_int_equal(n, sizeof part);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(part[i], it->noise ? v1_noise_byte(it->seed, 4000 + i)
                                                : v1_text_byte(it->seed, 4000 + i));
    }
}

static void old_store_should_read_every_entry_exactly(void **state)
{
    struct cfx *c = *state;
    store *st;
    store_stats s;
    store_limits l;
    store_tomb t;
    uint64_t total = 0;
    assert_int_equal(store_open(&st, c->dir, STORE_VERIFY), 0);
    for (size_t i = 0; i < V1_LIVE; i++) {
        expect_item(st, &v1_live[i]);
        total += v1_live[i].len;
    }
    assert_int_equal(store_lookup(st, "default", V1_EVICTED, NULL, &t), STORE_EEVICTED);
    assert_int_equal(t.reason, STORE_REASON_EVICTED);
    assert_int_equal(store_lookup(st, "default", V1_REMOVED, NULL, &t), STORE_EEVICTED);
    assert_int_equal(t.reason, STORE_REASON_REMOVED);
    assert_int_equal(store_stats_get(st, &s), 0);
    assert_int_equal(s.entries, V1_LIVE);
    assert_int_equal(s.bytes, total);
    assert_int_equal(s.evictions, 1);
    assert_int_equal(s.removals, 1);
    /* Its puts, counted by code that kept no count of them (make_v1_store.c:
     * three, then one per live entry). */
    assert_int_equal(s.puts, 3 + V1_LIVE);
    assert_int_equal(store_limits_get(st, &l), 0);
    assert_int_equal(l.max_total_bytes, V1_MAX_TOTAL);
    store_close(st);
}

/* As the daemon opens it: read-only, every page checked. */
static void old_store_should_read_through_a_readonly_handle(void **state)
{
    struct cfx *c = *state;
    store *st;
    store_stats s;
    assert_int_equal(store_open(&st, c->dir, STORE_RDONLY | STORE_VERIFY), 0);
    for (size_t i = 0; i < V1_LIVE; i++)
        expect_item(st, &v1_live[i]);
    assert_int_equal(store_stats_get(st, &s), 0);
    assert_int_equal(s.stored_bytes, s.bytes);
    assert_int_equal(store_put(st, NULL, "x", "y", 1, NULL, NULL), STORE_ERDONLY);
    store_close(st);
}

static void old_store_should_take_new_writes_and_keep_old_ones(void **state)
{
    struct cfx *c = *state;
    store *st;
    store_stats s;
    size_t len = 40000;
    unsigned char *buf = malloc(len);
    void *back;
    size_t got;
    assert_non_null(buf);
    for (size_t i = 0; i < len; i++)
        buf[i] = v1_text_byte(11, i);
    store_stats before;
    unsigned how;
    assert_int_equal(store_open(&st, c->dir, STORE_NOSYNC), 0);
    /* A store from before compression compresses its later writes. */
    assert_int_equal(store_compression_get(st, &how), 0);
    assert_int_equal(how, STORE_COMPRESS_ZSTD);
    assert_int_equal(store_stats_get(st, &before), 0);
    assert_int_equal(before.stored_bytes, before.bytes); /* all raw so far */
    assert_int_equal(store_put(st, "default", "new.log", buf, len, NULL, NULL), 0);
    assert_int_equal(store_stats_get(st, &s), 0);
    assert_int_equal(s.bytes, before.bytes + len);
    assert_true(s.stored_bytes < before.stored_bytes + len / 4); /* compressed */
    assert_int_equal(store_get(st, "default", "new.log", &back, &got, NULL, NULL), 0);
    assert_int_equal(got, len);
    assert_memory_equal(back, buf, len);
    free(back);
    /* Replacing an old entry works, and the others still read. */
    assert_int_equal(store_put(st, "default", "replaced", buf, 100, NULL, NULL), 0);
    for (size_t i = 0; i < V1_LIVE; i++)
        if (strcmp(v1_live[i].key, "replaced"))
            expect_item(st, &v1_live[i]);
    assert_int_equal(store_remove(st, "other", "page.html"), 0);
    assert_int_equal(store_stats_get(st, &s), 0);
    assert_true(s.stored_bytes <= V1_MAX_TOTAL);
    assert_int_equal(s.puts, before.puts + 2); /* the count goes on */
    assert_int_equal(s.removals, before.removals + 1);
    store_close(st);
    /* And it all survives a reopen with the page check. */
    assert_int_equal(store_open(&st, c->dir, STORE_VERIFY), 0);
    assert_int_equal(store_get(st, "default", "new.log", &back, &got, NULL, NULL), 0);
    assert_int_equal(got, len);
    assert_memory_equal(back, buf, len);
    free(back);
    expect_item(st, &v1_live[0]);
    store_close(st);
    free(buf);
}

/* An old store has no cached copies and no cache counters: it reports
 * zeros, takes a copy, and a later write evicts the copy before any of its
 * old entries, which all still read. */
static void old_store_should_take_a_cached_copy_and_evict_it_first(void **state)
{
    struct cfx *c = *state;
    store *st;
    store_stats before, s;
    store_limits lim;
    char etag[STORE_ETAG_MAX + 1];
    store_entry e;
    assert_int_equal(store_open(&st, c->dir, STORE_NOSYNC), 0);
    assert_int_equal(store_stats_get(st, &before), 0);
    assert_int_equal(before.cached_entries, 0);
    assert_int_equal(before.cache_hits, 0);
    assert_int_equal(before.cache_misses, 0);
    assert_int_equal(store_compression_set(st, STORE_COMPRESS_NONE), 0);
    assert_int_equal(store_limits_get(st, &lim), 0);
    /* a copy that fills what is left of the bound, less 100 bytes */
    size_t len = (size_t)(lim.max_total_bytes - before.stored_bytes - 100);
    if (len > lim.max_total_bytes / 2)
        len = (size_t)(lim.max_total_bytes / 2);
    unsigned char *buf = malloc(len);
    assert_non_null(buf);
    for (size_t i = 0; i < len; i++)
        buf[i] = v1_text_byte(12, i);
    assert_int_equal(store_put_cached(st, "default", "copy", buf, len, NULL, "\"v1\"", &e), 0);
    assert_int_equal(store_cached(st, e.version, etag, sizeof etag), 1);
    assert_string_equal(etag, "\"v1\"");
    assert_int_equal(store_stats_get(st, &s), 0);
    assert_int_equal(s.cached_entries, 1);
    assert_int_equal(s.cached_bytes, len);
    assert_int_equal(s.puts, before.puts);
    /* a write that needs room: the copy goes, the old entries stay */
    assert_int_equal(store_put(st, "default", "later", buf, 200, NULL, NULL), 0);
    assert_int_equal(store_lookup(st, "default", "copy", NULL, NULL), STORE_EEVICTED);
    for (size_t i = 0; i < V1_LIVE; i++)
        expect_item(st, &v1_live[i]);
    assert_int_equal(store_stats_get(st, &s), 0);
    assert_int_equal(s.cached_entries, 0);
    store_close(st);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(old_store_should_read_every_entry_exactly,
                                        cfx_setup, cfx_teardown),
        cmocka_unit_test_setup_teardown(old_store_should_read_through_a_readonly_handle,
                                        cfx_setup, cfx_teardown),
        cmocka_unit_test_setup_teardown(old_store_should_take_new_writes_and_keep_old_ones,
                                        cfx_setup, cfx_teardown),
        cmocka_unit_test_setup_teardown(old_store_should_take_a_cached_copy_and_evict_it_first,
                                        cfx_setup, cfx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
