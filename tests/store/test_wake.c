/* test_wake.c -- the writer's half of read-your-writes (store/wake.h),
 * against stand-in daemons: sockets this test binds in STORE/wake and
 * answers (or not) from a thread. */
#include "tests/store/fixture.h"
#include "store/wake.h"

#include <errno.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* Listens on STORE/wake/NAME with BACKLOG; returns the descriptor. */
static int fake_daemon(const struct fx *f, const char *name, int backlog, int do_listen)
{
    struct sockaddr_un sa;
    char dir[128];
    int fd;
    snprintf(dir, sizeof dir, "%s/" STORE_WAKE_DIR, f->dir);
    if (mkdir(dir, 0700) != 0)
        assert_int_equal(errno, EEXIST);
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    assert_true((size_t)snprintf(sa.sun_path, sizeof sa.sun_path, "%s/%s", dir, name)
                < sizeof sa.sun_path);
    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    if (do_listen)
        assert_int_equal(listen(fd, backlog), 0);
    return fd;
}

static double ms_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* A daemon thread: accepts one connection, then answers ANSWER (or closes
 * without one when SEND is 0). */
struct answerer {
    int listen_fd;
    uint64_t answer;
    int send;
    unsigned delay_ms;   /* before answering */
    volatile int answered;
};

static void *answer_one(void *arg)
{
    struct answerer *a = arg;
    struct timeval tv = {5, 0}; /* a writer that never comes: give up */
    int fd;
    setsockopt(a->listen_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    fd = accept(a->listen_fd, NULL, NULL);
    if (fd >= 0) {
        if (a->delay_ms)
            nanosleep(&(struct timespec){0, (long)a->delay_ms * 1000000L}, NULL);
        a->answered = 1;
        if (a->send)
            (void)send(fd, &a->answer, sizeof a->answer, MSG_NOSIGNAL);
        close(fd);
    }
    return NULL;
}

static void store_wake_should_find_nothing_without_a_wake_directory(void **state)
{
    struct fx *f = *state;
    store_wake_result r;
    assert_int_equal(store_wake(f->dir, 5, STORE_WAKE_TIMEOUT_MS, &r), 0);
    assert_int_equal(r.daemons, 0);
    assert_int_equal(r.late, 0);
}

static void store_wake_should_remove_a_dead_daemons_socket(void **state)
{
    struct fx *f = *state;
    store_wake_result r;
    char path[160];
    int fd = fake_daemon(f, "1-dead.sock", 1, 1);
    close(fd); /* the daemon died: its socket file stays behind */
    snprintf(path, sizeof path, "%s/" STORE_WAKE_DIR "/1-dead.sock", f->dir);
    assert_int_equal(access(path, F_OK), 0);
    assert_int_equal(store_wake(f->dir, 5, STORE_WAKE_TIMEOUT_MS, &r), 0);
    assert_int_equal(r.stale, 1);
    assert_int_equal(r.daemons, 0);
    assert_int_equal(access(path, F_OK), -1);
}

/* STORE/wake a symlink (the store's owner made it; the writer may be
 * root): its target is not the wake directory, and the writer must not
 * remove what it finds there as "stale" sockets. */
static void store_wake_should_not_follow_a_symlinked_wake_directory(void **state)
{
    struct fx *f = *state;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    char other[96], link[96];
    store_wake_result r;
    struct stat sb;
    int fd, rc;
    snprintf(other, sizeof other, "%s/elsewhere", f->dir);
    snprintf(link, sizeof link, "%s/" STORE_WAKE_DIR, f->dir);
    assert_int_equal(mkdir(other, 0700), 0);
    assert_int_equal(symlink("elsewhere", link), 0);
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s/x" STORE_WAKE_SUFFIX, other);
    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0); /* not listening */
    rc = store_wake(f->dir, 1, STORE_WAKE_TIMEOUT_MS, &r);
    assert_true(rc == ENOTDIR || rc == ELOOP); /* Linux: O_DIRECTORY's ENOTDIR */
    assert_int_equal(r.daemons + r.stale, 0);
    assert_int_equal(stat(sa.sun_path, &sb), 0);
    close(fd);
}

static void store_wake_should_ignore_names_that_are_not_sockets_of_daemons(void **state)
{
    struct fx *f = *state;
    store_wake_result r;
    int fd = fake_daemon(f, "2-binding.new", 1, 0); /* bound, not yet listening */
    assert_int_equal(store_wake(f->dir, 5, STORE_WAKE_TIMEOUT_MS, &r), 0);
    assert_int_equal(r.daemons + r.stale, 0);
    close(fd);
}

static void store_wake_should_give_up_on_a_silent_daemon_within_the_bound(void **state)
{
    struct fx *f = *state;
    store_wake_result r;
    struct timespec t0;
    double ms;
    int fd = fake_daemon(f, "3-stopped.sock", 8, 1); /* never accepts */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(store_wake(f->dir, 5, STORE_WAKE_TIMEOUT_MS, &r), ETIMEDOUT);
    ms = ms_since(&t0);
    assert_int_equal(r.daemons, 1);
    assert_int_equal(r.late, 1);
    /* Bounded, never blocked: 10 x the bound, not the bound itself, so a
     * loaded machine or valgrind cannot fail it; the figure is printed. */
    assert_true(ms < 10.0 * STORE_WAKE_TIMEOUT_MS);
    print_message("# a silent daemon held the writer %.1f ms (bound %u ms)\n", ms,
                  STORE_WAKE_TIMEOUT_MS);
    close(fd);
}

static void store_wake_should_not_wait_on_a_full_backlog(void **state)
{
    struct fx *f = *state;
    store_wake_result r;
    struct sockaddr_un sa;
    socklen_t len = sizeof sa;
    int fd = fake_daemon(f, "4-full.sock", 0, 1), c;
    /* Fill the backlog as writers that gave up on a stopped daemon do. */
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    for (int i = 0; i < 4; i++) {
        c = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0);
        (void)connect(c, (struct sockaddr *)&sa, len);
        close(c);
    }
    assert_int_equal(store_wake(f->dir, 5, 0, &r), 0);
    assert_int_equal(r.busy, 1);
    assert_int_equal(r.daemons, 0);
    close(fd);
}

static void store_wake_should_count_an_answer_at_or_past_the_generation(void **state)
{
    struct fx *f = *state;
    struct answerer a = {fake_daemon(f, "5-live.sock", 8, 1), 7, 1, 0, 0};
    store_wake_result r;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, answer_one, &a), 0);
    assert_int_equal(store_wake(f->dir, 7, 10000, &r), 0);
    pthread_join(th, NULL);
    assert_int_equal(r.daemons, 1);
    assert_int_equal(r.acked, 1);
    /* An answer behind the writer's generation is not an acknowledgement. */
    a.answer = 6;
    assert_int_equal(pthread_create(&th, NULL, answer_one, &a), 0);
    assert_int_equal(store_wake(f->dir, 7, 10000, &r), 0);
    pthread_join(th, NULL);
    assert_int_equal(r.acked, 0);
    assert_int_equal(r.gone, 1);
    close(a.listen_fd);
}

static void store_wake_should_stop_waiting_when_a_daemon_goes_away(void **state)
{
    struct fx *f = *state;
    struct answerer a = {fake_daemon(f, "6-dying.sock", 8, 1), 0, 0, 0, 0};
    store_wake_result r;
    struct timespec t0;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, answer_one, &a), 0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* A bound far above anything: only the close can end the wait. */
    assert_int_equal(store_wake(f->dir, 3, 60000, &r), 0);
    assert_true(ms_since(&t0) < 30000.0);
    pthread_join(th, NULL);
    assert_int_equal(r.gone, 1);
    assert_int_equal(r.late, 0);
    close(a.listen_fd);
}

static void store_put_should_wait_for_the_daemons_answer(void **state)
{
    struct fx *f = *state;
    struct answerer a = {fake_daemon(f, "7-put.sock", 8, 1), 0, 1, 50, 0};
    store_stats s;
    pthread_t th;
    /* The answer is the generation the write made: one ahead of now. */
    assert_int_equal(store_stats_get(f->st, &s), 0);
    a.answer = s.generation + 1;
    assert_int_equal(pthread_create(&th, NULL, answer_one, &a), 0);
    assert_int_equal(fx_put(f->st, NULL, "k", 100, 1, NULL), 0);
    /* store_put returned only once the stand-in daemon answered, 50 ms
     * after it was woken. */
    assert_int_equal(a.answered, 1);
    pthread_join(th, NULL);
    /* And a remove wakes it too. */
    a.answer = s.generation + 2;
    a.answered = 0;
    assert_int_equal(pthread_create(&th, NULL, answer_one, &a), 0);
    assert_int_equal(store_remove(f->st, NULL, "k"), 0);
    assert_int_equal(a.answered, 1);
    pthread_join(th, NULL);
    close(a.listen_fd);
}

/* A store opened by a relative path, then the process changes directory
 * (agents do): writes still go to that store, and must still wake its
 * daemons, not look for STORE/wake under the new directory. */
static void store_put_should_wake_daemons_after_a_chdir(void **state)
{
    struct fx *f = *state;
    struct answerer a = {fake_daemon(f, "8-cwd.sock", 8, 1), 0, 1, 0, 0};
    char base[64], cwd[4096];
    store *rel;
    store_stats s;
    pthread_t th;
    int rc;
    snprintf(base, sizeof base, "%s", f->dir);
    *strrchr(base, '/') = '\0';
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(base), 0);
    assert_int_equal(store_open(&rel, "store", STORE_NOSYNC), 0);
    assert_int_equal(chdir("/"), 0);
    assert_int_equal(store_stats_get(rel, &s), 0);
    a.answer = s.generation + 1;
    assert_int_equal(pthread_create(&th, NULL, answer_one, &a), 0);
    rc = fx_put(rel, NULL, "k", 100, 1, NULL);
    /* Not woken: the stand-in gives up after its 5 s timeout. */
    pthread_join(th, NULL);
    close(a.listen_fd);
    store_close(rel);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(rc, 0);
    assert_int_equal(a.answered, 1);
}

/* A stopped daemon delays one process's writes by the bound once, not once
 * per write: `agentlink rm` of 20 keys, or an agent writing result after
 * result, would otherwise wait 200 ms for each (4 s for those 20 keys).
 * Once the daemon has run again (it answers the connection the first write
 * left), the next write waits for it as before. */
static void store_put_should_wait_once_for_a_daemon_that_stays_silent(void **state)
{
    struct fx *f = *state;
    struct answerer a = {fake_daemon(f, "9-stopped.sock", 8, 1), 0, 1, 50, 0};
    struct timespec t0;
    store_stats s;
    pthread_t th;
    double first, later[4];
    uint64_t gen;
    int c;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(fx_put(f->st, NULL, "k0", 100, 1, NULL), 0);
    first = ms_since(&t0);
    for (int i = 0; i < 4; i++) {
        char k[8];
        snprintf(k, sizeof k, "k%d", i + 1);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        assert_int_equal(fx_put(f->st, NULL, k, 100, 1, NULL), 0);
        later[i] = ms_since(&t0);
    }
    assert_int_equal(store_remove(f->st, NULL, "k0"), 0);
    print_message("# a silent daemon: first put %.1f ms, the next four %.1f %.1f %.1f %.1f ms\n",
                  first, later[0], later[1], later[2], later[3]);
    assert_true(first >= STORE_WAKE_TIMEOUT_MS * 0.9); /* the first one waited */
    for (int i = 0; i < 4; i++)  /* waiting again means the whole bound */
        assert_true(later[i] < STORE_WAKE_TIMEOUT_MS * 0.9);
    /* The daemon runs again: it answers what is queued, the first write's
     * connection (the later ones did not connect). */
    assert_int_equal(store_stats_get(f->st, &s), 0);
    gen = s.generation;
    c = accept(a.listen_fd, NULL, NULL);
    assert_true(c >= 0);
    assert_int_equal(send(c, &gen, sizeof gen, MSG_NOSIGNAL), (ssize_t)sizeof gen);
    close(c);
    /* So the next write waits for its answer again. */
    a.answer = gen + 1;
    assert_int_equal(pthread_create(&th, NULL, answer_one, &a), 0);
    assert_int_equal(fx_put(f->st, NULL, "k5", 100, 1, NULL), 0);
    assert_int_equal(a.answered, 1);
    pthread_join(th, NULL);
    close(a.listen_fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(store_wake_should_find_nothing_without_a_wake_directory, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(store_wake_should_remove_a_dead_daemons_socket, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(store_wake_should_ignore_names_that_are_not_sockets_of_daemons, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(store_wake_should_not_follow_a_symlinked_wake_directory, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(store_wake_should_give_up_on_a_silent_daemon_within_the_bound, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(store_wake_should_not_wait_on_a_full_backlog, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(store_wake_should_count_an_answer_at_or_past_the_generation, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(store_wake_should_stop_waiting_when_a_daemon_goes_away, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(store_put_should_wait_for_the_daemons_answer, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(store_put_should_wake_daemons_after_a_chdir, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(store_put_should_wait_once_for_a_daemon_that_stays_silent, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
