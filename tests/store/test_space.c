/* test_space.c -- a full disk and a reader that pins old pages. The store
 * lives on a small tmpfs mounted for the test (root only: skipped loudly
 * otherwise). Each fault must give a clear error, keep every acknowledged
 * entry readable, and let the next put succeed once the cause is gone. */
#include "fixture.h"

#include <errno.h>
#include <lmdb.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct sp {
    char base[64], dir[80];
    store *st;
    pid_t reader; /* a stopped reader to kill, even when a test fails */
};

static int sp_setup(void **state)
{
    struct sp *p = calloc(1, sizeof *p);
    snprintf(p->base, sizeof p->base, "/tmp/offloadfs-space.XXXXXX");
    assert_non_null(mkdtemp(p->base));
    *state = p;
    if (geteuid() != 0 || mount("tmpfs", p->base, "tmpfs", 0, "size=24m")) {
        fprintf(stderr, "SKIPPED LOUDLY: test_space needs root to mount a small tmpfs\n");
        return 0;
    }
    snprintf(p->dir, sizeof p->dir, "%s/store", p->base);
    assert_int_equal(store_open(&p->st, p->dir, STORE_CREATE | STORE_NOSYNC), 0);
    fx_limits(p->st, 256ull << 20, 1ull << 20); /* a bound the disk cannot hold */
    /* Raw values, so that the bytes written are the bytes the disk takes. */
    assert_int_equal(store_compression_set(p->st, STORE_COMPRESS_NONE), 0);
    return 0;
}

static int sp_teardown(void **state)
{
    struct sp *p = *state;
    if (p->reader > 0) {
        kill(p->reader, SIGKILL);
        waitpid(p->reader, NULL, 0);
    }
    store_close(p->st);
    if (p->dir[0])
        umount2(p->base, MNT_DETACH);
    rmdir(p->base);
    free(p);
    return 0;
}

static void resize(struct sp *p, const char *size)
{
    char opt[32];
    snprintf(opt, sizeof opt, "size=%s", size);
    assert_int_equal(mount("tmpfs", p->base, "tmpfs", MS_REMOUNT, opt), 0);
}

/* Puts 1 MiB values until one fails; returns how many were acknowledged. */
static int fill_until_error(struct sp *p, int *err)
{
    char key[16];
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof key, "k%d", i);
        int rc = fx_put(p->st, NULL, key, 1u << 20, (unsigned)i, NULL);
        if (rc) {
            *err = rc;
            return i;
        }
    }
    fail_msg("the disk never filled");
    return -1;
}

static void full_disk_should_fail_cleanly_and_recover(void **state)
{
    struct sp *p = *state;
    store_stats before, after;
    char key[16];
    int err = 0, n;
    if (!p->st)
        skip();
    n = fill_until_error(p, &err);
    print_message("fill ended after %d puts: %s\n", n, store_strerror(err));
    assert_true(n > 5);
    assert_true(err == ENOSPC || err == STORE_EFULL);
    print_message("disk full after %d puts of 1 MiB: %s\n", n, store_strerror(err));
    assert_int_equal(store_stats_get(p->st, &before), 0);
    assert_int_equal(before.entries, (uint64_t)n);
    assert_int_equal(fx_put(p->st, NULL, "again", 1u << 20, 1, NULL), err);
    for (int i = 0; i < n; i++) { /* every acknowledged put is intact */
        snprintf(key, sizeof key, "k%d", i);
        fx_expect(p->st, NULL, key, 1u << 20, (unsigned)i);
    }
    resize(p, "64m");
    assert_int_equal(fx_put(p->st, NULL, "again", 1u << 20, 1, NULL), 0);
    fx_expect(p->st, NULL, "again", 1u << 20, 1);
    assert_int_equal(store_stats_get(p->st, &after), 0);
    assert_int_equal(after.entries, before.entries + 1);
}

/* A process that takes a read snapshot with LMDB directly and stops. */
static pid_t pinning_reader(const char *dir)
{
    int pfd[2];
    char c;
    pid_t pid;
    assert_int_equal(pipe(pfd), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        MDB_env *env;
        MDB_txn *txn;
        close(pfd[0]);
        if (mdb_env_create(&env) || mdb_env_set_maxdbs(env, 8)
            || mdb_env_open(env, dir, MDB_RDONLY, 0600)
            || mdb_txn_begin(env, NULL, MDB_RDONLY, &txn))
            _exit(1);
        if (write(pfd[1], "r", 1) != 1)
            _exit(1);
        raise(SIGSTOP);
        _exit(0);
    }
    close(pfd[1]);
    assert_int_equal(read(pfd[0], &c, 1), 1);
    close(pfd[0]);
    return pid;
}

static void stopped_reader_should_bound_space_then_release_it(void **state)
{
    struct sp *p = *state;
    char key[16];
    store_stats s;
    int err = 0, i;
    pid_t reader;
    if (!p->st)
        skip();
    fx_limits(p->st, 4ull << 20, 1ull << 20);
    assert_int_equal(fx_put(p->st, NULL, "first", 1u << 20, 3, NULL), 0);
    reader = p->reader = pinning_reader(p->dir);
    /* Churn far past the bound: pinned pages cannot be reused, so the file
     * grows until the disk is full, which must be a clean error. */
    for (i = 0; i < 200 && !err; i++) {
        snprintf(key, sizeof key, "c%d", i % 8);
        err = fx_put(p->st, NULL, key, 1u << 20, (unsigned)i, NULL);
    }
    assert_true(err == ENOSPC || err == STORE_EFULL);
    print_message("with a stopped reader the disk filled after %d puts: %s\n", i - 1,
                  store_strerror(err));
    assert_int_equal(store_stats_get(p->st, &s), 0);
    assert_true(s.stored_bytes <= 4ull << 20);
    kill(reader, SIGKILL);
    assert_int_equal(waitpid(reader, NULL, 0), reader);
    p->reader = 0;
    /* The dead reader's slot is cleared and its pages are free again. */
    for (i = 0; i < 40; i++) {
        snprintf(key, sizeof key, "c%d", i % 8);
        assert_int_equal(fx_put(p->st, NULL, key, 1u << 20, (unsigned)i, NULL), 0);
    }
    fx_expect(p->st, NULL, "c7", 1u << 20, 39);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(full_disk_should_fail_cleanly_and_recover, sp_setup,
                                        sp_teardown),
        cmocka_unit_test_setup_teardown(stopped_reader_should_bound_space_then_release_it,
                                        sp_setup, sp_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
