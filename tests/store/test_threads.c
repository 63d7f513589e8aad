/* test_threads.c -- handles of one store in one process, opened, used and
 * closed by many threads at once, and a fork() while handles are open.
 *
 * LMDB allows one environment per data file per process (its locks are the
 * process's fcntl() locks): a second one resets the lock table under the
 * first one's writers. These tests write from handles opened at the same
 * instant and check every write that returned 0 byte for byte afterwards.
 * Keys describe their content ("t<thread>-<round>-<i>") so a check needs
 * nothing else. */
#include "fixture.h"

#include <errno.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 8
#define ROUNDS 3
#define PUTS 4
#define VLEN (96u << 10)

struct worker {
    const char *dir;
    pthread_barrier_t *bar;
    int id;
    int acked[ROUNDS][PUTS]; /* 1: the put returned 0 */
    int failed;              /* first unexpected code, 0 if none */
};

/* Bytes that zstd cannot shrink much, derived from SEED. */
static void fill(unsigned char *buf, size_t len, unsigned seed)
{
    unsigned x = seed * 2654435761u + 1u;
    for (size_t i = 0; i < len; i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (unsigned char)(x >> 16);
    }
}

static unsigned seed_of(int id, int round, int i)
{
    return (unsigned)(id * 1000 + round * 10 + i + 1);
}

/* Each round: wait for the others, open a handle, write PUTS values,
 * close. Every thread opens at the same instant; one that failed still
 * meets the others at the barrier. */
static void *work(void *arg)
{
    struct worker *w = arg;
    unsigned char *buf = malloc(VLEN);
    char key[32];
    if (!buf)
        w->failed = ENOMEM;
    for (int r = 0; r < ROUNDS; r++) {
        store *st = NULL;
        pthread_barrier_wait(w->bar);
        if (w->failed)
            continue;
        int rc = store_open(&st, w->dir, STORE_NOSYNC);
        if (rc) {
            w->failed = rc;
            continue;
        }
        for (int i = 0; i < PUTS; i++) {
            snprintf(key, sizeof key, "t%d-%d-%d", w->id, r, i);
            fill(buf, VLEN, seed_of(w->id, r, i));
            rc = store_put(st, NULL, key, buf, VLEN, NULL, NULL);
            w->acked[r][i] = rc == 0;
            if (rc && !w->failed)
                w->failed = rc;
        }
        store_close(st);
    }
    free(buf);
    return NULL;
}

/* Reads KEY and compares it with the bytes SEED gives. 0 or the code. */
static int check_key(store *st, const char *key, unsigned seed, unsigned char *want)
{
    void *got = NULL;
    size_t len = 0;
    int rc = store_get(st, NULL, key, &got, &len, NULL, NULL);
    if (rc == 0) {
        fill(want, VLEN, seed);
        if (len != VLEN || memcmp(got, want, VLEN) != 0)
            rc = -1;
    }
    free(got);
    return rc;
}

static void handles_opened_at_once_should_keep_every_acknowledged_write(void **state)
{
    struct fx *f = *state;
    struct worker w[THREADS];
    pthread_t t[THREADS];
    pthread_barrier_t bar;
    unsigned char *want = malloc(VLEN);
    char key[32];
    int lost = 0;
    assert_non_null(want);
    /* The fixture's handle is closed: the threads' opens are the first. */
    store_close(f->st);
    f->st = NULL;
    assert_int_equal(pthread_barrier_init(&bar, NULL, THREADS), 0);
    for (int i = 0; i < THREADS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].dir = f->dir;
        w[i].bar = &bar;
        w[i].id = i;
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&bar);
    assert_int_equal(store_open(&f->st, f->dir, STORE_VERIFY), 0);
    for (int i = 0; i < THREADS; i++) {
        if (w[i].failed)
            fprintf(stderr, "thread %d: %s\n", i, store_strerror(w[i].failed));
        assert_int_equal(w[i].failed, 0);
        for (int r = 0; r < ROUNDS; r++)
            for (int k = 0; k < PUTS; k++) {
                assert_true(w[i].acked[r][k]);
                snprintf(key, sizeof key, "t%d-%d-%d", i, r, k);
                int rc = check_key(f->st, key, seed_of(i, r, k), want);
                if (rc) {
                    fprintf(stderr, "%s: %s\n", key, rc < 0 ? "wrong bytes" : store_strerror(rc));
                    lost++;
                }
            }
    }
    assert_int_equal(lost, 0);
    free(want);
}

/* A fork while handles are open: the child's calls on the parent's handle
 * fail with STORE_EFORKED, closing it there touches nothing, and a handle
 * the child opens itself writes; the parent's handle keeps working and
 * sees the child's write. Exit codes: 0 ok, 10+ which step failed. */
static int child_run(store *inherited, const char *dir)
{
    store *st = NULL;
    store_entry e;
    if (store_lookup(inherited, NULL, "before", &e, NULL) != STORE_EFORKED)
        return 10;
    if (fx_put(inherited, NULL, "lost", 10, 1, NULL) != STORE_EFORKED)
        return 11;
    store_close(inherited);
    if (store_open(&st, dir, STORE_NOSYNC))
        return 12;
    if (store_lookup(st, NULL, "before", &e, NULL) || e.size != 1000)
        return 13;
    if (fx_put(st, NULL, "child", 2000, 7, NULL))
        return 14;
    store_close(st);
    return 0;
}

static void fork_should_keep_the_parent_handle_and_let_the_child_open_its_own(void **state)
{
    struct fx *f = *state;
    store *again = NULL;
    store_entry e;
    int status;
    pid_t pid;
    assert_int_equal(fx_put(f->st, NULL, "before", 1000, 3, NULL), 0);
    /* A second handle on the same environment, closed by the parent while
     * the child runs. */
    assert_int_equal(store_open(&again, f->dir, 0), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(child_run(f->st, f->dir));
    assert_int_equal(fx_put(again, NULL, "parent", 3000, 5, NULL), 0);
    store_close(again);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(store_lookup(f->st, NULL, "child", &e, NULL), 0);
    assert_int_equal(e.size, 2000);
    assert_int_equal(store_lookup(f->st, NULL, "parent", &e, NULL), 0);
    assert_int_equal(fx_put(f->st, NULL, "after", 100, 9, NULL), 0);
    assert_string_equal(store_strerror(STORE_EFORKED),
                        "store handle was opened by the parent process: open the store again after fork()");
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
int main(void)
{
    const struct CMUnitTest tests[] = {
        T(handles_opened_at_once_should_keep_every_acknowledged_write),
        T(fork_should_keep_the_parent_handle_and_let_the_child_open_its_own),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
