/* test_pending.c -- what the store keeps for the remote tier: the remote URL
 * and the pending marks, which eviction passes over. */
#include "tests/store/fixture.h"

#include <errno.h>

#define VAL 10000u

/* Puts VAL bytes under ns/KEY; with PENDING the store names a remote
 * during the write (so the version is marked), else it names none. */
static int put_pending(store *st, const char *key, unsigned seed, int pending, store_entry *out)
{
    unsigned char buf[VAL];
    for (size_t i = 0; i < VAL; i++)
        buf[i] = (unsigned char)(seed * 131u + i * 7u + (i >> 8));
    store_meta m = {"tool", 0, 0, 0};
    assert_int_equal(store_remote_set(st, pending ? "s3://bucket/p" : NULL), 0);
    return store_put(st, "ns", key, buf, VAL, &m, out);
}

static void remote_url_should_be_set_read_and_removed(void **state)
{
    struct fx *f = *state;
    char buf[STORE_REMOTE_MAX + 1], big[STORE_REMOTE_MAX + 2];
    assert_int_equal(store_remote_get(f->st, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    assert_int_equal(store_remote_set(f->st, "s3://bucket/pre/fix"), 0);
    assert_int_equal(store_remote_get(f->st, buf, sizeof buf), 0);
    assert_string_equal(buf, "s3://bucket/pre/fix");
    assert_int_equal(store_remote_get(f->st, buf, 5), ERANGE);
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_int_equal(store_remote_set(f->st, big), EINVAL);
    assert_int_equal(store_remote_set(f->st, "s3://a\nb"), EINVAL);
    assert_int_equal(store_remote_get(f->st, buf, sizeof buf), 0);
    assert_string_equal(buf, "s3://bucket/pre/fix");
    assert_int_equal(store_remote_set(f->st, ""), 0);
    assert_int_equal(store_remote_get(f->st, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    assert_int_equal(store_remote_set(f->st, NULL), 0);
}

typedef struct seen {
    char keys[8][64];
    uint64_t versions[8];
    unsigned n;
} seen;

static int record(const char *ns, const char *key, uint64_t version, void *ctx)
{
    seen *s = ctx;
    assert_string_equal(ns, "ns");
    snprintf(s->keys[s->n], sizeof s->keys[0], "%s", key);
    s->versions[s->n++] = version;
    return 0;
}

static void pending_marks_should_list_and_clear(void **state)
{
    struct fx *f = *state;
    store_entry a, b, c;
    store_stats st;
    seen s = {0};
    assert_int_equal(put_pending(f->st, "a", 1, 1, &a), 0);
    assert_int_equal(put_pending(f->st, "b", 2, 0, &b), 0);
    assert_int_equal(put_pending(f->st, "c", 3, 1, &c), 0);
    assert_int_equal(store_stats_get(f->st, &st), 0);
    assert_int_equal(st.pending, 2);
    assert_int_equal(store_pending_list(f->st, record, &s), 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.keys[0], "a");
    assert_int_equal(s.versions[0], a.version);
    assert_string_equal(s.keys[1], "c");
    assert_int_equal(s.versions[1], c.version);
    assert_int_equal(store_pending_clear(f->st, a.version), 0);
    assert_int_equal(store_pending_clear(f->st, a.version), 0);
    assert_int_equal(store_pending_clear(f->st, b.version), 0);
    /* a replace or a removal takes the old version's mark along */
    assert_int_equal(put_pending(f->st, "c", 4, 0, NULL), 0);
    assert_int_equal(store_stats_get(f->st, &st), 0);
    assert_int_equal(st.pending, 0);
    assert_int_equal(put_pending(f->st, "d", 5, 1, NULL), 0);
    assert_int_equal(store_remove(f->st, "ns", "d"), 0);
    assert_int_equal(store_stats_get(f->st, &st), 0);
    assert_int_equal(st.pending, 1); /* d's upload mark went; its tombstone's came */
    s.n = 0;
    assert_int_equal(store_pending_list(f->st, record, &s), 0);
    assert_int_equal(s.n, 0);
}

static void removals_should_mark_their_tombstone_pending(void **state)
{
    struct fx *f = *state;
    store_entry a, b;
    store_stats st;
    seen s = {0};
    assert_int_equal(put_pending(f->st, "a", 1, 1, &a), 0);
    assert_int_equal(put_pending(f->st, "b", 2, 1, &b), 0);
    assert_int_equal(put_pending(f->st, "n", 3, 0, NULL), 0);
    assert_int_equal(store_pending_clear(f->st, a.version), 0);
    assert_int_equal(store_pending_clear(f->st, b.version), 0);
    /* the removal and its mark in one transaction; none without a remote */
    assert_int_equal(store_remove(f->st, "ns", "n"), 0);
    assert_int_equal(store_remote_set(f->st, "s3://bucket/p"), 0);
    assert_int_equal(store_remove(f->st, "ns", "b"), 0);
    assert_int_equal(store_remove(f->st, "ns", "a"), 0);
    assert_int_equal(store_stats_get(f->st, &st), 0);
    assert_int_equal(st.pending, 2);
    assert_int_equal(store_tomb_pending_list(f->st, record, &s), 0);
    assert_int_equal(s.n, 2); /* oldest version first */
    assert_string_equal(s.keys[0], "a");
    assert_int_equal(s.versions[0], a.version);
    assert_string_equal(s.keys[1], "b");
    assert_int_equal(s.versions[1], b.version);
    s.n = 0;
    assert_int_equal(store_pending_list(f->st, record, &s), 0);
    assert_int_equal(s.n, 0);
    /* written again: the new result replaces the object, no tombstone */
    assert_int_equal(put_pending(f->st, "a", 4, 1, NULL), 0);
    s.n = 0;
    assert_int_equal(store_tomb_pending_list(f->st, record, &s), 0);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.keys[0], "b");
    /* the tombstone written: cleared, twice is fine, a bad name is not */
    assert_int_equal(store_tomb_pending_clear(f->st, "ns", "b"), 0);
    assert_int_equal(store_tomb_pending_clear(f->st, "ns", "b"), 0);
    assert_int_equal(store_tomb_pending_clear(f->st, "ns", ".bad"), STORE_ENAME_DOT);
    s.n = 0;
    assert_int_equal(store_tomb_pending_list(f->st, record, &s), 0);
    assert_int_equal(s.n, 0);
    assert_int_equal(store_stats_get(f->st, &st), 0);
    assert_int_equal(st.pending, 1); /* a's new version */
}

static void eviction_should_pass_over_pending_versions(void **state)
{
    struct fx *f = *state;
    store_tomb t;
    store_stats st;
    fx_limits(f->st, 3 * VAL, VAL);
    assert_int_equal(put_pending(f->st, "p", 1, 1, NULL), 0);
    assert_int_equal(put_pending(f->st, "x", 2, 0, NULL), 0);
    assert_int_equal(put_pending(f->st, "y", 3, 0, NULL), 0);
    assert_int_equal(put_pending(f->st, "z", 4, 0, NULL), 0); /* evicts x, not p */
    assert_int_equal(store_lookup(f->st, "ns", "p", NULL, NULL), 0);
    assert_int_equal(store_lookup(f->st, "ns", "x", NULL, &t), STORE_EEVICTED);
    assert_int_equal(t.reason, STORE_REASON_EVICTED);
    /* once uploaded (mark cleared), p is the oldest again */
    seen s = {0};
    assert_int_equal(store_pending_list(f->st, record, &s), 0);
    assert_int_equal(store_pending_clear(f->st, s.versions[0]), 0);
    assert_int_equal(put_pending(f->st, "w", 5, 0, NULL), 0);
    assert_int_equal(store_lookup(f->st, "ns", "p", NULL, NULL), STORE_EEVICTED);
    assert_int_equal(store_stats_get(f->st, &st), 0);
    assert_int_equal(st.entries, 3);
}

static void bound_held_by_pending_should_refuse_and_change_nothing(void **state)
{
    struct fx *f = *state;
    store_stats before, after;
    fx_limits(f->st, 3 * VAL, VAL);
    for (int i = 0; i < 3; i++) {
        char k[16];
        snprintf(k, sizeof k, "p%d", i);
        assert_int_equal(put_pending(f->st, k, (unsigned)i, 1, NULL), 0);
    }
    assert_int_equal(store_stats_get(f->st, &before), 0);
    assert_int_equal(put_pending(f->st, "new", 9, 0, NULL), STORE_EPENDING);
    assert_int_equal(put_pending(f->st, "new", 9, 1, NULL), STORE_EPENDING);
    assert_int_equal(store_stats_get(f->st, &after), 0);
    assert_int_equal(after.entries, 3);
    assert_int_equal(after.pending, 3);
    assert_int_equal(after.generation, before.generation);
    assert_int_equal(store_lookup(f->st, "ns", "new", NULL, NULL), STORE_ENOTFOUND);
    assert_non_null(strstr(store_strerror(STORE_EPENDING), "agentlink sync"));
    /* lowering the bound cannot drop them either */
    store_limits l = {VAL, VAL, 0};
    assert_int_equal(store_limits_set(f->st, &l, NULL), STORE_EPENDING);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(remote_url_should_be_set_read_and_removed, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(pending_marks_should_list_and_clear, fx_setup_raw, fx_teardown),
        cmocka_unit_test_setup_teardown(removals_should_mark_their_tombstone_pending, fx_setup_raw, fx_teardown),
        cmocka_unit_test_setup_teardown(eviction_should_pass_over_pending_versions, fx_setup_raw, fx_teardown),
        cmocka_unit_test_setup_teardown(bound_held_by_pending_should_refuse_and_change_nothing, fx_setup_raw,
                                        fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
