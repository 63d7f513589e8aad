/* fixture.h -- a fresh store in a temporary directory for each test. */
#ifndef OFFLOADFS_TEST_FIXTURE_H
#define OFFLOADFS_TEST_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "store/store.h"

struct fx {
    char dir[64];
    store *st;
};

static inline void fx_rmrf(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

/* Makes DIR/store (not yet created) and opens it with FLAGS. */
static inline int fx_setup_flags(void **state, unsigned flags)
{
    struct fx *f = calloc(1, sizeof *f);
    char base[] = "/tmp/offloadfs-ut.XXXXXX";
    assert_non_null(f);
    assert_non_null(mkdtemp(base));
    snprintf(f->dir, sizeof f->dir, "%s/store", base);
    assert_int_equal(store_open(&f->st, f->dir, STORE_CREATE | flags), 0);
    *state = f;
    return 0;
}

static inline int fx_setup(void **state)
{
    return fx_setup_flags(state, STORE_NOSYNC);
}

/* A store that keeps values raw (STORE_COMPRESS_NONE): for tests of the
 * raw layout (chunks, pages, the disk filling up). */
static inline int fx_setup_raw(void **state)
{
    fx_setup_flags(state, STORE_NOSYNC);
    assert_int_equal(store_compression_set(((struct fx *)*state)->st, STORE_COMPRESS_NONE), 0);
    return 0;
}

static inline int fx_teardown(void **state)
{
    struct fx *f = *state;
    char base[64];
    store_close(f->st);
    snprintf(base, sizeof base, "%s", f->dir);
    *strrchr(base, '/') = '\0';
    fx_rmrf(base);
    free(f);
    return 0;
}

/* Puts LEN bytes of a pattern derived from SEED; returns the store's code. */
static inline int fx_put(store *st, const char *ns, const char *key, size_t len,
                         unsigned seed, store_entry *out)
{
    unsigned char *buf = malloc(len ? len : 1);
    int rc;
    for (size_t i = 0; i < len; i++)
        buf[i] = (unsigned char)(seed * 131u + i * 7u + (i >> 8));
    rc = store_put(st, ns, key, buf, len, NULL, out);
    free(buf);
    return rc;
}

/* Asserts that KEY holds exactly the pattern fx_put wrote with SEED. */
static inline void fx_expect(store *st, const char *ns, const char *key, size_t len,
                             unsigned seed)
{
    void *buf;
    size_t got;
    assert_int_equal(store_get(st, ns, key, &buf, &got, NULL, NULL), 0);
    assert_int_equal(got, len);
    for (size_t i = 0; i < len; i++)
        if (((unsigned char *)buf)[i] != (unsigned char)(seed * 131u + i * 7u + (i >> 8)))
            fail_msg("key %s byte %zu differs", key, i);
    free(buf);
}

static inline void fx_limits(store *st, uint64_t total, uint64_t result)
{
    store_limits l = {total, result, 0};
    assert_int_equal(store_limits_set(st, &l, NULL), 0);
}

#endif
