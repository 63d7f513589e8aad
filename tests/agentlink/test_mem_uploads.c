/* test_mem_uploads.c -- uploads without the handle's lock, over the
 * in-memory remote (remote/mem/mem.h: this test links libremote_mem.a in
 * place of libremote.a), so it runs under ThreadSanitizer (make test-tsan)
 * with no server: threads on one handle, and handles of one process, are
 * inside their PUTs at the same time (a hook holds the first PUT until a
 * second one arrives), every version is PUT exactly once (no catch-up
 * sends what a writer is sending), and with every PUT failing each write
 * fails alone with its own attempts; a read of a result only the remote
 * holds does not wait for an upload. Counts, never durations. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <cmocka.h>

#include "agentlink/agentlink.h"
#include "remote/mem/mem.h"
#include "store/store.h"

#define THREADS 8
#define PUTS 4
#define BUCKET "up-bucket"
#define WAIT_S 30 /* how long the first PUT waits for a second (a deadline, not a bar) */

struct fx {
    char base[64];
    remote_mem *m;
};

/* The rendezvous: the first PUT waits until another is inside too. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static unsigned inside, most, first_done;

static int put_hook(void *arg, remote_mem_op op, const char *name)
{
    (void)arg;
    (void)op;
    (void)name;
    pthread_mutex_lock(&mu);
    inside++;
    if (inside > most)
        most = inside;
    pthread_cond_broadcast(&cv);
    if (!first_done) {
        first_done = 1;
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += WAIT_S;
        while (most < 2 && pthread_cond_timedwait(&cv, &mu, &until) != ETIMEDOUT)
            ;
    }
    inside--;
    pthread_mutex_unlock(&mu);
    return 0;
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    store *st;
    assert_non_null(f);
    snprintf(f->base, sizeof f->base, "/tmp/offloadfs-memup.XXXXXX");
    assert_non_null(mkdtemp(f->base));
    assert_non_null(f->m = remote_mem_bucket(BUCKET));
    assert_int_equal(store_open(&st, f->base, STORE_CREATE | STORE_NOSYNC), 0);
    assert_int_equal(store_remote_set(st, "s3://" BUCKET "/p"), 0);
    store_close(st);
    inside = most = first_done = 0;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    char cmd[128];
    remote_mem_reset();
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->base);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

struct worker {
    al_store *h;
    pthread_barrier_t *bar;
    int id, puts;
    int rc[PUTS];
};

static void *writer(void *arg)
{
    struct worker *w = arg;
    char key[32], val[64];
    pthread_barrier_wait(w->bar);
    for (int j = 0; j < w->puts; j++) {
        snprintf(key, sizeof key, "t%d_%d", w->id, j);
        snprintf(val, sizeof val, "bytes of %s", key);
        w->rc[j] = al_store_put(w->h, key, val, strlen(val), NULL, NULL, NULL);
    }
    return NULL;
}

/* THREADS writers, writer i on handles[i % NH], PUTS_EACH puts each. */
static void run(al_store **handles, int nh, int puts_each, struct worker *w)
{
    pthread_t t[THREADS];
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, THREADS);
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker){handles[i % nh], &bar, i, puts_each, {0}};
        assert_int_equal(pthread_create(&t[i], NULL, writer, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&bar);
}

static void check_sent_once(struct fx *f, al_store *h, struct worker *w)
{
    for (int i = 0; i < THREADS; i++)
        for (int j = 0; j < PUTS; j++)
            assert_int_equal(w[i].rc[j], 0);
    /* each version exactly once: no catch-up sent a key in flight */
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_PUT), THREADS * PUTS);
    assert_int_equal(remote_mem_count(f->m), THREADS * PUTS);
    al_stats s;
    assert_int_equal(al_store_stats(h, &s), 0);
    assert_int_equal(s.pending, 0);
    /* the first PUT saw a second one arrive while it was inside */
    assert_true(most >= 2);
}

static void threads_on_one_handle_should_upload_at_once_and_each_once(void **state)
{
    struct fx *f = *state;
    al_store *h;
    struct worker w[THREADS];
    remote_mem_fault hook = {.op = REMOTE_MEM_PUT, .hook = put_hook};
    assert_int_equal(remote_mem_fault_add(f->m, &hook), 0);
    assert_int_equal(al_store_open(&h, f->base, NULL, NULL, NULL), 0);
    run(&h, 1, PUTS, w);
    check_sent_once(f, h, w);
    al_store_close(h);
}

static void handles_of_one_process_should_send_each_version_once(void **state)
{
    struct fx *f = *state;
    al_store *h[THREADS];
    struct worker w[THREADS];
    remote_mem_fault hook = {.op = REMOTE_MEM_PUT, .hook = put_hook};
    assert_int_equal(remote_mem_fault_add(f->m, &hook), 0);
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(al_store_open(&h[i], f->base, NULL, NULL, NULL), 0);
    run(h, THREADS, PUTS, w);
    check_sent_once(f, h[0], w);
    for (int i = 0; i < THREADS; i++)
        al_store_close(h[i]);
}

static void failed_uploads_should_fail_each_write_alone(void **state)
{
    struct fx *f = *state;
    al_store *h;
    struct worker w[THREADS];
    /* the hook first (the rendezvous), then every attempt refused */
    remote_mem_fault hook = {.op = REMOTE_MEM_PUT, .hook = put_hook, .err = REMOTE_EDOWN};
    assert_int_equal(remote_mem_fault_add(f->m, &hook), 0);
    assert_int_equal(al_store_open(&h, f->base, NULL, NULL, NULL), 0);
    run(&h, 1, 1, w);
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(w[i].rc[0], AL_EUPLOAD);
    unsigned long puts = remote_mem_requests(f->m, REMOTE_MEM_PUT);
    /* each write its own attempts (1 + the retries), none of the others' */
    assert_true(puts >= THREADS && puts <= THREADS * 3);
    assert_int_equal(puts % THREADS, 0);
    al_stats s;
    assert_int_equal(al_store_stats(h, &s), 0);
    assert_int_equal(s.pending, THREADS);
    assert_true(most >= 2);
    al_store_close(h);
}

/* A read of a result only the remote holds, while a PUT is inside: the
 * PUT's hook waits for the read's GET, which must not wait for the PUT. */
static unsigned puts_inside, gets_seen, get_saw_put;

static int held_put(void *arg, remote_mem_op op, const char *name)
{
    (void)arg;
    (void)op;
    (void)name;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WAIT_S;
    pthread_mutex_lock(&mu);
    puts_inside++;
    while (!gets_seen && pthread_cond_timedwait(&cv, &mu, &until) != ETIMEDOUT)
        ;
    puts_inside--;
    pthread_mutex_unlock(&mu);
    return 0;
}

static int seen_get(void *arg, remote_mem_op op, const char *name)
{
    (void)arg;
    (void)op;
    (void)name;
    pthread_mutex_lock(&mu);
    gets_seen++;
    if (puts_inside)
        get_saw_put = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    return 0;
}

static void *one_put(void *arg)
{
    return (void *)(intptr_t)al_store_put(arg, "w", "written", 7, NULL, NULL, NULL);
}

static void reads_should_not_wait_for_an_upload(void **state)
{
    struct fx *f = *state;
    al_store *h;
    pthread_t t;
    void *prc;
    void *data;
    size_t len;
    remote_mem_fault put = {.op = REMOTE_MEM_PUT, .hook = held_put};
    remote_mem_fault get = {.op = REMOTE_MEM_GET, .hook = seen_get};
    remote_mem_fault head = {.op = REMOTE_MEM_HEAD, .hook = seen_get};
    puts_inside = gets_seen = get_saw_put = 0;
    assert_int_equal(remote_mem_put(f->m, "p/default/other", "theirs", 6, NULL, 0), 0);
    assert_int_equal(remote_mem_fault_add(f->m, &put), 0);
    assert_int_equal(remote_mem_fault_add(f->m, &get), 0);
    assert_int_equal(remote_mem_fault_add(f->m, &head), 0);
    assert_int_equal(al_store_open(&h, f->base, NULL, NULL, NULL), 0);
    assert_int_equal(pthread_create(&t, NULL, one_put, h), 0);
    for (;;) { /* until the PUT is inside (a wait; the test's bound is the hook's) */
        pthread_mutex_lock(&mu);
        unsigned in = puts_inside;
        pthread_mutex_unlock(&mu);
        if (in)
            break;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    assert_int_equal(al_store_get(h, "other", &data, &len, NULL), 0);
    assert_int_equal(len, 6);
    assert_memory_equal(data, "theirs", 6);
    free(data);
    pthread_join(t, &prc);
    assert_int_equal((int)(intptr_t)prc, 0);
    assert_int_equal(get_saw_put, 1); /* the read went while the PUT was inside */
    al_store_close(h);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(threads_on_one_handle_should_upload_at_once_and_each_once),
        T(handles_of_one_process_should_send_each_version_once),
        T(failed_uploads_should_fail_each_write_alone),
        T(reads_should_not_wait_for_an_upload),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
