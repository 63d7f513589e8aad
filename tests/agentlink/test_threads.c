/* test_threads.c -- al_store handles opened, used and closed by many threads
 * at once on one existing store (a thread pool that makes a handle per
 * task), beside one handle shared by all; and a fork() while handles are
 * open. Every put that returned 0 must read back byte for byte; keys name
 * their content ("t<thread>-<round>-<i>"). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "agentlink/agentlink.h"

#define THREADS 8
#define ROUNDS 3
#define PUTS 4
#define VLEN (100u << 10)
#define MOUNT "/large_tool_results"

struct fx {
    char base[64];
    char dir[96];
};

struct worker {
    const char *dir;
    al_store *shared;
    pthread_barrier_t *bar;
    int id;
    int acked; /* puts that returned 0 */
    int failed; /* first unexpected code */
};

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

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    al_store *h;
    assert_non_null(f);
    snprintf(f->base, sizeof f->base, "/tmp/offloadfs-althr.XXXXXX");
    assert_non_null(mkdtemp(f->base));
    snprintf(f->dir, sizeof f->dir, "%s/store", f->base);
    /* An existing store, as in a long-running program. */
    assert_int_equal(al_store_open(&h, f->dir, NULL, MOUNT, NULL), 0);
    assert_int_equal(al_store_put(h, "seed", "x", 1, NULL, NULL, NULL), 0);
    al_store_close(h);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->base);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

static void put_one(struct worker *w, al_store *h, int r, int i, unsigned char *buf)
{
    char key[32], *path = NULL;
    snprintf(key, sizeof key, "t%d-%d-%d", w->id, r, i);
    fill(buf, VLEN, seed_of(w->id, r, i));
    int rc = al_store_put(h, key, buf, VLEN, "t", NULL, &path);
    if (rc == 0)
        w->acked++;
    else if (!w->failed)
        w->failed = rc;
    free(path);
}

/* Each round: meet the others, open a handle, put, close it; every other
 * put goes through the handle all threads share. */
static void *work(void *arg)
{
    struct worker *w = arg;
    unsigned char *buf = malloc(VLEN);
    for (int r = 0; r < ROUNDS; r++) {
        al_store *h = NULL;
        pthread_barrier_wait(w->bar);
        if (!buf || w->failed)
            continue;
        int rc = al_store_open(&h, w->dir, NULL, MOUNT, NULL);
        if (rc) {
            w->failed = rc;
            continue;
        }
        for (int i = 0; i < PUTS; i++)
            put_one(w, i % 2 ? w->shared : h, r, i, buf);
        al_store_close(h);
    }
    free(buf);
    return NULL;
}

/* The number of keys of THREADS x ROUNDS x PUTS that do not read back. */
static int count_lost(const char *dir)
{
    unsigned char *want = malloc(VLEN);
    al_store *h;
    char key[32];
    int lost = 0;
    assert_non_null(want);
    assert_int_equal(al_store_open(&h, dir, NULL, MOUNT, NULL), 0);
    for (int t = 0; t < THREADS; t++)
        for (int r = 0; r < ROUNDS; r++)
            for (int i = 0; i < PUTS; i++) {
                void *got = NULL;
                size_t len = 0;
                snprintf(key, sizeof key, "t%d-%d-%d", t, r, i);
                int rc = al_store_get(h, key, &got, &len, NULL);
                fill(want, VLEN, seed_of(t, r, i));
                if (rc || len != VLEN || memcmp(got, want, VLEN) != 0) {
                    fprintf(stderr, "%s: %s\n", key, rc ? al_strerror(rc) : "wrong bytes");
                    lost++;
                }
                free(got);
            }
    al_store_close(h);
    free(want);
    return lost;
}

static void handles_opened_and_closed_by_threads_should_keep_every_write(void **state)
{
    struct fx *f = *state;
    struct worker w[THREADS];
    pthread_t t[THREADS];
    pthread_barrier_t bar;
    al_store *shared;
    assert_int_equal(pthread_barrier_init(&bar, NULL, THREADS), 0);
    assert_int_equal(al_store_open(&shared, f->dir, NULL, MOUNT, NULL), 0);
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker){f->dir, shared, &bar, i, 0, 0};
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    al_store_close(shared);
    pthread_barrier_destroy(&bar);
    for (int i = 0; i < THREADS; i++) {
        if (w[i].failed)
            fprintf(stderr, "thread %d: %s\n", i, al_strerror(w[i].failed));
        assert_int_equal(w[i].failed, 0);
        assert_int_equal(w[i].acked, ROUNDS * PUTS);
    }
    assert_int_equal(count_lost(f->dir), 0);
}

/* The child of a fork uses a handle it inherited (the library opens the
 * store again underneath) and one of its own, and closes another inherited
 * one it never used. Exit 0, or 10+ the step. */
static int child_run(al_store *inherited, al_store *unused, const char *dir)
{
    al_store *own;
    void *got = NULL;
    size_t len = 0;
    int ok;
    if (al_store_put(inherited, "child-inherited", "abc", 3, "t", NULL, NULL))
        return 10;
    if (al_store_get(inherited, "before", &got, &len, NULL))
        return 11;
    ok = len == 6 && memcmp(got, "parent", 6) == 0;
    free(got);
    if (!ok)
        return 12;
    if (al_store_open(&own, dir, NULL, MOUNT, NULL))
        return 13;
    if (al_store_put(own, "child-own", "defg", 4, "t", NULL, NULL))
        return 14;
    al_store_close(own);
    al_store_close(inherited);
    al_store_close(unused);
    return 0;
}

static void fork_should_let_the_child_use_an_inherited_handle(void **state)
{
    struct fx *f = *state;
    al_store *h, *other;
    al_entry e;
    int status;
    pid_t pid;
    assert_int_equal(al_store_open(&h, f->dir, NULL, MOUNT, NULL), 0);
    assert_int_equal(al_store_open(&other, f->dir, NULL, MOUNT, NULL), 0);
    assert_int_equal(al_store_put(h, "before", "parent", 6, "t", NULL, NULL), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(child_run(h, other, f->dir));
    /* The parent writes and closes a handle meanwhile. */
    assert_int_equal(al_store_put(other, "parent-during", "hij", 3, "t", NULL, NULL), 0);
    al_store_close(other);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(al_store_stat(h, "child-inherited", &e), 0);
    assert_int_equal(e.size, 3);
    assert_int_equal(al_store_stat(h, "child-own", &e), 0);
    assert_int_equal(e.size, 4);
    assert_int_equal(al_store_stat(h, "parent-during", &e), 0);
    assert_int_equal(al_store_put(h, "after", "k", 1, "t", NULL, NULL), 0);
    al_store_close(h);
}

int main(void)
{
    unsetenv("OFFLOADFS_STORE");
    unsetenv("OFFLOADFS_NAMESPACE");
    unsetenv("OFFLOADFS_MOUNT");
    unsetenv("OFFLOADFS_CONFIG");
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(handles_opened_and_closed_by_threads_should_keep_every_write),
        T(fork_should_let_the_child_use_an_inherited_handle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
