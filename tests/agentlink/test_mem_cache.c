/* test_mem_cache.c -- the local store as a cache of the remote, through
 * the library over the in-memory remote (remote/mem/mem.h: no server): a
 * result read from the remote is kept as a cached copy of that version,
 * served again with one HEAD and no GET, and with the remote down;
 * counted in the bound and evicted before results written here; never
 * pending, never uploaded again; dropped for a newer version or a
 * tombstone; not kept when too big; counted as hits and misses. Counts of
 * requests and bytes, never durations. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agentlink/agentlink.h"
#include "remote/mem/mem.h"
#include "store/store.h"

#define BUCKET "cache-bucket"

struct fx {
    char base[64];
    remote_mem *m;
    al_store *h;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    store *st;
    assert_non_null(f);
    snprintf(f->base, sizeof f->base, "/tmp/offloadfs-memcache.XXXXXX");
    assert_non_null(mkdtemp(f->base));
    assert_non_null(f->m = remote_mem_bucket(BUCKET));
    assert_int_equal(store_open(&st, f->base, STORE_CREATE | STORE_NOSYNC), 0);
    assert_int_equal(store_remote_set(st, "s3://" BUCKET "/p"), 0);
    /* raw values: the bound counts exactly the bytes below */
    assert_int_equal(store_compression_set(st, STORE_COMPRESS_NONE), 0);
    store_close(st);
    assert_int_equal(al_store_open(&f->h, f->base, NULL, NULL, NULL), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    char cmd[128];
    al_store_close(f->h);
    remote_mem_reset();
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->base);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

/* Bytes of N that do not repeat (the same for the same SEED). */
static char *bytes_of(size_t n, unsigned seed)
{
    char *p = malloc(n ? n : 1);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (char)(seed >> 16);
    }
    return p;
}

/* Another host's write: the object "p/default/KEY" on the remote. */
static void theirs(struct fx *f, const char *key, const void *data, size_t n)
{
    char name[300];
    snprintf(name, sizeof name, "p/default/%s", key);
    assert_int_equal(remote_mem_put(f->m, name, data, n, NULL, 0), 0);
}

static void get_is(struct fx *f, const char *key, const void *want, size_t n, int where)
{
    void *data = NULL;
    size_t len = 0;
    al_entry e;
    assert_int_equal(al_store_get(f->h, key, &data, &len, &e), 0);
    assert_int_equal(len, n);
    assert_memory_equal(data, want, n);
    assert_int_equal(e.where, where);
    free(data);
}

static al_cache_stats cstats(struct fx *f)
{
    al_cache_stats c;
    assert_int_equal(al_store_cache_stats(f->h, &c), 0);
    return c;
}

static void limits(struct fx *f, uint64_t total, uint64_t result)
{
    store *st;
    store_limits l = {total, result, 0};
    assert_int_equal(store_open(&st, f->base, 0), 0);
    assert_int_equal(store_limits_set(st, &l, NULL), 0);
    store_close(st);
}

/* 1 when KEY is live in the local store itself (no remote asked). */
static int here(struct fx *f, const char *key)
{
    store *st;
    assert_int_equal(store_open(&st, f->base, 0), 0);
    int rc = store_lookup(st, "default", key, NULL, NULL);
    store_close(st);
    return rc == 0;
}

static void get_should_keep_a_copy_and_serve_it_again_without_a_get(void **state)
{
    struct fx *f = *state;
    char *b = bytes_of(5000, 1);
    al_entry e;
    theirs(f, "k", b, 5000);
    get_is(f, "k", b, 5000, AL_WHERE_REMOTE); /* a miss: fetched, kept */
    assert_true(here(f, "k"));
    al_cache_stats c = cstats(f);
    assert_int_equal(c.entries, 1);
    assert_int_equal(c.bytes, 5000);
    assert_int_equal(c.misses, 1);
    assert_int_equal(c.hits, 0);
    remote_mem_requests_reset(f->m);
    get_is(f, "k", b, 5000, AL_WHERE_CACHED); /* a hit: one HEAD, no body */
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_GET), 0);
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_HEAD), 1);
    assert_int_equal(al_store_stat(f->h, "k", &e), 0);
    assert_int_equal(e.where, AL_WHERE_CACHED);
    assert_int_equal(e.size, 5000);
    c = cstats(f);
    assert_int_equal(c.hits, 1);
    assert_int_equal(c.misses, 1);
    free(b);
}

static void a_copy_should_never_be_pending_nor_uploaded(void **state)
{
    struct fx *f = *state;
    char *b = bytes_of(3000, 2);
    al_stats s;
    unsigned up = 9, left = 9;
    theirs(f, "k", b, 3000);
    get_is(f, "k", b, 3000, AL_WHERE_REMOTE);
    assert_int_equal(al_store_stats(f->h, &s), 0);
    assert_int_equal(s.pending, 0);
    assert_int_equal(s.entries, 1);
    remote_mem_requests_reset(f->m);
    assert_int_equal(al_store_sync(f->h, &up, &left), 0);
    assert_int_equal(up, 0);
    assert_int_equal(left, 0);
    assert_int_equal(al_store_put(f->h, "mine", "x", 1, NULL, NULL, NULL), 0);
    /* the write and its catch-up send the write only */
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_PUT), 1);
    free(b);
}

static void copies_should_be_evicted_before_results_written_here(void **state)
{
    struct fx *f = *state;
    char *b = bytes_of(3000, 3), *m1 = bytes_of(3000, 4), *m2 = bytes_of(3000, 5);
    limits(f, 7000, 3000); /* two results of 3000 fit, not three */
    assert_int_equal(al_store_put(f->h, "mine1", m1, 3000, NULL, NULL, NULL), 0);
    theirs(f, "t", b, 3000);
    get_is(f, "t", b, 3000, AL_WHERE_REMOTE); /* cached, newer than mine1 */
    assert_true(here(f, "t"));
    assert_int_equal(al_store_put(f->h, "mine2", m2, 3000, NULL, NULL, NULL), 0);
    assert_true(here(f, "mine1")); /* the older result written here stays */
    assert_true(here(f, "mine2"));
    assert_false(here(f, "t"));    /* the copy went first */
    assert_int_equal(cstats(f).entries, 0);
    get_is(f, "t", b, 3000, AL_WHERE_REMOTE); /* still the remote's */
    free(b);
    free(m1);
    free(m2);
}

static void a_newer_version_should_replace_the_copy(void **state)
{
    struct fx *f = *state;
    char *v1 = bytes_of(2000, 6), *v2 = bytes_of(2500, 7);
    theirs(f, "k", v1, 2000);
    get_is(f, "k", v1, 2000, AL_WHERE_REMOTE);
    theirs(f, "k", v2, 2500); /* rewritten on another host */
    get_is(f, "k", v2, 2500, AL_WHERE_REMOTE);
    al_cache_stats c = cstats(f);
    assert_int_equal(c.entries, 1);
    assert_int_equal(c.bytes, 2500);
    assert_int_equal(c.misses, 2);
    get_is(f, "k", v2, 2500, AL_WHERE_CACHED);
    free(v1);
    free(v2);
}

static void a_tombstone_should_drop_the_copy(void **state)
{
    struct fx *f = *state;
    char *b = bytes_of(2000, 8);
    void *data = NULL;
    size_t len = 0;
    al_entry e;
    theirs(f, "k", b, 2000);
    get_is(f, "k", b, 2000, AL_WHERE_REMOTE);
    assert_true(here(f, "k")); /* the copy */
    /* removed on another host: the tombstone, then the object deleted */
    assert_int_equal(remote_mem_put(f->m, "p/.tomb/default/k", "", 0, NULL, 0), 0);
    remote_mem_remove(f->m, "p/default/k");
    assert_int_equal(al_store_get(f->h, "k", &data, &len, &e), AL_EEVICTED);
    assert_null(data);
    assert_int_equal(e.gone_reason, AL_REASON_REMOVED);
    assert_false(here(f, "k"));
    assert_int_equal(cstats(f).entries, 0);
    assert_int_equal(al_store_stat(f->h, "k", &e), AL_EEVICTED);
    free(b);
}

static void a_copy_too_big_for_the_bound_should_not_be_kept(void **state)
{
    struct fx *f = *state;
    char *b = bytes_of(6000, 9);
    limits(f, 10000, 10000); /* over half the bound: not kept */
    theirs(f, "big", b, 6000);
    get_is(f, "big", b, 6000, AL_WHERE_REMOTE);
    assert_false(here(f, "big"));
    al_cache_stats c = cstats(f);
    assert_int_equal(c.entries, 0);
    assert_int_equal(c.misses, 1);
    free(b);
}

static void the_remote_down_should_leave_the_copy_served(void **state)
{
    struct fx *f = *state;
    char *b = bytes_of(4000, 10);
    remote_mem_fault down = {.op = REMOTE_MEM_ANY, .err = REMOTE_EDENIED};
    al_entry e;
    theirs(f, "k", b, 4000);
    theirs(f, "never-read", "zz", 2);
    get_is(f, "k", b, 4000, AL_WHERE_REMOTE);
    assert_int_equal(remote_mem_fault_add(f->m, &down), 0);
    get_is(f, "k", b, 4000, AL_WHERE_CACHED);
    assert_int_equal(al_store_stat(f->h, "k", &e), 0);
    assert_int_equal(e.where, AL_WHERE_CACHED);
    /* what was never read here is the remote's to answer: unreachable */
    void *data = NULL;
    size_t len = 0;
    assert_int_equal(al_store_get(f->h, "never-read", &data, &len, NULL), AL_EUNREACHABLE);
    assert_int_equal(cstats(f).hits, 1);
    free(b);
}

static void a_result_written_here_should_not_be_replaced_by_a_copy(void **state)
{
    struct fx *f = *state;
    store *st;
    store_stats s;
    assert_int_equal(al_store_put(f->h, "k", "mine", 4, NULL, NULL, NULL), 0);
    assert_int_equal(store_open(&st, f->base, 0), 0);
    assert_int_equal(store_put_cached(st, "default", "k", "old", 3, NULL, "\"e1\"", NULL), STORE_EGONE);
    assert_int_equal(store_put_cached(st, "default", "c", "copy", 4, NULL, "\"e2\"", NULL), 0);
    assert_int_equal(store_stats_get(st, &s), 0);
    assert_int_equal(s.puts, 1); /* copies are not puts */
    assert_int_equal(s.cached_entries, 1);
    assert_int_equal(s.entries, 2);
    store_close(st);
    get_is(f, "k", "mine", 4, AL_WHERE_HERE);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(get_should_keep_a_copy_and_serve_it_again_without_a_get),
        T(a_copy_should_never_be_pending_nor_uploaded),
        T(copies_should_be_evicted_before_results_written_here),
        T(a_newer_version_should_replace_the_copy),
        T(a_tombstone_should_drop_the_copy),
        T(a_copy_too_big_for_the_bound_should_not_be_kept),
        T(the_remote_down_should_leave_the_copy_served),
        T(a_result_written_here_should_not_be_replaced_by_a_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
