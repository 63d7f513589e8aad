/* test_tier.c -- the tier over real stores and a real radosgw: uploads
 * after the local commit, pending and sync, tombstones, listings, and
 * two stores (hosts) on one remote. */
#include "tests/remote/rfx.h"

#include <errno.h>
#include <signal.h>

#include "tier/tier.h"

struct tfx {
    char base[64], dir_a[96], dir_b[96], url[256];
    store *a, *b;
    tier *ta, *tb;
    remote_conn *ca, *cb;
};

/* A stopped radosgw fails a request at the 1 s stall limit; two retries
 * let a running one that answers late (under valgrind, on a loaded
 * machine: a 300 KB PUT once took over 1 s to be answered) still succeed.
 * A request to the stopped one then fails in about 3.5 s. */
static const remote_options fast = {.connect_ms = 1000, .stall_s = 1, .retries = 2};

static int tfx_setup(void **state)
{
    struct tfx *f = calloc(1, sizeof *f);
    char msg[256];
    assert_non_null(f);
    snprintf(f->base, sizeof f->base, "/tmp/offloadfs-tier.XXXXXX");
    assert_non_null(mkdtemp(f->base));
    snprintf(f->dir_a, sizeof f->dir_a, "%s/a", f->base);
    snprintf(f->dir_b, sizeof f->dir_b, "%s/b", f->base);
    rfx_url(f->url, sizeof f->url);
    assert_int_equal(store_open(&f->a, f->dir_a, STORE_CREATE | STORE_NOSYNC), 0);
    assert_int_equal(store_open(&f->b, f->dir_b, STORE_CREATE | STORE_NOSYNC), 0);
    assert_int_equal(tier_open(&f->ta, f->a, &fast, msg, sizeof msg), TIER_ENONE);
    assert_int_equal(store_remote_set(f->a, f->url), 0);
    assert_int_equal(store_remote_set(f->b, f->url), 0);
    assert_int_equal(tier_open(&f->ta, f->a, &fast, msg, sizeof msg), 0);
    assert_int_equal(tier_open(&f->tb, f->b, &fast, msg, sizeof msg), 0);
    assert_int_equal(remote_conn_new(&f->ca, tier_remote(f->ta)), 0);
    assert_int_equal(remote_conn_new(&f->cb, tier_remote(f->tb)), 0);
    *state = f;
    return 0;
}

static pid_t rgw_pid(void)
{
    char path[512];
    long pid = 0;
    snprintf(path, sizeof path, "%s/run/client.rgw.offloadfs.pid", getenv("OFFLOADFS_S3_DIR"));
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    assert_int_equal(fscanf(fp, "%ld", &pid), 1);
    fclose(fp);
    return (pid_t)pid;
}

static int tfx_teardown(void **state)
{
    struct tfx *f = *state;
    char cmd[128];
    kill(rgw_pid(), SIGCONT);
    remote_conn_free(f->ca);
    remote_conn_free(f->cb);
    tier_close(f->ta);
    tier_close(f->tb);
    store_close(f->a);
    store_close(f->b);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->base);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

/* The object NAME holds exactly WANT. A radosgw just continued from SIGSTOP
 * first works off what queued up meanwhile: on a loaded machine a GET may
 * meet that within the tests' 1 s stall limit, so it is tried again, as a
 * reader would (at most 5 times). */
static void assert_remote_bytes(remote_conn *c, const char *name, const void *want, size_t n)
{
    unsigned char *got = malloc(n + 8);
    size_t len;
    int rc = REMOTE_EDOWN;
    for (int i = 0; i < 5 && rc == REMOTE_EDOWN; i++)
        rc = remote_get_buf(c, name, 0, got, n + 8, &len);
    assert_int_equal(rc, 0);
    assert_int_equal(len, n);
    assert_memory_equal(got, want, n);
    free(got);
}

static void put_should_upload_exact_bytes_and_clear_pending(void **state)
{
    struct tfx *f = *state;
    size_t n = 300000;
    unsigned char *data = rfx_bytes(n, 1);
    store_meta m = {"web_search", 1700000000123456789ull, 999999, 1};
    store_entry e;
    store_stats st;
    remote_info in;
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "k1", data, n, &m, "call-7", &e), 0);
    assert_int_equal(store_stats_get(f->a, &st), 0);
    assert_int_equal(st.pending, 0);
    assert_remote_bytes(f->ca, "ns/k1", data, n);
    /* host B: found on the remote with its metadata */
    assert_int_equal(tier_lookup(f->tb, f->cb, "ns", "k1", &in), 0);
    assert_int_equal(in.length, n);
    assert_string_equal(in.tool, "web_search");
    assert_string_equal(in.call_id, "call-7");
    assert_int_equal(in.size, 999999);
    assert_int_equal(in.created, 1700000000);
    remote_info_clear(&in);
    assert_remote_bytes(f->cb, "ns/k1", data, n);
    free(data);
}

static void replace_on_a_should_show_on_b(void **state)
{
    struct tfx *f = *state;
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "k", "old bytes", 9, NULL, NULL, NULL), 0);
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "k", "new", 3, NULL, NULL, NULL), 0);
    assert_remote_bytes(f->cb, "ns/k", "new", 3);
}

static void put_with_remote_stopped_should_be_pending_then_synced(void **state)
{
    struct tfx *f = *state;
    store_stats st;
    store_entry e;
    unsigned up = 9, left = 9;
    void *buf;
    size_t len;
    pid_t pid = rgw_pid();
    rfx_stop(pid);
    double t0 = rfx_now();
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "p", "pending bytes", 13, NULL, NULL, &e), TIER_EUNSENT);
    double dt = rfx_now() - t0;
    /* bounded (10 x the remote's bound: a loaded machine or valgrind adds its own) */
    assert_true(dt < 10.0 * (double)remote_bound_ms(tier_remote(f->ta)) / 1000);
    assert_non_null(strstr(remote_conn_message(f->ca), "PUT "));
    assert_non_null(strstr(tier_strerror(TIER_EUNSENT), "pending"));
    /* kept locally, readable, marked */
    assert_int_equal(store_get(f->a, "ns", "p", &buf, &len, NULL, NULL), 0);
    assert_int_equal(len, 13);
    free(buf);
    assert_int_equal(store_stats_get(f->a, &st), 0);
    assert_int_equal(st.pending, 1);
    /* sync while still down: nothing lost, still pending */
    assert_int_equal(tier_sync(f->ta, f->ca, NULL, NULL, &up, &left), TIER_EUNSENT);
    assert_int_equal(up, 0);
    assert_int_equal(left, 1);
    assert_int_equal(kill(pid, SIGCONT), 0);
    /* radosgw first works off what queued up while it was stopped; with
     * one attempt of a 1 s stall limit a sync may meet that: try again,
     * as an operator's timer would */
    int rc = TIER_EUNSENT;
    for (int i = 0; i < 5 && rc == TIER_EUNSENT; i++)
        rc = tier_sync(f->ta, f->ca, NULL, NULL, &up, &left);
    assert_int_equal(rc, 0);
    assert_int_equal(up, 1);
    assert_int_equal(left, 0);
    assert_int_equal(store_stats_get(f->a, &st), 0);
    assert_int_equal(st.pending, 0);
    assert_remote_bytes(f->cb, "ns/p", "pending bytes", 13);
}

typedef struct reports {
    unsigned n;
    char keys[4][32];
    int rc[4];
} reports;

static void report(void *ctx, const char *ns, const char *key, int rc, const char *msg)
{
    reports *r = ctx;
    (void)ns;
    (void)msg;
    snprintf(r->keys[r->n], sizeof r->keys[0], "%s", key);
    r->rc[r->n++] = rc;
}

/* A writer killed between its commit and its upload leaves exactly what
 * store_put() alone leaves: the version marked pending. */
static void killed_writer_should_leave_pending_for_sync(void **state)
{
    struct tfx *f = *state;
    reports r = {0};
    unsigned up, left;
    assert_int_equal(store_put(f->a, "ns", "killed1", "one", 3, NULL, NULL), 0);
    assert_int_equal(store_put(f->a, "other", "killed2", "two!", 4, NULL, NULL), 0);
    assert_int_equal(tier_sync(f->ta, f->ca, report, &r, &up, &left), 0);
    assert_int_equal(up, 2);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.keys[0], "killed1");
    assert_int_equal(r.rc[0], 0);
    assert_remote_bytes(f->cb, "ns/killed1", "one", 3);
    assert_remote_bytes(f->cb, "other/killed2", "two!", 4);
}

static void remove_should_leave_a_tombstone(void **state)
{
    struct tfx *f = *state;
    remote_info in;
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "gone", "x", 1, NULL, NULL, NULL), 0);
    assert_int_equal(tier_remove(f->ta, f->ca, "ns", "gone"), 0);
    assert_int_equal(tier_lookup(f->tb, f->cb, "ns", "gone", &in), TIER_ETOMB);
    assert_int_equal(tier_lookup(f->tb, f->cb, "ns", "never", &in), REMOTE_ENOTFOUND);
    /* written again after the removal: live */
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "gone", "back", 4, NULL, NULL, NULL), 0);
    assert_int_equal(tier_lookup(f->tb, f->cb, "ns", "gone", &in), 0);
    assert_int_equal(in.length, 4);
    remote_info_clear(&in);
}

typedef struct keys {
    char k[8][64];
    uint64_t size[8];
    unsigned n;
} keys;

static int take(void *arg, const char *name, uint64_t size, int64_t mtime)
{
    keys *k = arg;
    (void)mtime;
    snprintf(k->k[k->n], sizeof k->k[0], "%s", name);
    k->size[k->n++] = size;
    return 0;
}

static void list_should_give_the_namespace_keys_only(void **state)
{
    struct tfx *f = *state;
    keys k = {0};
    assert_int_equal(tier_put(f->ta, f->ca, "a", "k1", "1", 1, NULL, NULL, NULL), 0);
    assert_int_equal(tier_put(f->ta, f->ca, "a", "k2", "22", 2, NULL, NULL, NULL), 0);
    assert_int_equal(tier_put(f->ta, f->ca, "ab", "k3", "333", 3, NULL, NULL, NULL), 0);
    assert_int_equal(tier_remove(f->ta, f->ca, "a", "k2"), 0);
    assert_int_equal(remote_put_buf(f->ca, "a/deeper/obj", "z", 1, NULL), 0);
    assert_int_equal(tier_list(f->tb, f->cb, "a", NULL, take, &k), 0);
    assert_int_equal(k.n, 1);
    assert_string_equal(k.k[0], "k1");
    assert_int_equal(k.size[0], 1);
}

static void next_write_should_upload_what_is_pending(void **state)
{
    struct tfx *f = *state;
    store_stats st;
    pid_t pid = rgw_pid();
    rfx_stop(pid);
    assert_int_equal(tier_put(f->ta, f->ca, "ns", "early", "early", 5, NULL, NULL, NULL), TIER_EUNSENT);
    assert_int_equal(kill(pid, SIGCONT), 0);
    int rc = TIER_EUNSENT;
    for (int i = 0; i < 5 && rc == TIER_EUNSENT; i++) /* radosgw's backlog first (see above) */
        rc = tier_put(f->ta, f->ca, "ns", "later", "later", 5, NULL, NULL, NULL);
    assert_int_equal(rc, 0);
    assert_int_equal(store_stats_get(f->a, &st), 0);
    assert_int_equal(st.pending, 0);
    assert_remote_bytes(f->cb, "ns/early", "early", 5);
}

static void gc_should_remove_oldest_beyond_the_bytes_with_tombstones(void **state)
{
    struct tfx *f = *state;
    unsigned removed = 9;
    uint64_t kept = 9;
    remote_info in;
    char k[16], v[100];
    memset(v, 'v', sizeof v);
    for (int i = 1; i <= 4; i++) {
        snprintf(k, sizeof k, "k%d", i);
        assert_int_equal(tier_put(f->ta, f->ca, i % 2 ? "n1" : "n2", k, v, sizeof v, NULL, NULL, NULL), 0);
    }
    assert_int_equal(tier_remove(f->ta, f->ca, "n1", "k3"), 0); /* a tombstone is not a result */
    assert_int_equal(tier_gc(f->ta, f->ca, 0, 0, &removed, &kept), 0);
    assert_int_equal(removed, 0);
    assert_int_equal(kept, 300);
    assert_int_equal(tier_gc(f->ta, f->ca, 0, 150, &removed, &kept), 0);
    assert_int_equal(removed, 2);
    assert_int_equal(kept, 100);
    assert_int_equal(tier_lookup(f->tb, f->cb, "n1", "k1", &in), TIER_ETOMB);
    assert_int_equal(tier_lookup(f->tb, f->cb, "n2", "k2", &in), TIER_ETOMB);
    assert_int_equal(tier_lookup(f->tb, f->cb, "n2", "k4", &in), 0);
    remote_info_clear(&in);
    /* by age: after 2 s, everything older than 1 s goes */
    sleep(2);
    assert_int_equal(tier_gc(f->ta, f->ca, 1, 0, &removed, &kept), 0);
    assert_int_equal(removed, 1);
    assert_int_equal(kept, 0);
    assert_int_equal(tier_lookup(f->tb, f->cb, "n2", "k4", &in), TIER_ETOMB);
}

int main(void)
{
    rfx_bucket();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(put_should_upload_exact_bytes_and_clear_pending, tfx_setup, tfx_teardown),
        cmocka_unit_test_setup_teardown(replace_on_a_should_show_on_b, tfx_setup, tfx_teardown),
        cmocka_unit_test_setup_teardown(put_with_remote_stopped_should_be_pending_then_synced, tfx_setup,
                                        tfx_teardown),
        cmocka_unit_test_setup_teardown(killed_writer_should_leave_pending_for_sync, tfx_setup, tfx_teardown),
        cmocka_unit_test_setup_teardown(remove_should_leave_a_tombstone, tfx_setup, tfx_teardown),
        cmocka_unit_test_setup_teardown(list_should_give_the_namespace_keys_only, tfx_setup, tfx_teardown),
        cmocka_unit_test_setup_teardown(next_write_should_upload_what_is_pending, tfx_setup, tfx_teardown),
        cmocka_unit_test_setup_teardown(gc_should_remove_oldest_beyond_the_bytes_with_tombstones, tfx_setup,
                                        tfx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
