/* test_mem_read.c -- the tier's read side over the in-memory remote:
 * lookups (a live object, a tombstone, a name never written, a remote that
 * cannot be reached), ranged reads pinned to a version, a version replaced
 * between two reads and during one, retries and stalls of reads, and
 * listings (order, tombstones and deeper objects hidden, pages, bounds).
 * The remote's answers are the test's (tests/tier/memfx.h). */
#include "tests/tier/memfx.h"

#include <errno.h>
#include <pthread.h>

static void lookup_should_tell_live_tomb_and_never_written(void **state)
{
    struct mfx *f = *state;
    remote_info in;
    void *data;
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "live", "live bytes", 10, NULL, NULL, NULL), 0);
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "gone", "x", 1, NULL, NULL, NULL), 0);
    assert_int_equal(tier_remove(f->ta, f->ca, "ns", "gone"), 0);
    assert_int_equal(tier_lookup(f->tb, f->cb, "ns", "live", &in), 0);
    assert_int_equal(in.length, 10);
    assert_int_equal(in.size, 10);
    assert_null(in.tool);
    assert_int_equal(remote_mem_get(f->m, MFX_PREFIX "/ns/live", &data, NULL, NULL), 0);
    free(data);
    remote_info_clear(&in);
    assert_int_equal(tier_lookup(f->tb, f->cb, "ns", "gone", &in), TIER_ETOMB);
    assert_int_equal(tier_lookup(f->tb, f->cb, "ns", "never", &in), REMOTE_ENOTFOUND);
    /* a name in another namespace is another object */
    assert_int_equal(tier_lookup(f->tb, f->cb, "other", "live", &in), REMOTE_ENOTFOUND);
    /* written again after its removal: object and tombstone, live */
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "gone", "back", 4, NULL, NULL, NULL), 0);
    mfx_assert_object(f, ".tomb/ns/gone", "", 0);
    assert_int_equal(tier_lookup(f->tb, f->cb, "ns", "gone", &in), 0);
    assert_int_equal(in.length, 4);
    remote_info_clear(&in);
}

static void lookup_should_fail_when_the_remote_cannot_be_reached(void **state)
{
    struct mfx *f = *state;
    remote_info in;
    mfx_put(f, "ns/k", "abc", 3, 0);
    /* down for every attempt: REMOTE_EDOWN after the bound, not "not found" */
    mfx_fault(f, .op = REMOTE_MEM_ANY, .err = REMOTE_EDOWN);
    assert_int_equal(tier_lookup(f->tb, f->cb, "ns", "k", &in), REMOTE_EDOWN);
    assert_int_equal(remote_conn_attempts(f->cb), 3);
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_HEAD), 3);
    assert_null(in.etag);
    /* refused: at once */
    remote_mem_fault_clear(f->m);
    remote_mem_requests_reset(f->m);
    mfx_fault(f, .op = REMOTE_MEM_HEAD, .err = REMOTE_EDENIED);
    assert_int_equal(tier_lookup(f->tb, f->cb, "ns", "k", &in), REMOTE_EDENIED);
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_HEAD), 1);
    /* down for two attempts only: found */
    remote_mem_fault_clear(f->m);
    mfx_fault(f, .op = REMOTE_MEM_HEAD, .err = REMOTE_EDOWN, .times = 2);
    assert_int_equal(tier_lookup(f->tb, f->cb, "ns", "k", &in), 0);
    assert_int_equal(remote_conn_attempts(f->cb), 3);
    assert_int_equal(in.length, 3);
    remote_info_clear(&in);
    /* the object answers "not found" but the tombstone's HEAD fails: that failure */
    remote_mem_fault_clear(f->m);
    mfx_fault(f, .op = REMOTE_MEM_HEAD, .name = ".tomb/", .err = REMOTE_EDOWN);
    assert_int_equal(tier_lookup(f->tb, f->cb, "ns", "other", &in), REMOTE_EDOWN);
}

static void lookup_first_should_bring_the_first_bytes_in_one_request(void **state)
{
    struct mfx *f = *state;
    size_t n = 200000;
    unsigned char *data = mfx_bytes(n, 2);
    mfx_sink s = {0};
    uint64_t got = 9;
    remote_info in;
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "big", data, n, NULL, "c1", NULL), 0);
    remote_mem_requests_reset(f->m);
    assert_int_equal(tier_lookup_first(f->tb, f->cb, "ns", "big", 131072, mfx_sink_fn, &s, &got, &in), 0);
    assert_int_equal(got, 131072);
    assert_int_equal(s.len, 131072);
    assert_memory_equal(s.p, data, 131072);
    assert_int_equal(in.length, n); /* the object's, not the part's */
    assert_string_equal(in.call_id, "c1");
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_ANY), 1);
    remote_info_clear(&in);
    /* more than there is: all of it */
    s.len = 0;
    assert_int_equal(tier_lookup_first(f->tb, f->cb, "ns", "big", 1 << 20, mfx_sink_fn, &s, &got, &in), 0);
    assert_int_equal(got, n);
    assert_memory_equal(s.p, data, n);
    remote_info_clear(&in);
    /* an empty object has no byte 0: a HEAD answers it */
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "empty", "", 0, NULL, NULL, NULL), 0);
    remote_mem_requests_reset(f->m);
    s.len = 0;
    assert_int_equal(tier_lookup_first(f->tb, f->cb, "ns", "empty", 4096, mfx_sink_fn, &s, &got, &in), 0);
    assert_int_equal(got, 0);
    assert_int_equal(in.length, 0);
    assert_non_null(in.etag);
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_GET), 1);
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_HEAD), 1);
    remote_info_clear(&in);
    /* a tombstone only */
    assert_int_equal(tier_remove(f->ta, f->ca, "ns", "big"), 0);
    assert_int_equal(tier_lookup_first(f->tb, f->cb, "ns", "big", 4096, mfx_sink_fn, &s, &got, &in), TIER_ETOMB);
    free(s.p);
    free(data);
}

static void get_should_stream_exact_ranges(void **state)
{
    struct mfx *f = *state;
    size_t n = 100000;
    unsigned char *data = mfx_bytes(n, 3);
    mfx_sink s = {0};
    uint64_t got = 9;
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "k", data, n, NULL, NULL, NULL), 0);
    assert_int_equal(tier_get(f->tb, f->cb, "ns", "k", NULL, 12345, 40000, mfx_sink_fn, &s, &got), 0);
    assert_int_equal(got, 40000);
    assert_int_equal(s.len, 40000);
    assert_memory_equal(s.p, data + 12345, 40000);
    /* to the end */
    s.len = 0;
    assert_int_equal(tier_get(f->tb, f->cb, "ns", "k", NULL, 99000, UINT64_MAX, mfx_sink_fn, &s, &got), 0);
    assert_int_equal(got, 1000);
    assert_memory_equal(s.p, data + 99000, 1000);
    /* past the end: nothing, no error */
    s.len = 0;
    assert_int_equal(tier_get(f->tb, f->cb, "ns", "k", NULL, n, 10, mfx_sink_fn, &s, &got), 0);
    assert_int_equal(got, 0);
    assert_int_equal(s.len, 0);
    /* a name never written */
    assert_int_equal(tier_get(f->tb, f->cb, "ns", "nope", NULL, 0, 10, mfx_sink_fn, &s, &got),
                     REMOTE_ENOTFOUND);
    assert_string_equal(remote_conn_message(f->cb),
                        "GET s3://" MFX_BUCKET "/" MFX_PREFIX "/ns/nope: HTTP 404 NoSuchKey");
    free(s.p);
    free(data);
}

static void get_should_refuse_a_version_replaced_since_the_lookup(void **state)
{
    struct mfx *f = *state;
    mfx_sink s = {0};
    uint64_t got = 9;
    remote_info in;
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "k", "version one", 11, NULL, NULL, NULL), 0);
    assert_int_equal(tier_lookup(f->tb, f->cb, "ns", "k", &in), 0);
    assert_int_equal(tier_get(f->tb, f->cb, "ns", "k", in.etag, 0, 7, mfx_sink_fn, &s, &got), 0);
    assert_memory_equal(s.p, "version", 7);
    /* host A replaces it between host B's two reads */
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "k", "VERSION TWO", 11, NULL, NULL, NULL), 0);
    s.len = 0;
    assert_int_equal(tier_get(f->tb, f->cb, "ns", "k", in.etag, 7, 4, mfx_sink_fn, &s, &got), REMOTE_ECHANGED);
    assert_int_equal(got, 0);
    assert_int_equal(s.len, 0);
    assert_int_equal(remote_conn_attempts(f->cb), 1);
    assert_string_equal(remote_conn_message(f->cb),
                        "GET s3://" MFX_BUCKET "/" MFX_PREFIX "/ns/k: the object was replaced");
    /* the same bytes again are the same version (an ETag is the bytes' hash) */
    remote_info_clear(&in);
    assert_int_equal(tier_lookup(f->tb, f->cb, "ns", "k", &in), 0);
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "k", "VERSION TWO", 11, NULL, NULL, NULL), 0);
    assert_int_equal(tier_get(f->tb, f->cb, "ns", "k", in.etag, 8, 3, mfx_sink_fn, &s, &got), 0);
    assert_memory_equal(s.p, "TWO", 3);
    /* no ETag: whatever is there */
    s.len = 0;
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "k", "version three", 13, NULL, NULL, NULL), 0);
    assert_int_equal(tier_get(f->tb, f->cb, "ns", "k", NULL, 8, UINT64_MAX, mfx_sink_fn, &s, &got), 0);
    assert_int_equal(got, 5);
    assert_memory_equal(s.p, "three", 5);
    remote_info_clear(&in);
    free(s.p);
}

/* A read cut short resumes where it stopped, pinned to the version it
 * began with: the same version gives the rest, another gives
 * REMOTE_ECHANGED and never a byte of it. */
static void get_cut_short_should_resume_or_refuse_a_new_version(void **state)
{
    struct mfx *f = *state;
    size_t n = 150000;
    unsigned char *one = mfx_bytes(n, 4), *two = mfx_bytes(n, 5);
    mfx_sink s = {0};
    uint64_t got = 9;
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "k", one, n, NULL, NULL, NULL), 0);
    mfx_fault(f, .op = REMOTE_MEM_GET, .cut = 50000, .times = 1);
    assert_int_equal(tier_get(f->tb, f->cb, "ns", "k", NULL, 1000, UINT64_MAX, mfx_sink_fn, &s, &got), 0);
    assert_int_equal(remote_conn_attempts(f->cb), 2);
    assert_int_equal(got, n - 1000);
    assert_int_equal(s.len, n - 1000);
    assert_memory_equal(s.p, one + 1000, n - 1000);
    /* cut, and replaced before the retry */
    remote_mem_fault_clear(f->m);
    s.len = 0;
    mfx_fault(f, .op = REMOTE_MEM_GET, .cut = 50000, .times = 1, .replace = two, .replace_len = n);
    assert_int_equal(tier_get(f->tb, f->cb, "ns", "k", NULL, 0, UINT64_MAX, mfx_sink_fn, &s, &got),
                     REMOTE_ECHANGED);
    assert_int_equal(remote_conn_attempts(f->cb), 2);
    assert_int_equal(got, 50000);
    assert_int_equal(s.len, 50000);
    assert_memory_equal(s.p, one, 50000);
    assert_string_equal(remote_conn_message(f->cb), "GET s3://" MFX_BUCKET "/" MFX_PREFIX
                                                    "/ns/k: the object was replaced during the read, 2 attempts");
    /* cut on every attempt: the bound, with what came */
    remote_mem_fault_clear(f->m);
    s.len = 0;
    mfx_fault(f, .op = REMOTE_MEM_GET, .cut = 1000);
    assert_int_equal(tier_get(f->tb, f->cb, "ns", "k", NULL, 0, UINT64_MAX, mfx_sink_fn, &s, &got), REMOTE_EDOWN);
    assert_int_equal(remote_conn_attempts(f->cb), 3);
    assert_int_equal(got, 3000);
    assert_memory_equal(s.p, two, 3000);
    free(s.p);
    free(one);
    free(two);
}

static int fail_sink(void *arg, const void *data, size_t n)
{
    (void)arg;
    (void)data;
    (void)n;
    return 1;
}

static void get_should_retry_transient_errors_and_stalls_within_the_bound(void **state)
{
    struct mfx *f = *state;
    mfx_sink s = {0};
    uint64_t got;
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "k", "0123456789", 10, NULL, NULL, NULL), 0);
    mfx_fault(f, .op = REMOTE_MEM_GET, .err = REMOTE_EDOWN, .times = 2);
    assert_int_equal(tier_get(f->tb, f->cb, "ns", "k", NULL, 2, 3, mfx_sink_fn, &s, &got), 0);
    assert_int_equal(remote_conn_attempts(f->cb), 3);
    assert_memory_equal(s.p, "234", 3);
    remote_mem_fault_clear(f->m);
    mfx_fault(f, .op = REMOTE_MEM_GET, .err = REMOTE_EDOWN, .times = 3);
    assert_int_equal(tier_get(f->tb, f->cb, "ns", "k", NULL, 2, 3, mfx_sink_fn, &s, &got), REMOTE_EDOWN);
    assert_true(remote_err_transient(REMOTE_EDOWN));
    /* a slow first byte is not a stall; a stall is retried */
    remote_mem_fault_clear(f->m);
    s.len = 0;
    mfx_fault(f, .op = REMOTE_MEM_GET, .delay_ms = 30, .times = 1);
    mfx_fault(f, .op = REMOTE_MEM_GET, .delay_ms = 60000, .skip = 1, .times = 1);
    assert_int_equal(tier_get(f->tb, f->cb, "ns", "k", NULL, 0, 4, mfx_sink_fn, &s, &got), 0);
    assert_int_equal(remote_conn_attempts(f->cb), 1);
    s.len = 0;
    assert_int_equal(tier_get(f->tb, f->cb, "ns", "k", NULL, 4, 4, mfx_sink_fn, &s, &got), 0);
    assert_int_equal(remote_conn_attempts(f->cb), 2);
    assert_memory_equal(s.p, "4567", 4);
    /* a reader that fails ends the read at once */
    remote_mem_fault_clear(f->m);
    assert_int_equal(tier_get(f->tb, f->cb, "ns", "k", NULL, 0, 4, fail_sink, NULL, &got), REMOTE_ESOURCE);
    assert_int_equal(remote_conn_attempts(f->cb), 1);
    free(s.p);
}

/* Host A rewrites one name over and over, alternating two versions of the
 * same length, while host B looks it up and reads it in ranges pinned to
 * the version it found: every read is all of one version or
 * REMOTE_ECHANGED, never a mix. */
typedef struct rewriter {
    struct mfx *f;
    unsigned char *v[2];
    size_t n;
    int rounds;
} rewriter;

static void *rewrite(void *arg)
{
    rewriter *w = arg;
    for (int i = 0; i < w->rounds; i++)
        if (tier_put(w->f->ta, w->f->ca, "ns", "hot", w->v[i % 2], w->n, NULL, NULL, NULL) != 0)
            return (void *)1;
    return NULL;
}

static void reads_during_rewrites_should_never_mix_versions(void **state)
{
    struct mfx *f = *state;
    rewriter w = {f, {mfx_bytes(60000, 6), mfx_bytes(60000, 7)}, 60000, 200};
    mfx_sink s = {0};
    pthread_t th;
    void *res;
    unsigned whole = 0, changed = 0;
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "hot", w.v[1], w.n, NULL, NULL, NULL), 0);
    /* answers 1 ms late, so that rewrites fall between and within reads */
    mfx_fault(f, .op = REMOTE_MEM_GET, .delay_ms = 1);
    assert_int_equal(pthread_create(&th, NULL, rewrite, &w), 0);
    for (int i = 0; i < 200; i++) {
        remote_info in;
        uint64_t got, first;
        s.len = 0;
        assert_int_equal(tier_lookup_first(f->tb, f->cb, "ns", "hot", 20000, mfx_sink_fn, &s, &first, &in), 0);
        assert_int_equal(first, 20000);
        int rc = tier_get(f->tb, f->cb, "ns", "hot", in.etag, 20000, UINT64_MAX, mfx_sink_fn, &s, &got);
        remote_info_clear(&in);
        if (rc == REMOTE_ECHANGED) {
            assert_int_equal(got, 0);
            changed++;
            continue;
        }
        assert_int_equal(rc, 0);
        assert_int_equal(s.len, w.n);
        assert_true(memcmp(s.p, w.v[0], w.n) == 0 || memcmp(s.p, w.v[1], w.n) == 0);
        whole++;
    }
    assert_int_equal(pthread_join(th, &res), 0);
    assert_null(res);
    assert_int_equal(whole + changed, 200);
    assert_int_equal(mfx_pending(f->a), 0);
    mfx_assert_object(f, "ns/hot", w.v[1], w.n); /* the last of 200 rewrites */
    free(s.p);
    free(w.v[0]);
    free(w.v[1]);
}

typedef struct keys {
    char k[16][64];
    uint64_t size[16];
    unsigned n;
    unsigned stop_after; /* stop() says so once this many came (0: never) */
} keys;

static int take(void *arg, const char *name, uint64_t size, int64_t mtime)
{
    keys *k = arg;
    (void)mtime;
    assert_true(k->n < 16);
    snprintf(k->k[k->n], sizeof k->k[0], "%s", name);
    k->size[k->n++] = size;
    return 0;
}

static void list_should_give_the_results_of_the_namespace_in_byte_order(void **state)
{
    struct mfx *f = *state;
    keys k = {0};
    static const char *const want[] = {"B", "a", "a b", "b", "\xc3\xa9t\xc3\xa9"};
    assert_int_equal(tier_put(f->ta, f->ca, "a", "b", "22", 2, NULL, NULL, NULL), 0);
    assert_int_equal(tier_put(f->ta, f->ca, "a", "\xc3\xa9t\xc3\xa9", "5", 1, NULL, NULL, NULL), 0);
    assert_int_equal(tier_put(f->ta, f->ca, "a", "a b", "333", 3, NULL, NULL, NULL), 0);
    assert_int_equal(tier_put(f->ta, f->ca, "a", "B", "4444", 4, NULL, NULL, NULL), 0);
    assert_int_equal(tier_put(f->ta, f->ca, "a", "a", "1", 1, NULL, NULL, NULL), 0);
    assert_int_equal(tier_put(f->ta, f->ca, "a", "removed", "r", 1, NULL, NULL, NULL), 0);
    assert_int_equal(tier_remove(f->ta, f->ca, "a", "removed"), 0);
    /* written, removed and written again: an object and a tombstone, listed once */
    assert_int_equal(tier_remove(f->ta, f->ca, "a", "a"), 0);
    assert_int_equal(tier_put(f->ta, f->ca, "a", "a", "1", 1, NULL, NULL, NULL), 0);
    /* not results of "a": another namespace, a deeper object, a key outside the prefix */
    assert_int_equal(tier_put(f->ta, f->ca, "ab", "k3", "333", 3, NULL, NULL, NULL), 0);
    mfx_put(f, "a/deeper/obj", "z", 1, 0);
    assert_int_equal(remote_mem_put(f->m, "elsewhere/a/x", "z", 1, NULL, 0), 0);
    remote_mem_requests_reset(f->m);
    assert_int_equal(tier_list(f->tb, f->cb, "a", NULL, take, &k), 0);
    assert_int_equal(k.n, 5);
    for (unsigned i = 0; i < 5; i++)
        assert_string_equal(k.k[i], want[i]);
    assert_int_equal(k.size[0], 4);
    assert_int_equal(k.size[2], 3);
    /* 6 keys under "a/" at 2 a page */
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_LIST), 3);
    /* a server that sends another order: handed on as sent (callers sort) */
    remote_mem_list_reverse(f->m, 1);
    k.n = 0;
    assert_int_equal(tier_list(f->tb, f->cb, "a", NULL, take, &k), 0);
    assert_int_equal(k.n, 5);
    for (unsigned i = 0; i < 5; i++)
        assert_string_equal(k.k[i], want[4 - i]);
    /* an empty namespace */
    k.n = 0;
    assert_int_equal(tier_list(f->tb, f->cb, "none", NULL, take, &k), 0);
    assert_int_equal(k.n, 0);
}

static int stop_when(void *arg)
{
    keys *k = arg;
    return k->stop_after && k->n >= k->stop_after ? ECANCELED : 0;
}

static void list_should_end_at_its_bounds(void **state)
{
    struct mfx *f = *state;
    keys k = {0};
    char name[16];
    for (int i = 0; i < 7; i++) {
        snprintf(name, sizeof name, "ns/k%d", i);
        mfx_put(f, name, "v", 1, 0);
    }
    /* pages: 2 of 2 keys, then past the bound with what came handed */
    remote_list_bounds b = {.max_pages = 2};
    assert_int_equal(tier_list(f->tb, f->cb, "ns", &b, take, &k), REMOTE_ELIMIT);
    assert_int_equal(k.n, 4);
    assert_string_equal(k.k[3], "k3");
    assert_string_equal(remote_conn_message(f->cb),
                        "LIST s3://" MFX_BUCKET "/" MFX_PREFIX ": more than 2 pages: past the listing's bound");
    /* the caller's stop, between pages */
    k.n = 0;
    k.stop_after = 3;
    remote_list_bounds st = {.stop = stop_when, .stop_arg = &k};
    assert_int_equal(tier_list(f->tb, f->cb, "ns", &st, take, &k), ECANCELED);
    assert_int_equal(k.n, 4);
    /* time: pages that come slower than the whole listing may take */
    k.n = 0;
    k.stop_after = 0;
    mfx_fault(f, .op = REMOTE_MEM_LIST, .delay_ms = 200, .skip = 1);
    remote_list_bounds t = {.max_ms = 100};
    assert_int_equal(tier_list(f->tb, f->cb, "ns", &t, take, &k), REMOTE_ELIMIT);
    assert_int_equal(k.n, 2);
    /* a server that repeats its continuation token: ended, not looped */
    remote_mem_fault_clear(f->m);
    k.n = 0;
    mfx_fault(f, .op = REMOTE_MEM_LIST, .repeat_token = 1);
    assert_int_equal(tier_list(f->tb, f->cb, "ns", NULL, take, &k), REMOTE_EPROTO);
    assert_int_equal(k.n, 4);
    /* a listing that cannot be had */
    remote_mem_fault_clear(f->m);
    mfx_fault(f, .op = REMOTE_MEM_LIST, .err = REMOTE_EDENIED, .skip = 1);
    k.n = 0;
    assert_int_equal(tier_list(f->tb, f->cb, "ns", NULL, take, &k), REMOTE_EDENIED);
    assert_int_equal(k.n, 2);
    remote_mem_bucket_drop(MFX_BUCKET);
    assert_int_equal(tier_list(f->tb, f->cb, "ns", NULL, take, &k), REMOTE_ENOBUCKET);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(lookup_should_tell_live_tomb_and_never_written, mfx_setup, mfx_teardown),
        cmocka_unit_test_setup_teardown(lookup_should_fail_when_the_remote_cannot_be_reached, mfx_setup,
                                        mfx_teardown),
        cmocka_unit_test_setup_teardown(lookup_first_should_bring_the_first_bytes_in_one_request, mfx_setup,
                                        mfx_teardown),
        cmocka_unit_test_setup_teardown(get_should_stream_exact_ranges, mfx_setup, mfx_teardown),
        cmocka_unit_test_setup_teardown(get_should_refuse_a_version_replaced_since_the_lookup, mfx_setup,
                                        mfx_teardown),
        cmocka_unit_test_setup_teardown(get_cut_short_should_resume_or_refuse_a_new_version, mfx_setup,
                                        mfx_teardown),
        cmocka_unit_test_setup_teardown(get_should_retry_transient_errors_and_stalls_within_the_bound, mfx_setup,
                                        mfx_teardown),
        cmocka_unit_test_setup_teardown(reads_during_rewrites_should_never_mix_versions, mfx_setup,
                                        mfx_teardown),
        cmocka_unit_test_setup_teardown(list_should_give_the_results_of_the_namespace_in_byte_order, mfx_setup,
                                        mfx_teardown),
        cmocka_unit_test_setup_teardown(list_should_end_at_its_bounds, mfx_setup, mfx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
