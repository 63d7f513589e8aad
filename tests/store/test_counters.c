/* test_counters.c -- the store's counts of puts, evictions and removals
 * (store_stats), which the metrics (offloadfs_puts_total,
 * offloadfs_evictions_total) publish as counters: they count every
 * writer's committed work, nothing refused, and never go backwards, across
 * reopens and across processes. */
#include "fixture.h"

#include <sys/wait.h>
#include <unistd.h>

static store_stats stats(store *st)
{
    store_stats s;
    assert_int_equal(store_stats_get(st, &s), 0);
    return s;
}

static void puts_should_count_each_committed_put_and_replace(void **state)
{
    struct fx *f = *state;
    assert_int_equal(stats(f->st).puts, 0);
    assert_int_equal(fx_put(f->st, "a", "k1", 10, 1, NULL), 0);
    assert_int_equal(fx_put(f->st, "b", "k1", 10, 2, NULL), 0);
    assert_int_equal(fx_put(f->st, "a", "k1", 20, 3, NULL), 0); /* a replace */
    assert_int_equal(fx_put(f->st, "a", "empty", 0, 4, NULL), 0);
    assert_int_equal(stats(f->st).puts, 4);
}

static void puts_should_not_count_refused_puts_or_other_writes(void **state)
{
    struct fx *f = *state;
    fx_limits(f->st, 1000, 100);
    assert_int_equal(fx_put(f->st, "a", "k", 10, 1, NULL), 0);
    assert_int_equal(fx_put(f->st, "a", "big", 101, 1, NULL), STORE_ETOOBIG);
    assert_int_equal(fx_put(f->st, "a", "x/y", 10, 1, NULL), STORE_ENAME_SLASH);
    assert_int_equal(store_remove(f->st, "a", "k"), 0);
    fx_limits(f->st, 500, 0);
    assert_int_equal(store_compression_set(f->st, STORE_COMPRESS_NONE), 0);
    assert_int_equal(stats(f->st).puts, 1);
    assert_int_equal(stats(f->st).removals, 1);
}

static void evictions_should_count_puts_and_limit_changes_that_evict(void **state)
{
    struct fx *f = *state;
    assert_int_equal(store_compression_set(f->st, STORE_COMPRESS_NONE), 0);
    fx_limits(f->st, 1000, 500);
    for (int i = 0; i < 5; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%d", i);
        assert_int_equal(fx_put(f->st, "a", k, 400, (unsigned)i, NULL), 0);
    }
    assert_int_equal(stats(f->st).evictions, 3); /* two fit at a time */
    fx_limits(f->st, 400, 0);                    /* one fits now */
    assert_int_equal(stats(f->st).evictions, 4);
    assert_int_equal(stats(f->st).puts, 5);
}

/* Writers in other processes count too, and a fresh handle (a restarted
 * daemon) reads on from where the store is, never from zero. */
static void counters_should_add_up_across_processes_and_reopens(void **state)
{
    struct fx *f = *state;
    store_stats before, after;
    pid_t pid[3];
    int status;
    assert_int_equal(store_compression_set(f->st, STORE_COMPRESS_NONE), 0);
    fx_limits(f->st, 64u << 10, 32u << 10);
    assert_int_equal(fx_put(f->st, "a", "first", 100, 1, NULL), 0);
    before = stats(f->st);
    store_close(f->st);
    f->st = NULL;
    for (int w = 0; w < 3; w++) {
        if ((pid[w] = fork()) == 0) {
            store *st;
            int bad = store_open(&st, f->dir, STORE_NOSYNC);
            for (int i = 0; i < 20 && !bad; i++) {
                char k[32];
                snprintf(k, sizeof k, "w%d-%d", w, i);
                bad = fx_put(st, "a", k, 9000, (unsigned)(w * 100 + i), NULL);
            }
            store_close(st);
            _exit(bad ? 1 : 0);
        }
        assert_true(pid[w] > 0);
    }
    for (int w = 0; w < 3; w++) {
        assert_int_equal(waitpid(pid[w], &status, 0), pid[w]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    assert_int_equal(store_open(&f->st, f->dir, STORE_RDONLY), 0);
    after = stats(f->st);
    assert_int_equal(after.puts, before.puts + 60);
    assert_true(after.evictions > before.evictions);
    /* Every put beyond what the bound holds evicted one entry or more. */
    assert_true(after.evictions >= after.puts - after.entries);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
int main(void)
{
    const struct CMUnitTest tests[] = {
        T(puts_should_count_each_committed_put_and_replace),
        T(puts_should_not_count_refused_puts_or_other_writes),
        T(evictions_should_count_puts_and_limit_changes_that_evict),
        T(counters_should_add_up_across_processes_and_reopens),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
