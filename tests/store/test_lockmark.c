/* test_lockmark.c -- the lock mark: store_lock_check() stays 0 while the
 * store is used as usual (puts, reads, other processes opening and closing
 * it, a raised bound) and names each kind of damage to lock.mdb: truncated,
 * removed, replaced by a copy of itself, header overwritten, grown.
 *
 * Each test closes the store before releasing its mark, as store.h asks
 * (closing the mark's descriptor drops this process's fcntl() locks).
 */
#include "fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* DIR/lock.mdb into BUF. */
static void lock_path(const struct fx *f, char *buf, size_t len)
{
    snprintf(buf, len, "%s/lock.mdb", f->dir);
}

/* Takes the mark of F's store and checks that nothing changed yet. */
static void mark(struct fx *f, store_lockmark *m)
{
    const char *why = "unset";
    assert_int_equal(store_lock_mark(f->st, m), 0);
    assert_true(m->fd >= 0);
    assert_int_equal(m->size, 65664); /* 1024 readers: every opener agrees */
    assert_int_equal(store_lock_check(m, &why), 0);
    assert_null(why);
}

/* Asserts that the check finds WANT, then closes the store (when LMDB's
 * close is safe) and releases the mark. */
static void expect_change(struct fx *f, store_lockmark *m, const char *want)
{
    const char *why = NULL;
    assert_int_equal(store_lock_check(m, &why), STORE_ECORRUPT);
    assert_non_null(why);
    assert_string_equal(why, want);
    assert_int_equal(store_lock_check(m, NULL), STORE_ECORRUPT); /* and again */
    assert_true(store_lock_closable(m));
    store_close(f->st);
    f->st = NULL;
    store_lock_unmark(m);
}

/* Opens the store in a child process, puts KEY, closes, exits. */
static void put_from_child(const struct fx *f, const char *key)
{
    int status;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        store *st;
        int rc = store_open(&st, f->dir, STORE_NOSYNC);
        if (!rc)
            rc = fx_put(st, NULL, key, 5000, 7, NULL);
        store_close(st);
        _exit(rc ? 1 : 0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void check_should_pass_while_store_is_used(void **state)
{
    struct fx *f = *state;
    store_lockmark m;
    store *ro;
    store_stats s;
    char key[16];
    mark(f, &m);
    for (unsigned i = 0; i < 20; i++) {
        snprintf(key, sizeof key, "k%u", i);
        assert_int_equal(fx_put(f->st, NULL, key, 10000, i, NULL), 0);
        fx_expect(f->st, NULL, key, 10000, i);
    }
    for (unsigned i = 0; i < 5; i++) {
        snprintf(key, sizeof key, "c%u", i);
        put_from_child(f, key);
    }
    assert_int_equal(store_open(&ro, f->dir, STORE_RDONLY), 0); /* shares the env */
    assert_int_equal(store_stats_get(ro, &s), 0);
    assert_int_equal(s.entries, 25);
    store_close(ro);
    fx_limits(f->st, 2ull << 30, 0); /* grows the data map, not the lock file */
    assert_int_equal(store_lock_check(&m, NULL), 0);
    assert_true(store_lock_closable(&m));
    store_close(f->st);
    f->st = NULL;
    store_lock_unmark(&m);
    store_lock_unmark(&m); /* twice is fine */
}

static void check_should_find_truncation(void **state)
{
    struct fx *f = *state;
    store_lockmark m;
    const char *why = NULL;
    char p[128];
    mark(f, &m);
    lock_path(f, p, sizeof p);
    assert_int_equal(truncate(p, 0), 0);
    assert_int_equal(store_lock_check(&m, &why), STORE_ECORRUPT);
    assert_string_equal(why, "was truncated");
    /* Closing now would die of SIGBUS in LMDB (it clears our reader slot in
     * the mapped file): the mark says so. */
    assert_false(store_lock_closable(&m));
    assert_int_equal(truncate(p, 4096), 0);
    assert_false(store_lock_closable(&m));
    assert_int_equal(store_lock_check(&m, &why), STORE_ECORRUPT);
    assert_string_equal(why, "was truncated");
    /* Back to its length (zeros), so the teardown can close the store. */
    assert_int_equal(truncate(p, (off_t)m.size), 0);
    expect_change(f, &m, "had its header overwritten");
}

static void check_should_find_removal(void **state)
{
    struct fx *f = *state;
    store_lockmark m;
    char p[128];
    mark(f, &m);
    lock_path(f, p, sizeof p);
    assert_int_equal(unlink(p), 0);
    expect_change(f, &m, "was removed");
}

static void check_should_find_replacement_by_same_bytes(void **state)
{
    struct fx *f = *state;
    store_lockmark m;
    char p[128], tmp[160], cmd[400];
    mark(f, &m);
    lock_path(f, p, sizeof p);
    snprintf(tmp, sizeof tmp, "%s.tmp", p);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", p, tmp);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(rename(tmp, p), 0);
    expect_change(f, &m, "was replaced by another file");
}

static void check_should_find_overwritten_header(void **state)
{
    struct fx *f = *state;
    store_lockmark m;
    static const unsigned char zeros[8];
    char p[128];
    int fd;
    mark(f, &m);
    lock_path(f, p, sizeof p);
    fd = open(p, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, zeros, 4, 4), 4); /* mti_format only */
    close(fd);
    expect_change(f, &m, "had its header overwritten");
}

static void check_should_find_growth(void **state)
{
    struct fx *f = *state;
    store_lockmark m;
    char p[128];
    mark(f, &m);
    lock_path(f, p, sizeof p);
    assert_int_equal(truncate(p, (off_t)m.size + 64), 0);
    expect_change(f, &m, "changed size");
}

static void zero_filled_mark_should_be_harmless(void **state)
{
    store_lockmark m;
    const char *why = "unset";
    int open_before = fcntl(0, F_GETFD) >= 0;
    (void)state;
    memset(&m, 0, sizeof m); /* its fd is 0, which is not ours to close */
    assert_int_equal(store_lock_check(&m, &why), 0);
    assert_null(why);
    assert_true(store_lock_closable(&m));
    store_lock_unmark(&m);
    store_lock_unmark(NULL);
    assert_int_equal(fcntl(0, F_GETFD) >= 0, open_before);
}

static void mark_should_fail_cleanly_without_lock_file(void **state)
{
    struct fx *f = *state;
    store_lockmark m;
    char p[128];
    lock_path(f, p, sizeof p);
    assert_int_equal(unlink(p), 0);
    assert_int_equal(store_lock_mark(f->st, &m), ENOENT); /* not a read-only fs */
    assert_null(m.path);
    assert_int_equal(m.fd, -1);
    store_lock_unmark(&m);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
int main(void)
{
    const struct CMUnitTest tests[] = {
        T(check_should_pass_while_store_is_used),
        T(check_should_find_truncation),
        T(check_should_find_removal),
        T(check_should_find_replacement_by_same_bytes),
        T(check_should_find_overwritten_header),
        T(check_should_find_growth),
        cmocka_unit_test(zero_filled_mark_should_be_harmless),
        T(mark_should_fail_cleanly_without_lock_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
