/* test_store.c -- unit tests of the store: names, open, put/get, the bound,
 * limits, tombstones, versions, listing, figures and the change log. */
#include "fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHUNK 4076u

/* ---- names ------------------------------------------------------------ */

static void name_check_should_accept_plain_and_unicode_keys(void **state)
{
    (void)state;
    const char *ok[] = {"a", "call_123", "toolu_01ABC-xyz", "a.b", "a..", "é中文🙂",
                        "with space", "x~!@#$%^&*()"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        assert_int_equal(store_name_check(ok[i], strlen(ok[i])), 0);
}

static void name_check_should_refuse_empty(void **state)
{
    (void)state;
    assert_int_equal(store_name_check("", 0), STORE_ENAME_EMPTY);
}

static void name_check_should_refuse_over_255_bytes(void **state)
{
    char k[512];
    (void)state;
    memset(k, 'k', sizeof k);
    assert_int_equal(store_name_check(k, 255), 0);
    assert_int_equal(store_name_check(k, 256), STORE_ENAME_LONG);
    assert_int_equal(store_name_check(k, 511), STORE_ENAME_LONG);
    assert_int_equal(store_name_check(k, 512), STORE_ENAME_LONG);
}

static void name_check_should_refuse_slash(void **state)
{
    (void)state;
    assert_int_equal(store_name_check("a/b", 3), STORE_ENAME_SLASH);
    assert_int_equal(store_name_check("/", 1), STORE_ENAME_SLASH);
    assert_int_equal(store_name_check("../x", 4), STORE_ENAME_SLASH);
}

static void name_check_should_refuse_nul_and_control_bytes(void **state)
{
    (void)state;
    assert_int_equal(store_name_check("a\0b", 3), STORE_ENAME_CTRL);
    assert_int_equal(store_name_check("a\x01", 2), STORE_ENAME_CTRL);
    assert_int_equal(store_name_check("a\x1f", 2), STORE_ENAME_CTRL);
    assert_int_equal(store_name_check("a\nb", 3), STORE_ENAME_CTRL);
    assert_int_equal(store_name_check("a\x7f", 2), STORE_ENAME_CTRL);
}

static void name_check_should_refuse_leading_dot(void **state)
{
    (void)state;
    assert_int_equal(store_name_check(".", 1), STORE_ENAME_DOT);
    assert_int_equal(store_name_check("..", 2), STORE_ENAME_DOT);
    assert_int_equal(store_name_check(".hidden", 7), STORE_ENAME_DOT);
}

static void name_check_should_refuse_invalid_utf8(void **state)
{
    (void)state;
    assert_int_equal(store_name_check("a\xff", 2), STORE_ENAME_UTF8);
    assert_int_equal(store_name_check("\xc0\x80", 2), STORE_ENAME_UTF8);     /* overlong */
    assert_int_equal(store_name_check("\xed\xa0\x80", 3), STORE_ENAME_UTF8); /* surrogate */
    assert_int_equal(store_name_check("\xe2\x82", 2), STORE_ENAME_UTF8);     /* cut short */
    assert_int_equal(store_name_check("\xf4\x90\x80\x80", 4), STORE_ENAME_UTF8); /* > U+10FFFF */
}

/* ---- opening ---------------------------------------------------------- */

static void open_should_create_store_with_private_modes(void **state)
{
    struct fx *f = *state;
    char p[128];
    struct stat sb;
    store_limits l;
    assert_int_equal(stat(f->dir, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0700);
    snprintf(p, sizeof p, "%s/data.mdb", f->dir);
    assert_int_equal(stat(p, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    snprintf(p, sizeof p, "%s/lock.mdb", f->dir);
    assert_int_equal(stat(p, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    assert_int_equal(store_limits_get(f->st, &l), 0);
    assert_int_equal(l.max_total_bytes, 1ull << 30);
    assert_int_equal(l.max_result_bytes, 64ull << 20);
    assert_int_equal(l.max_tombstones, 100000);
}

static void open_should_refuse_missing_dir_or_empty_dir(void **state)
{
    struct fx *f = *state;
    store *st = NULL;
    char p[128];
    snprintf(p, sizeof p, "%s/nope", f->dir);
    assert_int_equal(store_open(&st, p, 0), ENOENT);
    assert_null(st);
    assert_int_equal(mkdir(p, 0700), 0);
    assert_int_equal(store_open(&st, p, 0), STORE_ENOSTORE);
    assert_int_equal(store_open(&st, p, STORE_RDONLY), STORE_ENOSTORE);
    snprintf(p, sizeof p, "%s/data.mdb", f->dir);
    assert_int_equal(store_open(&st, p, 0), ENOTDIR);
}

static void open_should_refuse_foreign_data_file(void **state)
{
    struct fx *f = *state;
    store *st = NULL;
    char p[128];
    int fd;
    snprintf(p, sizeof p, "%s/foreign", f->dir);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/foreign/data.mdb", f->dir);
    fd = open(p, O_CREAT | O_WRONLY, 0600);
    assert_true(fd >= 0);
    for (int i = 0; i < 64; i++)
        assert_int_equal(write(fd, "this is not an lmdb file, not at all.....\n", 42), 42);
    close(fd);
    snprintf(p, sizeof p, "%s/foreign", f->dir);
    assert_int_equal(store_open(&st, p, 0), STORE_ECORRUPT);
    assert_int_equal(store_open(&st, p, STORE_CREATE), STORE_ECORRUPT);
    assert_null(st);
}

static void open_twice_should_share_one_environment(void **state)
{
    struct fx *f = *state;
    store *b = NULL;
    assert_int_equal(store_open(&b, f->dir, 0), 0);
    assert_int_equal(fx_put(f->st, NULL, "k", 10, 1, NULL), 0);
    fx_expect(b, NULL, "k", 10, 1);
    store_close(b);
    fx_expect(f->st, NULL, "k", 10, 1);
    store_close(NULL);
}

static void open_rdonly_should_refuse_writes(void **state)
{
    struct fx *f = *state;
    store *ro = NULL;
    assert_int_equal(fx_put(f->st, NULL, "k", 1, 1, NULL), 0);
    store_close(f->st); /* the registry would share the writable env */
    f->st = NULL;
    assert_int_equal(store_open(&ro, f->dir, STORE_RDONLY), 0);
    fx_expect(ro, NULL, "k", 1, 1); /* reads work on a handle opened read-only */
    assert_int_equal(fx_put(ro, NULL, "k", 1, 1, NULL), STORE_ERDONLY);
    assert_int_equal(store_remove(ro, NULL, "k"), STORE_ERDONLY);
    store_close(ro);
    assert_int_equal(store_open(&f->st, f->dir, 0), 0);
}

/* ---- put and get ------------------------------------------------------ */

static void put_should_store_bytes_and_metadata(void **state)
{
    struct fx *f = *state;
    store_meta m = {"web_search", 1700000000123456789ull, 999, 1};
    store_entry e, g;
    void *buf;
    size_t len;
    assert_int_equal(store_put(f->st, NULL, "k1", "hello\nworld\n", 12, &m, &e), 0);
    assert_true(e.version >= 2);
    assert_int_equal(store_get(f->st, "default", "k1", &buf, &len, &g, NULL), 0);
    assert_int_equal(len, 12);
    assert_memory_equal(buf, "hello\nworld\n", 12);
    free(buf);
    assert_int_equal(g.version, e.version);
    assert_int_equal(g.size, 12);
    assert_int_equal(g.created_ns, 1700000000123456789ull);
    assert_int_equal(g.original_size, 999);
    assert_int_equal(g.truncated, 1);
    assert_int_equal(g.has_tool, 1);
    assert_string_equal(g.tool, "web_search");
}

static void put_without_meta_should_record_now_and_no_tool(void **state)
{
    struct fx *f = *state;
    store_entry e;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    assert_int_equal(fx_put(f->st, NULL, "k", 5, 1, NULL), 0);
    assert_int_equal(store_lookup(f->st, NULL, "k", &e, NULL), 0);
    assert_int_equal(e.has_tool, 0);
    assert_string_equal(e.tool, "");
    assert_int_equal(e.original_size, 5);
    assert_int_equal(e.truncated, 0);
    assert_true(e.created_ns / 1000000000ull + 5 >= (uint64_t)ts.tv_sec);
}

static void put_should_round_trip_chunk_edge_sizes(void **state)
{
    struct fx *f = *state;
    size_t sizes[] = {0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK, 1000003};
    char key[32];
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        snprintf(key, sizeof key, "size-%zu", sizes[i]);
        assert_int_equal(fx_put(f->st, NULL, key, sizes[i], (unsigned)i, NULL), 0);
    }
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        snprintf(key, sizeof key, "size-%zu", sizes[i]);
        fx_expect(f->st, NULL, key, sizes[i], (unsigned)i);
    }
}

static void put_should_replace_key_with_new_version(void **state)
{
    struct fx *f = *state;
    store_entry a, b;
    store_stats s;
    unsigned char buf[16];
    size_t n;
    assert_int_equal(fx_put(f->st, NULL, "k", 100, 1, &a), 0);
    assert_int_equal(fx_put(f->st, NULL, "k", 50, 2, &b), 0);
    assert_true(b.version > a.version);
    fx_expect(f->st, NULL, "k", 50, 2);
    assert_int_equal(store_read(f->st, a.version, 0, buf, sizeof buf, &n), STORE_EGONE);
    assert_int_equal(n, 0);
    assert_int_equal(store_stats_get(f->st, &s), 0);
    assert_int_equal(s.entries, 1);
    assert_int_equal(s.bytes, 50);
    assert_int_equal(s.evictions, 0);
    assert_int_equal(s.tombstones, 0);
}

static void put_should_refuse_value_over_max_result(void **state)
{
    struct fx *f = *state;
    store_stats s;
    fx_limits(f->st, 1000, 100);
    assert_int_equal(fx_put(f->st, NULL, "keep", 100, 1, NULL), 0);
    assert_int_equal(fx_put(f->st, NULL, "big", 101, 2, NULL), STORE_ETOOBIG);
    assert_int_equal(fx_put(f->st, NULL, "keep", 101, 3, NULL), STORE_ETOOBIG);
    assert_int_equal(store_lookup(f->st, NULL, "big", NULL, NULL), STORE_ENOTFOUND);
    fx_expect(f->st, NULL, "keep", 100, 1);
    assert_int_equal(store_stats_get(f->st, &s), 0);
    assert_int_equal(s.bytes, 100);
}

static void put_should_refuse_bad_names_and_change_nothing(void **state)
{
    struct fx *f = *state;
    store_stats s;
    char longk[300];
    memset(longk, 'x', 256);
    longk[256] = '\0';
    assert_int_equal(fx_put(f->st, NULL, "", 1, 1, NULL), STORE_ENAME_EMPTY);
    assert_int_equal(fx_put(f->st, NULL, "a/b", 1, 1, NULL), STORE_ENAME_SLASH);
    assert_int_equal(fx_put(f->st, NULL, "..", 1, 1, NULL), STORE_ENAME_DOT);
    assert_int_equal(fx_put(f->st, NULL, "a\tb", 1, 1, NULL), STORE_ENAME_CTRL);
    assert_int_equal(fx_put(f->st, NULL, "\xfe", 1, 1, NULL), STORE_ENAME_UTF8);
    assert_int_equal(fx_put(f->st, NULL, longk, 1, 1, NULL), STORE_ENAME_LONG);
    assert_int_equal(fx_put(f->st, "n/s", "k", 1, 1, NULL), STORE_ENAME_SLASH);
    assert_int_equal(fx_put(f->st, ".ns", "k", 1, 1, NULL), STORE_ENAME_DOT);
    assert_int_equal(store_stats_get(f->st, &s), 0);
    assert_int_equal(s.entries, 0);
    assert_int_equal(s.generation, 0);
}

static void put_should_refuse_tool_name_over_255_bytes(void **state)
{
    struct fx *f = *state;
    char tool[300];
    store_meta m = {tool, 0, 0, 0};
    memset(tool, 't', 256);
    tool[256] = '\0';
    assert_int_equal(store_put(f->st, NULL, "k", "x", 1, &m, NULL), EINVAL);
    tool[255] = '\0';
    assert_int_equal(store_put(f->st, NULL, "k", "x", 1, &m, NULL), 0);
}

/* ---- the bound -------------------------------------------------------- */

static void put_should_fill_bound_exactly_without_eviction(void **state)
{
    struct fx *f = *state;
    store_stats s;
    fx_limits(f->st, 300, 300);
    assert_int_equal(fx_put(f->st, NULL, "a", 100, 1, NULL), 0);
    assert_int_equal(fx_put(f->st, NULL, "b", 100, 2, NULL), 0);
    assert_int_equal(fx_put(f->st, NULL, "c", 100, 3, NULL), 0);
    assert_int_equal(store_stats_get(f->st, &s), 0);
    assert_int_equal(s.bytes, 300);
    assert_int_equal(s.entries, 3);
    assert_int_equal(s.evictions, 0);
}

static void put_should_evict_oldest_when_one_byte_over(void **state)
{
    struct fx *f = *state;
    store_stats s;
    store_tomb t;
    fx_limits(f->st, 300, 300);
    assert_int_equal(fx_put(f->st, NULL, "a", 100, 1, NULL), 0);
    assert_int_equal(fx_put(f->st, NULL, "b", 100, 2, NULL), 0);
    assert_int_equal(fx_put(f->st, NULL, "c", 100, 3, NULL), 0);
    assert_int_equal(fx_put(f->st, NULL, "d", 1, 4, NULL), 0);
    assert_int_equal(store_lookup(f->st, NULL, "a", NULL, &t), STORE_EEVICTED);
    assert_int_equal(t.reason, STORE_REASON_EVICTED);
    fx_expect(f->st, NULL, "b", 100, 2);
    fx_expect(f->st, NULL, "d", 1, 4);
    assert_int_equal(store_stats_get(f->st, &s), 0);
    assert_int_equal(s.bytes, 201);
    assert_int_equal(s.evictions, 1);
}

static void put_should_accept_value_equal_to_bound(void **state)
{
    struct fx *f = *state;
    store_stats s;
    fx_limits(f->st, 300, 300);
    assert_int_equal(fx_put(f->st, NULL, "a", 100, 1, NULL), 0);
    assert_int_equal(fx_put(f->st, NULL, "b", 100, 2, NULL), 0);
    assert_int_equal(fx_put(f->st, NULL, "all", 300, 3, NULL), 0);
    assert_int_equal(store_stats_get(f->st, &s), 0);
    assert_int_equal(s.bytes, 300);
    assert_int_equal(s.entries, 1);
    assert_int_equal(s.evictions, 2);
    fx_expect(f->st, NULL, "all", 300, 3);
}

static void put_should_evict_across_namespaces_in_write_order(void **state)
{
    struct fx *f = *state;
    fx_limits(f->st, 300, 300);
    assert_int_equal(fx_put(f->st, "ns1", "x", 100, 1, NULL), 0);
    assert_int_equal(fx_put(f->st, "ns2", "x", 100, 2, NULL), 0);
    assert_int_equal(fx_put(f->st, "ns1", "y", 100, 3, NULL), 0);
    assert_int_equal(fx_put(f->st, "ns2", "y", 150, 4, NULL), 0);
    assert_int_equal(store_lookup(f->st, "ns1", "x", NULL, NULL), STORE_EEVICTED);
    assert_int_equal(store_lookup(f->st, "ns2", "x", NULL, NULL), STORE_EEVICTED);
    fx_expect(f->st, "ns1", "y", 100, 3);
    fx_expect(f->st, "ns2", "y", 150, 4);
    assert_int_equal(store_lookup(f->st, "ns3", "y", NULL, NULL), STORE_ENOTFOUND);
}

static void replace_should_make_key_newest(void **state)
{
    struct fx *f = *state;
    fx_limits(f->st, 300, 300);
    assert_int_equal(fx_put(f->st, NULL, "a", 100, 1, NULL), 0);
    assert_int_equal(fx_put(f->st, NULL, "b", 100, 2, NULL), 0);
    assert_int_equal(fx_put(f->st, NULL, "c", 100, 3, NULL), 0);
    assert_int_equal(fx_put(f->st, NULL, "a", 100, 5, NULL), 0); /* now newest */
    assert_int_equal(fx_put(f->st, NULL, "d", 100, 6, NULL), 0);
    assert_int_equal(store_lookup(f->st, NULL, "b", NULL, NULL), STORE_EEVICTED);
    fx_expect(f->st, NULL, "a", 100, 5);
    fx_expect(f->st, NULL, "c", 100, 3);
}

/* ---- limits ----------------------------------------------------------- */

static void limits_set_should_evict_at_once_when_lowered(void **state)
{
    struct fx *f = *state;
    store_limits l = {250, 0, 0};
    store_stats s;
    uint64_t n = 99;
    for (unsigned i = 0; i < 5; i++) {
        char k[8];
        snprintf(k, sizeof k, "k%u", i);
        assert_int_equal(fx_put(f->st, NULL, k, 100, i, NULL), 0);
    }
    assert_int_equal(store_limits_set(f->st, &l, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(store_stats_get(f->st, &s), 0);
    assert_int_equal(s.bytes, 200);
    assert_int_equal(s.max_total_bytes, 250);
    assert_int_equal(s.max_result_bytes, 250); /* lowered with the bound */
    assert_int_equal(store_lookup(f->st, NULL, "k2", NULL, NULL), STORE_EEVICTED);
    fx_expect(f->st, NULL, "k3", 100, 3);
}

static void limits_set_should_keep_the_configured_result_under_a_lower_bound(void **state)
{
    struct fx *f = *state;
    store_limits low = {1u << 20, 0, 0}, high = {1u << 30, 0, 0}, l;
    store_stats s;
    assert_int_equal(store_limits_set(f->st, &low, NULL), 0);
    assert_int_equal(store_stats_get(f->st, &s), 0);
    assert_int_equal(s.max_result_bytes, 1u << 20); /* held down by the bound */
    assert_int_equal(s.max_result_configured, 64ull << 20);
    assert_int_equal(store_limits_get(f->st, &l), 0);
    assert_int_equal(l.max_result_bytes, 1u << 20);
    assert_int_equal(fx_put(f->st, NULL, "big", (1u << 20) + 1, 1, NULL), STORE_ETOOBIG);
    /* Raising the bound again gives the configured value back. */
    assert_int_equal(store_limits_set(f->st, &high, NULL), 0);
    assert_int_equal(store_stats_get(f->st, &s), 0);
    assert_int_equal(s.max_result_bytes, 64ull << 20);
    assert_int_equal(s.max_result_configured, 64ull << 20);
    assert_int_equal(fx_put(f->st, NULL, "big", (1u << 20) + 1, 1, NULL), 0);
    /* A value given while the bound is low is the one kept. */
    low.max_result_bytes = 512u << 10;
    assert_int_equal(store_limits_set(f->st, &low, NULL), 0);
    low.max_result_bytes = 0;
    low.max_total_bytes = 100000;
    assert_int_equal(store_limits_set(f->st, &low, NULL), 0);
    assert_int_equal(store_stats_get(f->st, &s), 0);
    assert_int_equal(s.max_result_bytes, 100000);
    assert_int_equal(s.max_result_configured, 512u << 10);
    assert_int_equal(store_limits_set(f->st, &high, NULL), 0);
    assert_int_equal(store_limits_get(f->st, &l), 0);
    assert_int_equal(l.max_result_bytes, 512u << 10);
}

static void limits_set_should_refuse_result_over_total(void **state)
{
    struct fx *f = *state;
    store_limits bad = {1000, 1001, 0}, l;
    assert_int_equal(fx_put(f->st, NULL, "k", 10, 1, NULL), 0);
    assert_int_equal(store_limits_set(f->st, &bad, NULL), STORE_ELIMITS);
    bad.max_total_bytes = 0; /* only the result bound, above 1 GiB */
    bad.max_result_bytes = (1ull << 30) + 1;
    assert_int_equal(store_limits_set(f->st, &bad, NULL), STORE_ELIMITS);
    assert_int_equal(store_limits_get(f->st, &l), 0);
    assert_int_equal(l.max_total_bytes, 1ull << 30);
    assert_int_equal(l.max_result_bytes, 64ull << 20);
    fx_expect(f->st, NULL, "k", 10, 1);
}

static void limits_should_persist_across_reopen_and_raise_map(void **state)
{
    struct fx *f = *state;
    store_limits l;
    fx_limits(f->st, 8ull << 30, 1ull << 20);
    store_close(f->st);
    f->st = NULL;
    assert_int_equal(store_open(&f->st, f->dir, 0), 0);
    assert_int_equal(store_limits_get(f->st, &l), 0);
    assert_int_equal(l.max_total_bytes, 8ull << 30);
    assert_int_equal(l.max_result_bytes, 1ull << 20);
    assert_int_equal(fx_put(f->st, NULL, "k", 1 << 20, 1, NULL), 0);
}

/* ---- tombstones ------------------------------------------------------- */

static void lookup_should_tell_evicted_from_never_written(void **state)
{
    struct fx *f = *state;
    store_entry e;
    store_tomb t;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    fx_limits(f->st, 100, 100);
    assert_int_equal(fx_put(f->st, NULL, "old", 100, 1, &e), 0);
    assert_int_equal(fx_put(f->st, NULL, "new", 100, 2, NULL), 0);
    assert_int_equal(store_lookup(f->st, NULL, "old", NULL, &t), STORE_EEVICTED);
    assert_int_equal(t.reason, STORE_REASON_EVICTED);
    assert_int_equal(t.version, e.version);
    assert_true(t.when_ns / 1000000000ull + 5 >= (uint64_t)ts.tv_sec);
    assert_string_equal(store_reason_name(t.reason), "evicted");
    assert_int_equal(store_lookup(f->st, NULL, "never", NULL, &t), STORE_ENOTFOUND);
    assert_int_equal(store_lookup(f->st, "other", "old", NULL, &t), STORE_ENOTFOUND);
}

static void remove_should_leave_removed_tombstone(void **state)
{
    struct fx *f = *state;
    store_tomb t;
    store_stats s;
    assert_int_equal(fx_put(f->st, NULL, "k", 10, 1, NULL), 0);
    assert_int_equal(store_remove(f->st, NULL, "k"), 0);
    assert_int_equal(store_lookup(f->st, NULL, "k", NULL, &t), STORE_EEVICTED);
    assert_int_equal(t.reason, STORE_REASON_REMOVED);
    assert_string_equal(store_reason_name(t.reason), "removed");
    assert_int_equal(store_remove(f->st, NULL, "k"), STORE_EEVICTED);
    assert_int_equal(store_remove(f->st, NULL, "never"), STORE_ENOTFOUND);
    assert_int_equal(store_stats_get(f->st, &s), 0);
    assert_int_equal(s.entries, 0);
    assert_int_equal(s.bytes, 0);
    assert_int_equal(s.removals, 1);
    assert_int_equal(s.tombstones, 1);
}

static void put_after_remove_should_make_key_live_again(void **state)
{
    struct fx *f = *state;
    store_stats s;
    assert_int_equal(fx_put(f->st, NULL, "k", 10, 1, NULL), 0);
    assert_int_equal(store_remove(f->st, NULL, "k"), 0);
    assert_int_equal(fx_put(f->st, NULL, "k", 20, 2, NULL), 0);
    fx_expect(f->st, NULL, "k", 20, 2);
    assert_int_equal(store_stats_get(f->st, &s), 0);
    assert_int_equal(s.tombstones, 0);
    assert_int_equal(store_remove(f->st, NULL, "k"), 0);
    assert_int_equal(store_stats_get(f->st, &s), 0);
    assert_int_equal(s.tombstones, 1);
}

static void tombstones_should_expire_beyond_their_limit(void **state)
{
    struct fx *f = *state;
    store_limits l = {0, 0, 3};
    store_stats s;
    char k[8];
    assert_int_equal(store_limits_set(f->st, &l, NULL), 0);
    for (unsigned i = 0; i < 5; i++) {
        snprintf(k, sizeof k, "k%u", i);
        assert_int_equal(fx_put(f->st, NULL, k, 10, i, NULL), 0);
        assert_int_equal(store_remove(f->st, NULL, k), 0);
    }
    assert_int_equal(store_lookup(f->st, NULL, "k0", NULL, NULL), STORE_ENOTFOUND);
    assert_int_equal(store_lookup(f->st, NULL, "k1", NULL, NULL), STORE_ENOTFOUND);
    assert_int_equal(store_lookup(f->st, NULL, "k2", NULL, NULL), STORE_EEVICTED);
    assert_int_equal(store_lookup(f->st, NULL, "k4", NULL, NULL), STORE_EEVICTED);
    assert_int_equal(store_stats_get(f->st, &s), 0);
    assert_int_equal(s.tombstones, 3);
    l.max_tombstones = 1; /* lowering trims at once */
    assert_int_equal(store_limits_set(f->st, &l, NULL), 0);
    assert_int_equal(store_lookup(f->st, NULL, "k3", NULL, NULL), STORE_ENOTFOUND);
    assert_int_equal(store_lookup(f->st, NULL, "k4", NULL, NULL), STORE_EEVICTED);
}

/* ---- versions and reads ----------------------------------------------- */

static void read_should_return_exact_bytes_at_any_offset(void **state)
{
    struct fx *f = *state;
    const size_t len = 5 * CHUNK + 123;
    store_entry e;
    unsigned char *want, buf[3 * CHUNK];
    void *all;
    size_t n, alen;
    assert_int_equal(fx_put(f->st, NULL, "k", len, 7, &e), 0);
    assert_int_equal(store_get(f->st, NULL, "k", &all, &alen, NULL, NULL), 0);
    want = all;
    srand(42);
    for (int i = 0; i < 500; i++) {
        uint64_t off = (uint64_t)rand() % (len + 2 * CHUNK);
        size_t l = (size_t)rand() % sizeof buf;
        size_t exp = off >= len ? 0 : (len - off < l ? len - off : l);
        assert_int_equal(store_read(f->st, e.version, off, buf, l, &n), 0);
        assert_int_equal(n, exp);
        assert_memory_equal(buf, want + (off < len ? off : 0), n);
    }
    assert_int_equal(store_read(f->st, e.version, CHUNK - 1, buf, 2, &n), 0);
    assert_int_equal(n, 2);
    assert_memory_equal(buf, want + CHUNK - 1, 2);
    free(all);
}

static void read_should_fail_gone_once_version_is_dropped(void **state)
{
    struct fx *f = *state;
    store_entry a, b, c;
    unsigned char buf[8];
    size_t n = 99;
    fx_limits(f->st, 200, 200);
    assert_int_equal(fx_put(f->st, NULL, "a", 100, 1, &a), 0);
    assert_int_equal(fx_put(f->st, NULL, "b", 100, 2, &b), 0);
    assert_int_equal(fx_put(f->st, NULL, "c", 100, 3, &c), 0); /* evicts a */
    assert_int_equal(store_read(f->st, a.version, 0, buf, 8, &n), STORE_EGONE);
    assert_int_equal(n, 0);
    assert_int_equal(store_remove(f->st, NULL, "b"), 0);
    assert_int_equal(store_read(f->st, b.version, 0, buf, 8, &n), STORE_EGONE);
    assert_int_equal(store_read(f->st, 999999, 0, buf, 8, &n), STORE_EGONE);
    assert_int_equal(store_read(f->st, c.version, 0, buf, 8, &n), 0);
    assert_int_equal(n, 8);
}

struct gathered {
    unsigned char buf[3 * CHUNK];
    size_t n, pieces;
};

static int gather(const struct iovec *iov, size_t iovcnt, size_t total, void *ctx)
{
    struct gathered *g = ctx;
    g->n = 0;
    g->pieces = iovcnt;
    for (size_t i = 0; i < iovcnt; i++) {
        memcpy(g->buf + g->n, iov[i].iov_base, iov[i].iov_len);
        g->n += iov[i].iov_len;
    }
    assert_int_equal(g->n, total);
    return 0;
}

static int refuse(const struct iovec *iov, size_t iovcnt, size_t total, void *ctx)
{
    (void)iov, (void)iovcnt, (void)total, (void)ctx;
    return -42;
}

struct counted {
    const unsigned char *want;
    size_t n, pieces;
};

static int compare(const struct iovec *iov, size_t iovcnt, size_t total, void *ctx)
{
    struct counted *c = ctx;
    for (size_t i = 0; i < iovcnt; i++) {
        assert_memory_equal(iov[i].iov_base, c->want + c->n, iov[i].iov_len);
        c->n += iov[i].iov_len;
    }
    c->pieces = iovcnt;
    assert_int_equal(c->n, total);
    return 0;
}

/* store_read_iov hands over exactly what store_read copies, one piece per
 * chunk touched, and fails the same way. */
static void read_iov_should_match_read(void **state)
{
    struct fx *f = *state;
    const size_t len = 5 * CHUNK + 123;
    store_entry e, old;
    unsigned char buf[3 * CHUNK];
    struct gathered g;
    size_t n;
    assert_int_equal(fx_put(f->st, NULL, "k", len, 9, &e), 0);
    srand(7);
    for (int i = 0; i < 500; i++) {
        uint64_t off = (uint64_t)rand() % (len + 2 * CHUNK);
        size_t l = (size_t)rand() % sizeof buf;
        assert_int_equal(store_read(f->st, e.version, off, buf, l, &n), 0);
        assert_int_equal(store_read_iov(f->st, e.version, off, l, gather, &g), 0);
        assert_int_equal(g.n, n);
        assert_memory_equal(g.buf, buf, n);
        if (n)
            assert_int_equal(g.pieces, (off + n - 1) / CHUNK - off / CHUNK + 1);
        else
            assert_int_equal(g.pieces, 0);
    }
    assert_int_equal(store_read_iov(f->st, e.version, 0, 10, refuse, NULL), -42);
    /* More pieces than fit on the stack: 80 chunks, the whole value. */
    struct counted c = {0};
    void *all;
    size_t alen;
    assert_int_equal(fx_put(f->st, NULL, "big", 80 * CHUNK, 3, NULL), 0);
    assert_int_equal(store_get(f->st, NULL, "big", &all, &alen, &old, NULL), 0);
    c.want = all;
    assert_int_equal(store_read_iov(f->st, old.version, 0, alen, compare, &c), 0);
    assert_int_equal(c.pieces, 80);
    assert_int_equal(c.n, alen);
    free(all);
    old = e;
    assert_int_equal(fx_put(f->st, NULL, "k", 10, 1, &e), 0);
    assert_int_equal(store_read_iov(f->st, old.version, 0, 10, gather, &g), STORE_EGONE);
}

/* Flips one bit of the stored payload of VERSION's chunk IDX with LMDB
 * directly, as a failing disk would (the store must be closed). */
static void flip_chunk_bit(const char *dir, uint64_t version, uint32_t idx, size_t at)
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
    copy[4 + at] ^= 0x10;
    val.mv_data = copy;
    assert_int_equal(mdb_put(txn, dbi, &key, &val, 0), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
    free(copy);
}

static void flipped_bit_should_read_as_corrupt_never_wrong_bytes(void **state)
{
    struct fx *f = *state;
    store_entry e;
    unsigned char buf[64];
    void *all;
    size_t n, len;
    assert_int_equal(fx_put(f->st, NULL, "k", 3 * CHUNK, 1, &e), 0);
    store_close(f->st);
    f->st = NULL;
    flip_chunk_bit(f->dir, e.version, 1, 100);
    assert_int_equal(store_open(&f->st, f->dir, 0), 0);
    assert_int_equal(store_read(f->st, e.version, 0, buf, sizeof buf, &n), 0); /* chunk 0 is fine */
    assert_int_equal(store_read(f->st, e.version, CHUNK + 3000, buf, sizeof buf, &n),
                     STORE_ECORRUPT); /* the whole chunk is checked, not just the bytes read */
    assert_int_equal(store_read_iov(f->st, e.version, CHUNK + 3000, 64, refuse, NULL),
                     STORE_ECORRUPT); /* and before any of it is handed over */
    assert_int_equal(store_get(f->st, NULL, "k", &all, &len, NULL, NULL), STORE_ECORRUPT);
    assert_int_equal(fx_put(f->st, NULL, "k", 10, 2, NULL), 0); /* a rewrite heals it */
    fx_expect(f->st, NULL, "k", 10, 2);
}

static void version_stat_should_name_key_within_its_namespace(void **state)
{
    struct fx *f = *state;
    store_entry e, g;
    char key[STORE_NAME_MAX + 1];
    assert_int_equal(fx_put(f->st, "ns1", "some key", 33, 1, &e), 0);
    assert_int_equal(store_version_stat(f->st, "ns1", e.version, &g, key), 0);
    assert_string_equal(key, "some key");
    assert_int_equal(g.size, 33);
    assert_int_equal(store_version_stat(f->st, "ns2", e.version, &g, key), STORE_EGONE);
    assert_int_equal(store_version_stat(f->st, NULL, e.version, NULL, NULL), STORE_EGONE);
    assert_int_equal(store_version_stat(f->st, "ns1", e.version + 1, NULL, NULL), STORE_EGONE);
}

/* ---- listing ---------------------------------------------------------- */

struct collect {
    char keys[700][16];
    uint64_t sizes[700];
    int n, stop_at;
};

static int collect_fn(const char *key, size_t keylen, const store_entry *e, void *ctx)
{
    struct collect *c = ctx;
    assert_int_equal(strlen(key), keylen);
    snprintf(c->keys[c->n], sizeof c->keys[0], "%s", key);
    c->sizes[c->n++] = e->size;
    return c->n == c->stop_at ? 77 : 0;
}

static void list_should_return_live_keys_in_order_per_namespace(void **state)
{
    struct fx *f = *state;
    struct collect *c = calloc(1, sizeof *c);
    char k[16];
    for (int i = 599; i >= 0; i--) {
        snprintf(k, sizeof k, "k%04d", i);
        assert_int_equal(fx_put(f->st, "a", k, (size_t)i % 7, 1, NULL), 0);
    }
    assert_int_equal(fx_put(f->st, "ab", "zz", 1, 1, NULL), 0);
    assert_int_equal(fx_put(f->st, "b", "k0000", 1, 1, NULL), 0);
    assert_int_equal(store_remove(f->st, "a", "k0300"), 0);
    assert_int_equal(store_list(f->st, "a", NULL, collect_fn, c), 0);
    assert_int_equal(c->n, 599);
    for (int i = 0, j = 0; i < 600; i++) {
        if (i == 300)
            continue;
        snprintf(k, sizeof k, "k%04d", i);
        assert_string_equal(c->keys[j], k);
        assert_int_equal(c->sizes[j], (uint64_t)i % 7);
        j++;
    }
    memset(c, 0, sizeof *c);
    assert_int_equal(store_list(f->st, "a", "k0597", collect_fn, c), 0);
    assert_int_equal(c->n, 2);
    assert_string_equal(c->keys[0], "k0598");
    memset(c, 0, sizeof *c);
    assert_int_equal(store_list(f->st, "empty", NULL, collect_fn, c), 0);
    assert_int_equal(c->n, 0);
    free(c);
}

static void list_should_stop_when_callback_says_so(void **state)
{
    struct fx *f = *state;
    struct collect *c = calloc(1, sizeof *c);
    for (int i = 0; i < 10; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%d", i);
        assert_int_equal(fx_put(f->st, NULL, k, 1, 1, NULL), 0);
    }
    c->stop_at = 3;
    assert_int_equal(store_list(f->st, NULL, NULL, collect_fn, c), 77);
    assert_int_equal(c->n, 3);
    assert_int_equal(store_list(f->st, "a/b", NULL, collect_fn, c), STORE_ENAME_SLASH);
    free(c);
}

static int collect_tomb_fn(const char *key, size_t keylen, const store_entry *e, void *ctx)
{
    struct collect *c = ctx;
    assert_null(e);
    assert_int_equal(strlen(key), keylen);
    snprintf(c->keys[c->n++], sizeof c->keys[0], "%s", key);
    return 0;
}

/* Used by the daemon after a gap in the change log (fs/watch.c). */
static void list_tombs_should_return_removed_and_evicted_names_of_one_namespace(void **state)
{
    struct fx *f = *state;
    struct collect *c = calloc(1, sizeof *c);
    store_limits lim = {0};
    assert_int_equal(fx_put(f->st, "a", "old", 10, 1, NULL), 0);
    assert_int_equal(fx_put(f->st, "a", "gone", 10, 1, NULL), 0);
    assert_int_equal(fx_put(f->st, "a", "live", 10, 1, NULL), 0);
    assert_int_equal(fx_put(f->st, "ab", "other", 10, 1, NULL), 0);
    assert_int_equal(store_remove(f->st, "a", "gone"), 0);
    assert_int_equal(store_remove(f->st, "ab", "other"), 0);
    lim.max_total_bytes = 15; /* evicts "old", the oldest */
    assert_int_equal(store_limits_set(f->st, &lim, NULL), 0);
    assert_int_equal(store_list_tombs(f->st, "a", collect_tomb_fn, c), 0);
    assert_int_equal(c->n, 2);
    assert_string_equal(c->keys[0], "gone");
    assert_string_equal(c->keys[1], "old");
    memset(c, 0, sizeof *c);
    assert_int_equal(fx_put(f->st, "a", "gone", 1, 1, NULL), 0); /* live again */
    assert_int_equal(store_list_tombs(f->st, "a", collect_tomb_fn, c), 0);
    assert_int_equal(c->n, 1);
    assert_string_equal(c->keys[0], "old");
    assert_int_equal(store_list_tombs(f->st, "a/b", collect_tomb_fn, c), STORE_ENAME_SLASH);
    free(c);
}

/* ---- figures and changes ---------------------------------------------- */

struct changes {
    char what[16][64];
    int n;
};

static void change_fn(const char *ns, const char *key, uint64_t o, uint64_t n, void *ctx)
{
    struct changes *c = ctx;
    snprintf(c->what[c->n++], sizeof c->what[0], "%s/%s %s %s", ns, key,
             o ? "old" : "-", n ? "new" : "-");
}

static void changes_should_report_each_write_in_order(void **state)
{
    struct fx *f = *state;
    struct changes c = {0};
    uint64_t gen, now, tok = store_commit_token(f->st);
    assert_int_equal(store_changes(f->st, 0, change_fn, &c, &gen), 0);
    assert_int_equal(c.n, 0);
    assert_int_equal(gen, 0);
    fx_limits(f->st, 100, 100);
    assert_true(store_commit_token(f->st) != tok);
    assert_int_equal(fx_put(f->st, "n", "a", 60, 1, NULL), 0);
    assert_int_equal(fx_put(f->st, "n", "a", 60, 2, NULL), 0);
    assert_int_equal(fx_put(f->st, "m", "b", 60, 3, NULL), 0); /* evicts n/a */
    assert_int_equal(store_remove(f->st, "m", "b"), 0);
    assert_int_equal(store_changes(f->st, gen, change_fn, &c, &now), 0);
    assert_int_equal(now, gen + 5);
    assert_int_equal(c.n, 5);
    assert_string_equal(c.what[0], "n/a - new");
    assert_string_equal(c.what[1], "n/a old new");
    assert_string_equal(c.what[2], "n/a old -");
    assert_string_equal(c.what[3], "m/b - new");
    assert_string_equal(c.what[4], "m/b old -");
    c.n = 0;
    assert_int_equal(store_changes(f->st, now, change_fn, &c, &gen), 0);
    assert_int_equal(c.n, 0);
    assert_int_equal(gen, now);
}

static void change_count(const char *ns, const char *key, uint64_t o, uint64_t n,
                         void *ctx)
{
    (void)ns, (void)key, (void)o, (void)n;
    ++*(int *)ctx;
}

static void changes_should_cross_batches_and_resume(void **state)
{
    struct fx *f = *state;
    uint64_t gen, now, again;
    int count = 0;
    assert_int_equal(fx_put(f->st, NULL, "first", 1, 1, NULL), 0);
    assert_int_equal(store_changes(f->st, 0, change_count, &count, &gen), 0);
    assert_int_equal(gen, 1);
    assert_int_equal(count, 1);
    count = 0;
    for (int i = 0; i < 600; i++)
        assert_int_equal(fx_put(f->st, NULL, "k", 1, 1, NULL), 0);
    assert_int_equal(store_changes(f->st, gen, change_count, &count, &now), 0);
    assert_int_equal(count, 600);
    assert_int_equal(now, 601);
    assert_int_equal(store_changes(f->st, now - 1, change_count, &count, &again), 0);
    assert_int_equal(count, 601);
    assert_int_equal(again, 601);
}

static void stats_should_count_entries_bytes_and_evictions(void **state)
{
    struct fx *f = *state;
    store_stats s;
    fx_limits(f->st, 1000, 500);
    assert_int_equal(fx_put(f->st, "x", "a", 400, 1, NULL), 0);
    assert_int_equal(fx_put(f->st, "y", "b", 400, 2, NULL), 0);
    assert_int_equal(fx_put(f->st, "x", "c", 400, 3, NULL), 0);
    assert_int_equal(store_stats_get(f->st, &s), 0);
    assert_int_equal(s.entries, 2);
    assert_int_equal(s.bytes, 800);
    assert_int_equal(s.max_total_bytes, 1000);
    assert_int_equal(s.max_result_bytes, 500);
    assert_int_equal(s.evictions, 1);
    assert_int_equal(s.removals, 0);
    assert_int_equal(s.tombstones, 1);
    assert_int_equal(s.generation, 4);
    assert_true(s.file_bytes > 0);
}

static void strerror_should_describe_every_code(void **state)
{
    (void)state;
    for (int c = STORE_ERR_BASE - 1; c >= STORE_ENAME_DOT; c--) {
        const char *m = store_strerror(c);
        assert_non_null(m);
        if (c > STORE_ELMDB || c <= STORE_ENAME_EMPTY)
            assert_string_not_equal(m, "unknown store error");
    }
    assert_string_equal(store_strerror(ENOENT), strerror(ENOENT));
    assert_string_equal(store_strerror(STORE_ENAME_SLASH), "contains '/'");
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
/* Tests of the raw layout (one piece per chunk, a bit flipped in a chunk,
 * eviction by exact sizes); compressed values: test_compress.c. */
#define TR(fn) cmocka_unit_test_setup_teardown(fn, fx_setup_raw, fx_teardown)
int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(name_check_should_accept_plain_and_unicode_keys),
        cmocka_unit_test(name_check_should_refuse_empty),
        cmocka_unit_test(name_check_should_refuse_over_255_bytes),
        cmocka_unit_test(name_check_should_refuse_slash),
        cmocka_unit_test(name_check_should_refuse_nul_and_control_bytes),
        cmocka_unit_test(name_check_should_refuse_leading_dot),
        cmocka_unit_test(name_check_should_refuse_invalid_utf8),
        T(open_should_create_store_with_private_modes),
        T(open_should_refuse_missing_dir_or_empty_dir),
        T(open_should_refuse_foreign_data_file),
        T(open_twice_should_share_one_environment),
        T(open_rdonly_should_refuse_writes),
        T(put_should_store_bytes_and_metadata),
        T(put_without_meta_should_record_now_and_no_tool),
        T(put_should_round_trip_chunk_edge_sizes),
        T(put_should_replace_key_with_new_version),
        T(put_should_refuse_value_over_max_result),
        T(put_should_refuse_bad_names_and_change_nothing),
        T(put_should_refuse_tool_name_over_255_bytes),
        T(put_should_fill_bound_exactly_without_eviction),
        T(put_should_evict_oldest_when_one_byte_over),
        T(put_should_accept_value_equal_to_bound),
        T(put_should_evict_across_namespaces_in_write_order),
        T(replace_should_make_key_newest),
        T(limits_set_should_evict_at_once_when_lowered),
        T(limits_set_should_keep_the_configured_result_under_a_lower_bound),
        T(limits_set_should_refuse_result_over_total),
        T(limits_should_persist_across_reopen_and_raise_map),
        T(lookup_should_tell_evicted_from_never_written),
        T(remove_should_leave_removed_tombstone),
        T(put_after_remove_should_make_key_live_again),
        T(tombstones_should_expire_beyond_their_limit),
        T(read_should_return_exact_bytes_at_any_offset),
        T(read_should_fail_gone_once_version_is_dropped),
        TR(read_iov_should_match_read),
        TR(flipped_bit_should_read_as_corrupt_never_wrong_bytes),
        T(version_stat_should_name_key_within_its_namespace),
        T(list_should_return_live_keys_in_order_per_namespace),
        T(list_should_stop_when_callback_says_so),
        T(list_tombs_should_return_removed_and_evicted_names_of_one_namespace),
        T(changes_should_report_each_write_in_order),
        T(changes_should_cross_batches_and_resume),
        TR(stats_should_count_entries_bytes_and_evictions),
        cmocka_unit_test(strerror_should_describe_every_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
