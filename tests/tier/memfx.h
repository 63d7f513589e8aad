/* memfx.h -- fixtures of the tier's unit tests over the in-memory remote
 * (remote/mem/mem.h; the test links build/libremote_mem.a instead of
 * build/libremote.a): two stores -- two hosts -- in a scratch directory,
 * both naming s3://MFX_BUCKET/MFX_PREFIX, their tiers and one connection
 * each. No server, no FUSE: a fault is a remote_mem_fault_add() away. */
#ifndef OFFLOADFS_TEST_MEMFX_H
#define OFFLOADFS_TEST_MEMFX_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "remote/mem/mem.h"
#include "tier/tier.h"

#define MFX_BUCKET "mem-bucket"
#define MFX_PREFIX "pre/fix"

struct mfx {
    char base[64], dir_a[96], dir_b[96];
    store *a, *b;
    tier *ta, *tb;
    remote_conn *ca, *cb;
    remote_mem *m;
};

/* Two retries (three attempts) 1 ms apart, a 1 s stall limit, listings
 * of 2 keys a page so that every listing of a few keys has pages. */
static const remote_options mfx_opt = {.connect_ms = 100, .stall_s = 1, .retries = 2, .backoff_ms = 1,
                                       .list_page = 2};

static inline int mfx_setup(void **state)
{
    struct mfx *f = calloc(1, sizeof *f);
    char msg[256];
    assert_non_null(f);
    snprintf(f->base, sizeof f->base, "/tmp/offloadfs-tiermem.XXXXXX");
    assert_non_null(mkdtemp(f->base));
    snprintf(f->dir_a, sizeof f->dir_a, "%s/a", f->base);
    snprintf(f->dir_b, sizeof f->dir_b, "%s/b", f->base);
    assert_non_null(f->m = remote_mem_bucket(MFX_BUCKET));
    assert_int_equal(store_open(&f->a, f->dir_a, STORE_CREATE | STORE_NOSYNC), 0);
    assert_int_equal(store_open(&f->b, f->dir_b, STORE_CREATE | STORE_NOSYNC), 0);
    assert_int_equal(store_remote_set(f->a, "s3://" MFX_BUCKET "/" MFX_PREFIX), 0);
    assert_int_equal(store_remote_set(f->b, "s3://" MFX_BUCKET "/" MFX_PREFIX "/"), 0);
    assert_int_equal(tier_open(&f->ta, f->a, &mfx_opt, msg, sizeof msg), 0);
    assert_int_equal(tier_open(&f->tb, f->b, &mfx_opt, msg, sizeof msg), 0);
    assert_int_equal(remote_conn_new(&f->ca, tier_remote(f->ta)), 0);
    assert_int_equal(remote_conn_new(&f->cb, tier_remote(f->tb)), 0);
    *state = f;
    return 0;
}

static inline int mfx_teardown(void **state)
{
    struct mfx *f = *state;
    char cmd[128];
    remote_conn_free(f->ca);
    remote_conn_free(f->cb);
    tier_close(f->ta);
    tier_close(f->tb);
    store_close(f->a);
    store_close(f->b);
    remote_mem_reset();
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->base);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

/* Adds fault F (its op, name, ... given as designated initialisers). */
#define mfx_fault(f, ...)                                                          \
    do {                                                                           \
        remote_mem_fault fault_ = {__VA_ARGS__};                                   \
        assert_int_equal(remote_mem_fault_add((f)->m, &fault_), 0);                \
    } while (0)

/* Object NAME (relative to the prefix) holds exactly the N bytes WANT. */
static inline void mfx_assert_object(struct mfx *f, const char *name, const void *want, size_t n)
{
    char key[512];
    void *data;
    size_t len;
    snprintf(key, sizeof key, "%s/%s", MFX_PREFIX, name);
    assert_int_equal(remote_mem_get(f->m, key, &data, &len, NULL), 0);
    assert_int_equal(len, n);
    assert_memory_equal(data, want, n);
    free(data);
}

/* Object NAME (relative to the prefix) is not there. */
static inline void mfx_assert_no_object(struct mfx *f, const char *name)
{
    char key[512];
    snprintf(key, sizeof key, "%s/%s", MFX_PREFIX, name);
    assert_int_equal(remote_mem_get(f->m, key, NULL, NULL, NULL), REMOTE_ENOTFOUND);
}

/* Writes the N bytes at DATA as object NAME (relative to the prefix) behind the
 * tiers' back, as another host would; MTIME 0: now. */
static inline void mfx_put(struct mfx *f, const char *name, const void *data, size_t n, int64_t mtime)
{
    char key[512];
    snprintf(key, sizeof key, "%s/%s", MFX_PREFIX, name);
    assert_int_equal(remote_mem_put(f->m, key, data, n, NULL, mtime), 0);
}

static inline uint64_t mfx_pending(store *st)
{
    store_stats s;
    assert_int_equal(store_stats_get(st, &s), 0);
    return s.pending;
}

/* N bytes of a fixed pattern (SEED) in a new buffer. */
static inline unsigned char *mfx_bytes(size_t n, unsigned seed)
{
    unsigned char *p = malloc(n ? n : 1);
    uint32_t x = seed * 2654435761u + 1;
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (unsigned char)x;
    }
    return p;
}

/* A sink into a growing buffer. */
typedef struct mfx_sink {
    unsigned char *p;
    size_t len, cap;
} mfx_sink;

static inline int mfx_sink_fn(void *arg, const void *data, size_t n)
{
    mfx_sink *s = arg;
    if (s->len + n > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < s->len + n)
            cap *= 2;
        unsigned char *p = realloc(s->p, cap);
        if (!p)
            return -1;
        s->p = p;
        s->cap = cap;
    }
    memcpy(s->p + s->len, data, n);
    s->len += n;
    return 0;
}

#endif
