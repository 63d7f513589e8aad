/* test_mem_write.c -- the tier's write side over the in-memory remote:
 * uploads after the local commit, pending marks when the remote fails,
 * the retry bound on transient errors, stalls, sync's catch-up, removals
 * with their tombstones, and gc. Every answer of the remote is chosen by
 * the test (tests/tier/memfx.h), so each failure is exact and instant. */
#include "tests/tier/memfx.h"

static void put_should_upload_exact_bytes_and_metadata(void **state)
{
    struct mfx *f = *state;
    size_t n = 300000;
    unsigned char *data = mfx_bytes(n, 1);
    store_meta meta = {"web_search", 1700000000123456789ull, 999999, 1};
    store_entry e;
    remote_info in;
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "k1", data, n, &meta, "call-7", &e), 0);
    assert_int_equal(mfx_pending(f->a), 0);
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_PUT), 1);
    mfx_assert_object(f, "ns/k1", data, n);
    /* host B finds it with its metadata */
    assert_int_equal(tier_lookup(f->tb, f->cb, "ns", "k1", &in), 0);
    assert_int_equal(in.length, n);
    assert_string_equal(in.tool, "web_search");
    assert_string_equal(in.call_id, "call-7");
    assert_int_equal(in.size, 999999);
    assert_int_equal(in.created, 1700000000);
    assert_non_null(in.etag);
    remote_info_clear(&in);
    free(data);
}

static void put_should_be_pending_when_the_remote_refuses(void **state)
{
    struct mfx *f = *state;
    store_entry e;
    void *buf;
    size_t len;
    unsigned up = 9, left = 9;
    mfx_fault(f, .op = REMOTE_MEM_PUT, .err = REMOTE_EDENIED);
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "p", "pending bytes", 13, NULL, NULL, &e), TIER_EUNSENT);
    /* a refusal is not retried */
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_PUT), 1);
    assert_int_equal(remote_conn_attempts(f->ca), 1);
    assert_string_equal(remote_conn_message(f->ca),
                        "PUT s3://" MFX_BUCKET "/" MFX_PREFIX "/ns/p: HTTP 403 AccessDenied (injected)");
    /* kept locally, readable, marked */
    assert_int_equal(store_get(f->a, "ns", "p", &buf, &len, NULL, NULL), 0);
    assert_int_equal(len, 13);
    assert_memory_equal(buf, "pending bytes", 13);
    free(buf);
    assert_int_equal(mfx_pending(f->a), 1);
    assert_int_equal(tier_has_pending(f->ta), 1);
    mfx_assert_no_object(f, "ns/p");
    /* sync while it still refuses: nothing lost, still pending */
    assert_int_equal(tier_sync(f->ta, f->ca, NULL, NULL, &up, &left), TIER_EUNSENT);
    assert_int_equal(up, 0);
    assert_int_equal(left, 1);
    assert_int_equal(mfx_pending(f->a), 1);
    /* the remote takes writes again: sync catches up */
    remote_mem_fault_clear(f->m);
    assert_int_equal(tier_sync(f->ta, f->ca, NULL, NULL, &up, &left), 0);
    assert_int_equal(up, 1);
    assert_int_equal(left, 0);
    assert_int_equal(mfx_pending(f->a), 0);
    assert_int_equal(tier_has_pending(f->ta), 0);
    mfx_assert_object(f, "ns/p", "pending bytes", 13);
}

static void put_should_retry_transient_errors_up_to_the_bound(void **state)
{
    struct mfx *f = *state;
    /* two 503s then an answer: three attempts, one success */
    mfx_fault(f, .op = REMOTE_MEM_PUT, .err = REMOTE_EDOWN, .times = 2);
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "k", "abc", 3, NULL, NULL, NULL), 0);
    assert_int_equal(remote_conn_attempts(f->ca), 3);
    assert_string_equal(remote_conn_message(f->ca), "");
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_PUT), 3);
    assert_int_equal(mfx_pending(f->a), 0);
    mfx_assert_object(f, "ns/k", "abc", 3);
    /* three 503s: the bound (1 + 2 retries) is reached, pending */
    remote_mem_fault_clear(f->m);
    remote_mem_requests_reset(f->m);
    mfx_fault(f, .op = REMOTE_MEM_PUT, .err = REMOTE_EDOWN, .times = 3);
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "k", "defg", 4, NULL, NULL, NULL), TIER_EUNSENT);
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_PUT), 3);
    assert_int_equal(remote_conn_attempts(f->ca), 3);
    assert_string_equal(remote_conn_message(f->ca), "PUT s3://" MFX_BUCKET "/" MFX_PREFIX
                                                    "/ns/k: HTTP 503 ServiceUnavailable (injected), 3 attempts");
    assert_int_equal(mfx_pending(f->a), 1);
    mfx_assert_object(f, "ns/k", "abc", 3); /* the old version stays until sync */
    assert_int_equal(tier_sync(f->ta, f->ca, NULL, NULL, NULL, NULL), 0);
    mfx_assert_object(f, "ns/k", "defg", 4);
}

static void put_should_ride_out_a_slow_first_byte_and_a_stall(void **state)
{
    struct mfx *f = *state;
    /* an answer 50 ms late is below the 1 s stall limit: one attempt */
    mfx_fault(f, .op = REMOTE_MEM_PUT, .delay_ms = 50, .times = 1);
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "slow", "s", 1, NULL, NULL, NULL), 0);
    assert_int_equal(remote_conn_attempts(f->ca), 1);
    /* one attempt stalled past the limit: aborted, retried, uploaded */
    remote_mem_fault_clear(f->m);
    mfx_fault(f, .op = REMOTE_MEM_PUT, .delay_ms = 60000, .times = 1);
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "stall", "t", 1, NULL, NULL, NULL), 0);
    assert_int_equal(remote_conn_attempts(f->ca), 2);
    assert_int_equal(mfx_pending(f->a), 0);
    mfx_assert_object(f, "ns/stall", "t", 1);
}

static void stalled_remote_should_leave_the_put_pending_with_the_reason(void **state)
{
    struct mfx *f = *state;
    remote_options one = mfx_opt;
    tier *t;
    remote_conn *c;
    char msg[256];
    one.retries = REMOTE_NO_RETRY;
    assert_int_equal(tier_open(&t, f->a, &one, msg, sizeof msg), 0);
    assert_int_equal(remote_conn_new(&c, tier_remote(t)), 0);
    mfx_fault(f, .op = REMOTE_MEM_PUT, .delay_ms = 60000);
    assert_int_equal(tier_put(t, c, "ns", "st", "x", 1, NULL, NULL, NULL), TIER_EUNSENT);
    assert_string_equal(remote_conn_message(c),
                        "PUT s3://" MFX_BUCKET "/" MFX_PREFIX "/ns/st: stalled, nothing moved for 1 s");
    assert_int_equal(remote_conn_attempts(c), 1);
    assert_int_equal(mfx_pending(f->a), 1);
    remote_conn_free(c);
    tier_close(t);
}

typedef struct reports {
    unsigned n;
    char keys[8][32];
    int rc[8];
} reports;

static void report(void *ctx, const char *ns, const char *key, int rc, const char *msg)
{
    reports *r = ctx;
    (void)msg;
    assert_true(r->n < 8);
    snprintf(r->keys[r->n], sizeof r->keys[0], "%s/%s", ns, key);
    r->rc[r->n++] = rc;
}

/* Writers killed between their commit and their upload leave exactly what
 * store_put() leaves: marks that sync sends, oldest first; one the remote
 * keeps refusing stays pending while the others go. */
static void sync_should_upload_oldest_first_and_keep_failures_pending(void **state)
{
    struct mfx *f = *state;
    reports r = {0};
    unsigned up = 9, left = 9;
    assert_int_equal(store_put(f->a, "ns", "k1", "one", 3, NULL, NULL), 0);
    assert_int_equal(store_put(f->a, "other", "k2", "two!", 4, NULL, NULL), 0);
    assert_int_equal(store_put(f->a, "ns", "k3", "three", 5, NULL, NULL), 0);
    mfx_fault(f, .op = REMOTE_MEM_PUT, .name = "other/", .err = REMOTE_EDENIED);
    assert_int_equal(tier_sync(f->ta, f->ca, report, &r, &up, &left), TIER_EUNSENT);
    assert_int_equal(up, 2);
    assert_int_equal(left, 1);
    assert_int_equal(r.n, 3);
    assert_string_equal(r.keys[0], "ns/k1");
    assert_int_equal(r.rc[0], 0);
    assert_string_equal(r.keys[1], "other/k2");
    assert_int_equal(r.rc[1], REMOTE_EDENIED);
    assert_string_equal(r.keys[2], "ns/k3");
    assert_int_equal(r.rc[2], 0);
    assert_int_equal(mfx_pending(f->a), 1);
    mfx_assert_object(f, "ns/k1", "one", 3);
    mfx_assert_object(f, "ns/k3", "three", 5);
    mfx_assert_no_object(f, "other/k2");
    /* the next successful write sends what is left */
    remote_mem_fault_clear(f->m);
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "k4", "four", 4, NULL, NULL, NULL), 0);
    assert_int_equal(mfx_pending(f->a), 0);
    mfx_assert_object(f, "other/k2", "two!", 4);
}

/* The marks as tier_sync() and the library's catch-up walk them: uploads
 * oldest first with their versions, then tombstones; nothing when none. */
static void pending_list_should_give_uploads_oldest_first_then_tombstones(void **state)
{
    struct mfx *f = *state;
    tier_mark *v = (tier_mark *)1;
    size_t n = 9;
    store_entry e1, e2, er;
    assert_int_equal(tier_pending_list(f->ta, &v, &n), 0);
    assert_null(v);
    assert_int_equal(n, 0);
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "r", "bytes", 5, NULL, NULL, &er), 0);
    assert_int_equal(store_put(f->a, "ns", "k1", "one", 3, NULL, &e1), 0);
    assert_int_equal(store_remove(f->a, "ns", "r"), 0);
    assert_int_equal(store_put(f->a, "other", "k2", "two!", 4, NULL, &e2), 0);
    assert_int_equal(tier_pending_list(f->ta, &v, &n), 0);
    assert_int_equal(n, 3);
    assert_string_equal(v[0].ns, "ns");
    assert_string_equal(v[0].key, "k1");
    assert_int_equal(v[0].version, e1.version);
    assert_int_equal(v[0].tomb, 0);
    assert_string_equal(v[1].ns, "other");
    assert_string_equal(v[1].key, "k2");
    assert_int_equal(v[1].version, e2.version);
    assert_int_equal(v[1].tomb, 0);
    assert_string_equal(v[2].ns, "ns");
    assert_string_equal(v[2].key, "r");
    assert_int_equal(v[2].version, er.version);
    assert_int_equal(v[2].tomb, 1);
    free(v);
    /* listing sends nothing and clears nothing */
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_PUT), 1);
    assert_int_equal(mfx_pending(f->a), 3);
}

static int tomb_there(void *arg, remote_mem_op op, const char *name)
{
    struct mfx *f = arg;
    (void)op;
    (void)name;
    /* the object is deleted only once its tombstone is there */
    return remote_mem_get(f->m, MFX_PREFIX "/.tomb/ns/gone", NULL, NULL, NULL) == 0 ? 0 : REMOTE_EPROTO;
}

static void remove_should_write_the_tombstone_before_deleting(void **state)
{
    struct mfx *f = *state;
    remote_info in;
    int64_t created = 0;
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "gone", "x", 1, NULL, NULL, NULL), 0);
    mfx_fault(f, .op = REMOTE_MEM_DELETE, .hook = tomb_there, .hook_arg = f);
    assert_int_equal(store_remove(f->a, "ns", "gone"), 0);
    assert_int_equal(tier_tomb_pending(f->ta, "ns", "gone"), 1);
    assert_int_equal(tier_remove(f->ta, f->ca, "ns", "gone"), 0);
    assert_int_equal(tier_tomb_pending(f->ta, "ns", "gone"), 0);
    assert_int_equal(mfx_pending(f->a), 0);
    mfx_assert_no_object(f, "ns/gone");
    mfx_assert_object(f, ".tomb/ns/gone", "", 0);
    assert_int_equal(tier_lookup(f->tb, f->cb, "ns", "gone", &in), TIER_ETOMB);
    assert_int_equal(tier_tomb_get(f->tb, f->cb, "ns", "gone", &created), 0);
    assert_true(created > 0);
    /* removing a name the remote never had still leaves a tombstone */
    assert_int_equal(tier_remove(f->ta, f->ca, "ns", "never"), 0);
    mfx_assert_object(f, ".tomb/ns/never", "", 0);
}

static void failed_remove_should_stay_pending_until_sync(void **state)
{
    struct mfx *f = *state;
    remote_info in;
    unsigned up = 9, left = 9;
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "r", "bytes", 5, NULL, NULL, NULL), 0);
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "back", "b1", 2, NULL, NULL, NULL), 0);
    assert_int_equal(store_remove(f->a, "ns", "r"), 0);
    assert_int_equal(store_remove(f->a, "ns", "back"), 0);
    mfx_fault(f, .op = REMOTE_MEM_PUT, .name = ".tomb/", .err = REMOTE_EDOWN);
    assert_int_equal(tier_remove(f->ta, f->ca, "ns", "r"), REMOTE_EDOWN);
    assert_int_equal(remote_conn_attempts(f->ca), 3);
    /* no tombstone, so the object stays: no host finds neither */
    mfx_assert_object(f, "ns/r", "bytes", 5);
    assert_int_equal(tier_tomb_pending(f->ta, "ns", "r"), 1);
    assert_int_equal(tier_lookup(f->tb, f->cb, "ns", "r", &in), 0);
    remote_info_clear(&in);
    /* "back" is written again here before sync: live, its mark dropped */
    assert_int_equal(store_put(f->a, "ns", "back", "b2", 2, NULL, NULL), 0);
    remote_mem_fault_clear(f->m);
    assert_int_equal(tier_sync(f->ta, f->ca, NULL, NULL, &up, &left), 0);
    assert_int_equal(left, 0);
    assert_int_equal(mfx_pending(f->a), 0);
    mfx_assert_no_object(f, "ns/r");
    mfx_assert_object(f, ".tomb/ns/r", "", 0);
    mfx_assert_no_object(f, ".tomb/ns/back");
    mfx_assert_object(f, "ns/back", "b2", 2);
    assert_int_equal(tier_lookup(f->tb, f->cb, "ns", "r", &in), TIER_ETOMB);
}

static void gc_should_remove_the_oldest_beyond_the_bounds_with_tombstones(void **state)
{
    struct mfx *f = *state;
    unsigned removed = 9;
    uint64_t kept = 9;
    remote_info in;
    char v[100];
    int64_t now = (int64_t)time(NULL);
    memset(v, 'v', sizeof v);
    /* ages 4000, 3000, 2000, 1000 s; a tombstone and a deeper object are not results */
    mfx_put(f, "n1/k1", v, sizeof v, now - 4000);
    mfx_put(f, "n2/k2", v, sizeof v, now - 3000);
    mfx_put(f, "n1/k3", v, sizeof v, now - 2000);
    mfx_put(f, "n2/k4", v, sizeof v, now - 1000);
    mfx_put(f, ".tomb/n1/k0", "", 0, now - 9000);
    mfx_put(f, "n1/deeper/obj", v, sizeof v, now - 9000);
    assert_int_equal(tier_gc(f->ta, f->ca, 0, 0, &removed, &kept), 0);
    assert_int_equal(removed, 0);
    assert_int_equal(kept, 400);
    /* by bytes: the two oldest go */
    assert_int_equal(tier_gc(f->ta, f->ca, 0, 250, &removed, &kept), 0);
    assert_int_equal(removed, 2);
    assert_int_equal(kept, 200);
    assert_int_equal(tier_lookup(f->tb, f->cb, "n1", "k1", &in), TIER_ETOMB);
    assert_int_equal(tier_lookup(f->tb, f->cb, "n2", "k2", &in), TIER_ETOMB);
    assert_int_equal(tier_lookup(f->tb, f->cb, "n1", "k3", &in), 0);
    remote_info_clear(&in);
    /* by age: older than 1500 s */
    assert_int_equal(tier_gc(f->ta, f->ca, 1500, 0, &removed, &kept), 0);
    assert_int_equal(removed, 1);
    assert_int_equal(kept, 100);
    mfx_assert_no_object(f, "n1/k3");
    mfx_assert_object(f, "n2/k4", v, sizeof v);
    mfx_assert_object(f, "n1/deeper/obj", v, sizeof v);
    /* the remote failing midway: what was removed stays removed */
    mfx_put(f, "n3/a", v, sizeof v, now - 500);
    mfx_put(f, "n3/b", v, sizeof v, now - 400);
    mfx_fault(f, .op = REMOTE_MEM_DELETE, .name = "n3/b", .err = REMOTE_EDENIED);
    assert_int_equal(tier_gc(f->ta, f->ca, 0, 1, &removed, &kept), REMOTE_EDENIED);
    assert_int_equal(removed, 2); /* n3/a and n2/k4, oldest first */
    mfx_assert_no_object(f, "n2/k4");
    mfx_assert_no_object(f, "n3/a");
    mfx_assert_object(f, "n3/b", v, sizeof v);
}

/* Another writer of the same name, as the upload of the older version is
 * about to read its bytes: the newer version, pending (its writer has not
 * uploaded it yet) or, with FINISHED, already uploaded and unmarked. */
typedef struct rival {
    struct mfx *f;
    int finished;
} rival;

static int rival_writes(void *arg, remote_mem_op op, const char *name)
{
    rival *r = arg;
    store_entry e;
    (void)op;
    (void)name;
    assert_int_equal(store_put(r->f->a, "ns", "k", "version two", 11, NULL, &e), 0);
    if (r->finished) {
        mfx_put(r->f, "ns/k", "version two", 11, 0);
        assert_int_equal(store_pending_clear(r->f->a, e.version), 0);
    }
    return 0;
}

static void put_replaced_during_its_upload_should_end_with_the_newest_bytes(void **state)
{
    struct mfx *f = *state;
    rival r = {f, 0};
    /* the newer version is still its writer's: this put's catch-up sends it */
    mfx_fault(f, .op = REMOTE_MEM_PUT, .times = 1, .hook = rival_writes, .hook_arg = &r);
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "k", "version one", 11, NULL, NULL, NULL), 0);
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_PUT), 2);
    assert_int_equal(mfx_pending(f->a), 0);
    mfx_assert_object(f, "ns/k", "version two", 11);
    /* the newer one's writer has finished: sent again, so it lands last */
    remote_mem_fault_clear(f->m);
    remote_mem_requests_reset(f->m);
    r.finished = 1;
    mfx_fault(f, .op = REMOTE_MEM_PUT, .times = 1, .hook = rival_writes, .hook_arg = &r);
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "k", "version 1.5", 11, NULL, NULL, NULL), 0);
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_PUT), 2);
    assert_int_equal(mfx_pending(f->a), 0);
    mfx_assert_object(f, "ns/k", "version two", 11);
}

static void unknown_bucket_should_leave_writes_pending(void **state)
{
    struct mfx *f = *state;
    remote_mem_bucket_drop(MFX_BUCKET);
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "k", "x", 1, NULL, NULL, NULL), TIER_EUNSENT);
    assert_string_equal(remote_conn_message(f->ca),
                        "PUT s3://" MFX_BUCKET "/" MFX_PREFIX "/ns/k: HTTP 404 NoSuchBucket");
    assert_int_equal(remote_check(f->ca), REMOTE_ENOBUCKET);
    assert_int_equal(mfx_pending(f->a), 1);
    assert_non_null(remote_mem_bucket(MFX_BUCKET));
    assert_int_equal(remote_check(f->ca), 0);
    assert_int_equal(tier_sync(f->ta, f->ca, NULL, NULL, NULL, NULL), 0);
    mfx_assert_object(f, "ns/k", "x", 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(put_should_upload_exact_bytes_and_metadata, mfx_setup, mfx_teardown),
        cmocka_unit_test_setup_teardown(put_should_be_pending_when_the_remote_refuses, mfx_setup, mfx_teardown),
        cmocka_unit_test_setup_teardown(put_should_retry_transient_errors_up_to_the_bound, mfx_setup,
                                        mfx_teardown),
        cmocka_unit_test_setup_teardown(put_should_ride_out_a_slow_first_byte_and_a_stall, mfx_setup,
                                        mfx_teardown),
        cmocka_unit_test_setup_teardown(stalled_remote_should_leave_the_put_pending_with_the_reason, mfx_setup,
                                        mfx_teardown),
        cmocka_unit_test_setup_teardown(sync_should_upload_oldest_first_and_keep_failures_pending, mfx_setup,
                                        mfx_teardown),
        cmocka_unit_test_setup_teardown(pending_list_should_give_uploads_oldest_first_then_tombstones,
                                        mfx_setup, mfx_teardown),
        cmocka_unit_test_setup_teardown(remove_should_write_the_tombstone_before_deleting, mfx_setup,
                                        mfx_teardown),
        cmocka_unit_test_setup_teardown(failed_remove_should_stay_pending_until_sync, mfx_setup, mfx_teardown),
        cmocka_unit_test_setup_teardown(gc_should_remove_the_oldest_beyond_the_bounds_with_tombstones, mfx_setup,
                                        mfx_teardown),
        cmocka_unit_test_setup_teardown(put_replaced_during_its_upload_should_end_with_the_newest_bytes,
                                        mfx_setup, mfx_teardown),
        cmocka_unit_test_setup_teardown(unknown_bucket_should_leave_writes_pending, mfx_setup, mfx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
