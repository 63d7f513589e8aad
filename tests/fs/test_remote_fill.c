/* test_remote_fill.c -- the daemon's whole-result reads without FUSE or
 * Ceph: fs/fill.c and fs/keep.c (with lookup.c, window.c, conn.c under
 * them) over the tier and the in-memory remote (remote/mem/mem.h, linked
 * instead of libremote.a). A read goes as ops.c's op_read_remote() sends
 * it: the store's cached copy of the version, else a fill of the whole
 * result, else the windows. The replies are caught by wrapping
 * fuse_reply_buf() and fuse_reply_err(); a request is a dummy pointer.
 * Waits for the helper threads (the copy kept, a fill freed) are polls
 * with a deadline, never a measure of speed.
 */
/* WRAP: -Wl,--wrap=fuse_reply_buf -Wl,--wrap=fuse_reply_err -Wl,--wrap=fuse_req_interrupted */
#include "fs/fs.h"
#include "fs/conn.h"
#include "fs/fill.h"
#include "fs/keep.h"
#include "fs/lookup.h"
#include "fs/window.h"
#include "common/clock.h"
#include "remote/mem/mem.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#define BUCKET "mem-fs"
#define NS "ns"
#define MIB (1024u * 1024u)
#define WAIT_MS 30000u /* a deadline for the helpers, never a speed */

/* ---- the replies ------------------------------------------------------- */

/* What the last reply said: an error, or the bytes of a read. Replies
 * from a thread other than the test's (a fill's helpers must never reply)
 * are only counted: cmocka cannot fail a test from there. */
static struct {
    int replies;   /* how many were sent by the test's thread */
    int foreign;   /* how many by any other thread */
    int err;       /* fuse_reply_err()'s value, 0 after fuse_reply_buf() */
    char *buf;     /* a copy of fuse_reply_buf()'s bytes */
    size_t len;
} rep;

static pthread_t test_thread;

int __wrap_fuse_reply_buf(fuse_req_t req, const char *buf, size_t size);
int __wrap_fuse_reply_buf(fuse_req_t req, const char *buf, size_t size)
{
    (void)req;
    if (!pthread_equal(pthread_self(), test_thread)) {
        __atomic_add_fetch(&rep.foreign, 1, __ATOMIC_SEQ_CST);
        return 0;
    }
    free(rep.buf);
    rep.buf = malloc(size ? size : 1);
    assert_non_null(rep.buf);
    if (size)
        memcpy(rep.buf, buf, size);
    rep.len = size;
    rep.err = 0;
    rep.replies++;
    return 0;
}

int __wrap_fuse_reply_err(fuse_req_t req, int err);
int __wrap_fuse_reply_err(fuse_req_t req, int err)
{
    (void)req;
    if (!pthread_equal(pthread_self(), test_thread)) {
        __atomic_add_fetch(&rep.foreign, 1, __ATOMIC_SEQ_CST);
        return 0;
    }
    rep.err = err;
    rep.len = 0;
    rep.replies++;
    return 0;
}

int __wrap_fuse_req_interrupted(fuse_req_t req);
int __wrap_fuse_req_interrupted(fuse_req_t req)
{
    (void)req;
    return 0;
}

/* ---- the fixture -------------------------------------------------------- */

struct fx {
    char dir[64];
    struct ofs fs;
    remote_mem *m;
    fuse_req_t req; /* never dereferenced: the replies are wrapped */
};

/* A store naming s3://BUCKET/pre, the daemon state over it as main.c makes
 * it for a writable store with a remote: its tier, connections, slots,
 * windows and fills, keeping cached copies (fs.keep). Two retries with
 * the default backoff, a 1 s stall limit. */
static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    char base[] = "/tmp/offloadfs-fsfill.XXXXXX";
    assert_non_null(f);
    assert_non_null(mkdtemp(base));
    snprintf(f->dir, sizeof f->dir, "%s/store", base);
    assert_non_null(f->m = remote_mem_bucket(BUCKET));
    assert_int_equal(store_open(&f->fs.st, f->dir, STORE_CREATE | STORE_NOSYNC), 0);
    assert_int_equal(store_remote_set(f->fs.st, "s3://" BUCKET "/pre"), 0);
    f->fs.ns = NS;
    f->fs.remote_ttl = 3600;
    f->fs.remote_stall = 1;
    f->fs.keep = 1;
    assert_int_equal(ofs_conn_open(&f->fs), 0);
    assert_non_null(f->fs.tier);
    assert_int_equal(ofs_lookup_init(&f->fs), 0);
    assert_int_equal(ofs_window_init(&f->fs), 0);
    assert_int_equal(ofs_fill_init(&f->fs), 0);
    f->req = (fuse_req_t)f;
    memset(&rep, 0, sizeof rep);
    test_thread = pthread_self();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    char cmd[128];
    ofs_fill_free(&f->fs); /* waits for the helpers: before the connections */
    assert_null(f->fs.fills);
    ofs_window_free(&f->fs);
    ofs_lookup_free(&f->fs);
    ofs_conn_close(&f->fs);
    store_close(f->fs.st);
    remote_mem_reset();
    assert_int_equal(rep.foreign, 0); /* no helper ever replied */
    free(rep.buf);
    memset(&rep, 0, sizeof rep);
    snprintf(cmd, sizeof cmd, "rm -rf '%.*s'", (int)(strlen(f->dir) - strlen("/store")), f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

/* LEN bytes of a pattern that differs at every offset of a chunk, with
 * SEED telling two versions apart; malloc'd, yours. */
static char *pattern(size_t len, unsigned seed)
{
    char *p = malloc(len ? len : 1);
    assert_non_null(p);
    for (size_t i = 0; i < len; i++)
        p[i] = (char)((i * 31u + i / 4099u + seed) & 0xff);
    return p;
}

/* Stores DATA (LEN bytes) on the remote as result KEY of NS. */
static void mem_put(struct fx *f, const char *key, const char *data, size_t len)
{
    char name[256];
    remote_meta meta = {"grep", NULL, len, 1700000000};
    snprintf(name, sizeof name, "pre/" NS "/%s", key);
    assert_int_equal(remote_mem_put(f->m, name, data, len, &meta, 0), 0);
}

static uint64_t count(_Atomic uint64_t *c)
{
    return atomic_load(c);
}

/* Which part answered a read. */
enum by { BY_COPY = 1, BY_FILL, BY_WINDOW };

/* Reads SIZE bytes at OFF of remote inode INO as ops.c's op_read_remote()
 * does: the store's cached copy of the version, else a fill, else the
 * windows, with exactly one reply. Returns which answered; *ERR gets the
 * reply's error (0: rep.buf holds the bytes). */
/* Replies to the request with SIZE bytes at OFF of cached copy COPY, as
 * ops.c does (read_version()). */
static void read_copy(struct fx *f, uint64_t copy, size_t size, off_t off)
{
    char *buf = malloc(size ? size : 1);
    size_t n = 0;
    assert_non_null(buf);
    assert_int_equal(store_read(f->fs.st, copy, (uint64_t)off, buf, size, &n), 0);
    fuse_reply_buf(f->req, buf, n);
    free(buf);
}

static enum by read_remote(struct fx *f, fuse_ino_t ino, size_t size, off_t off, int *err)
{
    struct ofs_object o;
    store_entry meta;
    uint64_t copy;
    int replies = rep.replies;
    enum by by;
    assert_int_equal(ofs_lookup_object(&f->fs, ino, &o), 0);
    if (ofs_keep_find(&f->fs, o.key, o.etag, &copy)) {
        read_copy(f, copy, size, off);
        by = BY_COPY;
    } else {
        tier_conn *c = ofs_conn_get(&f->fs);
        int got_meta = ofs_lookup_meta(&f->fs, ino, &meta) == 0;
        int filled = ofs_fill_read(&f->fs, c, f->req, &o, got_meta ? &meta : NULL, size, off);
        if (filled == OFS_FILL_REPLIED) {
            by = BY_FILL;
        } else {
            assert_int_equal(rep.replies, replies); /* 0: replied nothing */
            if (filled == OFS_FILL_KEPT) { /* kept since ofs_keep_find() above */
                assert_true(ofs_keep_find(&f->fs, o.key, o.etag, &copy));
                read_copy(f, copy, size, off);
                by = BY_COPY;
            } else {
                ofs_window_read(&f->fs, c, f->req, &o, size, off);
                by = BY_WINDOW;
            }
        }
    }
    assert_int_equal(rep.replies, replies + 1); /* exactly one reply */
    *err = rep.err;
    return by;
}

/* Looks up KEY and returns its inode. */
static fuse_ino_t lookup(struct fx *f, const char *key)
{
    store_entry e;
    uint64_t miss;
    assert_int_equal(ofs_lookup_name(&f->fs, key, &e, &miss), 0);
    assert_true(ofs_remote_ino((fuse_ino_t)e.version));
    return (fuse_ino_t)e.version;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits (WAIT_MS at most, a deadline) until the store holds a cached copy
 * of INO's version; 1 when it came. */
static int wait_copy(struct fx *f, fuse_ino_t ino)
{
    struct ofs_object o;
    uint64_t v;
    assert_int_equal(ofs_lookup_object(&f->fs, ino, &o), 0);
    for (uint64_t end = common_clock_ms() + WAIT_MS; common_clock_ms() < end; sleep_ms(5))
        if (ofs_keep_find(&f->fs, o.key, o.etag, &v))
            return 1;
    return 0;
}

/* Waits (WAIT_MS at most) until every fill has ended: ofs_fill_sweep() far
 * in the future frees each fill no thread uses, until window_bytes is
 * WANT. 1 when it is. */
static int wait_fills_gone(struct fx *f, uint64_t want)
{
    for (uint64_t end = common_clock_ms() + WAIT_MS; common_clock_ms() < end; sleep_ms(5)) {
        ofs_fill_sweep(&f->fs, common_clock_ms() + OFS_RWIN_IDLE_MS + 1);
        if (count(&f->fs.count.window_bytes) == want)
            return 1;
    }
    return 0;
}

/* Waits (WAIT_MS at most) until a fetch has failed and the fill that met
 * it has ended: ofs_fill_sweep() at the present time frees the failed
 * fills no thread uses, until window_bytes is the lookup's window alone.
 * 1 when it is. */
static int wait_failed_fill_gone(struct fx *f)
{
    for (uint64_t end = common_clock_ms() + WAIT_MS; common_clock_ms() < end; sleep_ms(5)) {
        ofs_fill_sweep(&f->fs, common_clock_ms());
        if (count(&f->fs.count.fetch_errors) >= 1 && count(&f->fs.count.window_bytes) == OFS_RWIN_FIRST)
            return 1;
    }
    return 0;
}

/* Asserts that the store's result KEY is the LEN bytes at DATA. */
static void assert_stored(struct fx *f, const char *key, const char *data, size_t len)
{
    void *all = NULL;
    size_t all_len = 0;
    assert_int_equal(store_get(f->fs.st, NS, key, &all, &all_len, NULL, NULL), 0);
    assert_int_equal(all_len, len);
    assert_memory_equal(all, data, len);
    free(all);
}

/* Whether the store holds any entry (a copy) under KEY. */
static int stored(struct fx *f, const char *key)
{
    store_entry e;
    return store_lookup(f->fs.st, NS, key, &e, NULL) == 0;
}

/* ---- cases ---------------------------------------------------------------- */

static void random_reads_should_fetch_the_result_once_and_keep_a_copy(void **state)
{
    struct fx *f = *state;
    const size_t len = 5u * MIB, piece = 4096;
    char *data = pattern(len, 1);
    int err;
    mem_put(f, "big", data, len);
    fuse_ino_t ino = lookup(f, "big");
    assert_int_equal(count(&f->fs.count.fetch_bytes), OFS_RWIN_FIRST); /* the lookup's */
    srand(12345);
    for (int i = 0; i < 300; i++) {
        size_t off = ((size_t)rand() * 4099u) % (len - piece + 1);
        enum by by = read_remote(f, ino, piece, (off_t)off, &err);
        /* The first starts the fill; the helpers may end it, and keep the
         * copy, before the last (valgrind: long before). */
        assert_true(by == BY_FILL || (i > 0 && by == BY_COPY));
        assert_int_equal(err, 0);
        assert_int_equal(rep.len, piece);
        assert_memory_equal(rep.buf, data + off, piece);
    }
    /* Moved once, whatever the order of the reads. */
    uint64_t moved = count(&f->fs.count.fetch_bytes);
    assert_in_range(moved, len / 2, len + len / 5 + OFS_RWIN_FIRST);
    /* Once the helpers are done, the store holds the copy of that version. */
    assert_true(wait_copy(f, ino));
    assert_true(wait_fills_gone(f, OFS_RWIN_FIRST)); /* the lookup's window stays */
    moved = count(&f->fs.count.fetch_bytes);
    assert_int_equal(moved, len + OFS_RWIN_FIRST); /* every chunk exactly once */
    struct ofs_object o;
    store_entry e;
    char etag[STORE_ETAG_MAX + 1];
    assert_int_equal(ofs_lookup_object(&f->fs, ino, &o), 0);
    assert_int_equal(store_lookup(f->fs.st, NS, "big", &e, NULL), 0);
    assert_int_equal(e.size, len);
    assert_int_equal(store_cached(f->fs.st, e.version, etag, sizeof etag), 1);
    assert_string_equal(etag, o.etag);
    assert_stored(f, "big", data, len);
    assert_int_equal(count(&f->fs.count.cache_misses), 1);
    assert_int_equal(count(&f->fs.count.cache_copies), 1);
    /* A later read goes to the copy: no new request. */
    unsigned long asked = remote_mem_requests(f->m, REMOTE_MEM_ANY);
    assert_int_equal(read_remote(f, ino, piece, 3 * MIB + 17, &err), BY_COPY);
    assert_int_equal(err, 0);
    assert_memory_equal(rep.buf, data + 3 * MIB + 17, piece);
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_ANY), asked);
    assert_int_equal(count(&f->fs.count.fetch_bytes), moved);
    free(data);
}

static void sequential_reads_should_fetch_the_result_once(void **state)
{
    struct fx *f = *state;
    const size_t len = 5u * MIB + 12345, piece = 128u << 10;
    char *data = pattern(len, 2);
    int err;
    mem_put(f, "seq", data, len);
    fuse_ino_t ino = lookup(f, "seq");
    for (size_t off = 0; off < len; off += piece) {
        size_t want = len - off < piece ? len - off : piece;
        enum by by = read_remote(f, ino, piece, (off_t)off, &err);
        assert_true(by == BY_FILL || by == BY_COPY); /* the copy may be kept before the last piece */
        assert_int_equal(err, 0);
        assert_int_equal(rep.len, want);
        assert_memory_equal(rep.buf, data + off, want);
    }
    /* Past the end: no bytes. */
    read_remote(f, ino, piece, (off_t)len, &err);
    assert_int_equal(err, 0);
    assert_int_equal(rep.len, 0);
    assert_true(count(&f->fs.count.fetch_bytes) <= len + len / 5 + OFS_RWIN_FIRST);
    assert_true(wait_copy(f, ino));
    assert_true(wait_fills_gone(f, OFS_RWIN_FIRST));
    assert_int_equal(count(&f->fs.count.fetch_bytes), len + OFS_RWIN_FIRST);
    assert_int_equal(count(&f->fs.count.cache_misses), 1);
    free(data);
}

/* What the test's thread had replied when the remote was asked again. */
struct seen {
    const char *want;  /* the bytes the read asked for */
    size_t len;
    int replies;       /* rep.replies then */
    int same;          /* rep held WANT then */
};

static int see_replies(void *arg, remote_mem_op op, const char *name)
{
    struct seen *s = arg;
    (void)op;
    (void)name;
    s->replies = rep.replies;
    s->same = rep.err == 0 && rep.len == s->len && memcmp(rep.buf, s->want, s->len) == 0;
    return 0;
}

static void a_read_should_be_answered_before_the_rest_of_its_chunk(void **state)
{
    struct fx *f = *state;
    const size_t len = MIB, piece = 4096; /* one chunk: no helper, the reader fetches it */
    char *data = pattern(len, 12);
    int err;
    mem_put(f, "head", data, len);
    fuse_ino_t ino = lookup(f, "head");
    /* The chunk's GET breaks after 256 KiB; its retry (which fetches the
     * rest) looks at what the read was answered by then. */
    struct seen seen = {data, piece, -1, 0};
    remote_mem_fault cut = {.op = REMOTE_MEM_GET, .times = 1, .cut = 256u << 10};
    remote_mem_fault look = {.op = REMOTE_MEM_GET, .skip = 1, .times = 1, .hook = see_replies, .hook_arg = &seen};
    assert_int_equal(remote_mem_fault_add(f->m, &cut), 0);
    assert_int_equal(remote_mem_fault_add(f->m, &look), 0);
    int before = rep.replies;
    assert_int_equal(read_remote(f, ino, piece, 0, &err), BY_FILL);
    assert_int_equal(seen.replies, before + 1); /* answered while the chunk was still coming */
    assert_true(seen.same);
    assert_int_equal(err, 0);
    assert_memory_equal(rep.buf, data, piece);
    /* The chunk came whole all the same: the copy holds every byte. */
    assert_true(wait_copy(f, ino));
    assert_stored(f, "head", data, len);
    free(data);
}

static void a_mount_that_keeps_no_copies_should_read_through_the_windows(void **state)
{
    struct fx *f = *state;
    const size_t len = 5u * MIB;
    char *data = pattern(len, 3);
    int err;
    f->fs.keep = 0; /* a read-only store */
    mem_put(f, "k", data, len);
    fuse_ino_t ino = lookup(f, "k");
    assert_int_equal(ofs_keep_max(&f->fs), 0);
    assert_int_equal(read_remote(f, ino, 4096, 3 * MIB, &err), BY_WINDOW);
    assert_int_equal(err, 0);
    assert_memory_equal(rep.buf, data + 3 * MIB, 4096);
    assert_true(count(&f->fs.count.fetch_bytes) < len); /* a window, not the whole */
    assert_int_equal(count(&f->fs.count.cache_misses), 0);
    assert_false(stored(f, "k"));
    free(data);
}

static void a_result_the_store_would_not_keep_should_read_through_the_windows(void **state)
{
    struct fx *f = *state;
    const size_t len = 5u * MIB;
    char *data = pattern(len, 4);
    store_limits lim = {.max_total_bytes = 4u * MIB};
    int err;
    assert_int_equal(store_limits_set(f->fs.st, &lim, NULL), 0);
    assert_int_equal(ofs_keep_max(&f->fs), 2u * MIB);
    mem_put(f, "k", data, len);
    fuse_ino_t ino = lookup(f, "k");
    assert_int_equal(read_remote(f, ino, 4096, 4 * MIB, &err), BY_WINDOW);
    assert_int_equal(err, 0);
    assert_memory_equal(rep.buf, data + 4 * MIB, 4096);
    assert_true(count(&f->fs.count.fetch_bytes) < len); /* a window, not the whole */
    assert_false(stored(f, "k"));
    free(data);
}

static void a_result_that_came_with_its_lookup_should_not_be_filled(void **state)
{
    struct fx *f = *state;
    const size_t len = OFS_RWIN_FIRST;
    char *data = pattern(len, 5), *buf = malloc(len);
    struct ofs_object o;
    int err;
    assert_non_null(buf);
    mem_put(f, "small", data, len);
    fuse_ino_t ino = lookup(f, "small");
    assert_int_equal(count(&f->fs.count.cache_misses), 0); /* a lookup keeps nothing */
    /* The whole of it came with the lookup: never a fill, the window answers. */
    assert_int_equal(ofs_lookup_object(&f->fs, ino, &o), 0);
    assert_int_equal(ofs_fill_read(&f->fs, ofs_conn_get(&f->fs), f->req, &o, NULL, 4096, 0), 0);
    assert_int_equal(rep.replies, 0);
    assert_int_equal(read_remote(f, ino, 4096, 100, &err), BY_WINDOW);
    assert_int_equal(err, 0);
    assert_memory_equal(rep.buf, data + 100, 4096);
    /* After the read ops.c keeps it from that window (keep_small()). */
    assert_int_equal(ofs_window_copy(&f->fs, ino, len, buf), 0);
    assert_memory_equal(buf, data, len);
    ofs_keep_copy(&f->fs, o.key, o.etag, NULL, buf, len);
    assert_int_equal(count(&f->fs.count.cache_misses), 1);
    assert_int_equal(read_remote(f, ino, len, 0, &err), BY_COPY);
    assert_int_equal(err, 0);
    assert_memory_equal(rep.buf, data, len);
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_GET), 1); /* the lookup alone */
    free(buf);
    free(data);
}

static void a_version_replaced_before_the_read_should_answer_enodata(void **state)
{
    struct fx *f = *state;
    const size_t len = 5u * MIB;
    char *v1 = pattern(len, 6), *v2 = pattern(len, 7);
    int err;
    mem_put(f, "k", v1, len);
    fuse_ino_t ino = lookup(f, "k");
    mem_put(f, "k", v2, len); /* another host writes k again, as many bytes */
    /* The inode pins version 1: never a byte of version 2, wherever read. */
    static const size_t at[] = {0, 3 * MIB, 5 * MIB - 4096};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        assert_int_equal(read_remote(f, ino, 4096, (off_t)at[i], &err), BY_FILL);
        assert_int_equal(err, ENODATA);
    }
    assert_int_equal(count(&f->fs.count.evicted_reads), 3);
    assert_int_equal(count(&f->fs.count.fetch_errors), 0); /* gone is not a failure */
    assert_true(wait_fills_gone(f, OFS_RWIN_FIRST));
    assert_false(stored(f, "k"));
    assert_int_equal(count(&f->fs.count.cache_misses), 0);
    free(v1);
    free(v2);
}

static void a_failing_remote_should_answer_eio_and_a_later_read_fill_again(void **state)
{
    struct fx *f = *state;
    const size_t len = 5u * MIB;
    char *data = pattern(len, 8);
    int err;
    mem_put(f, "k", data, len);
    fuse_ino_t ino = lookup(f, "k");
    remote_mem_fault fault = {.op = REMOTE_MEM_GET, .err = REMOTE_EDENIED};
    assert_int_equal(remote_mem_fault_add(f->m, &fault), 0);
    assert_int_equal(read_remote(f, ino, 4096, 3 * MIB, &err), BY_FILL);
    assert_int_equal(err, EIO);
    assert_true(count(&f->fs.count.fetch_errors) >= 1);
    assert_true(wait_fills_gone(f, OFS_RWIN_FIRST));
    assert_false(stored(f, "k"));
    assert_int_equal(count(&f->fs.count.cache_misses), 0);
    /* Nothing is kept broken: once the remote answers, a new fill does. */
    remote_mem_fault_clear(f->m);
    assert_int_equal(read_remote(f, ino, 4096, 3 * MIB, &err), BY_FILL);
    assert_int_equal(err, 0);
    assert_memory_equal(rep.buf, data + 3 * MIB, 4096);
    assert_true(wait_copy(f, ino));
    free(data);
}

/* A failure only while the fill is under way (FAULT acts once): the read
 * that meets it answers EIO, and the next one a fill of its own, whole. */
static void fail_once_during_a_fill(struct fx *f, const remote_mem_fault *fault)
{
    const size_t len = 5u * MIB;
    char *data = pattern(len, 9);
    int err;
    mem_put(f, "k", data, len);
    fuse_ino_t ino = lookup(f, "k");
    assert_int_equal(remote_mem_fault_add(f->m, fault), 0);
    assert_int_equal(read_remote(f, ino, 4096, 0, &err), BY_FILL);
    assert_true(err == EIO || err == 0); /* EIO when its own GET met the fault */
    /* A helper's GET may still be under way: wait until the fault has acted
     * and the failed fill has ended (a sweep now drops failed fills, not
     * idle ones). Every read after answers the bytes, from a new fill (or
     * its copy, once kept), never the failed fill's error. */
    assert_true(wait_failed_fill_gone(f));
    for (size_t i = 0; i < 3; i++) {
        enum by by = read_remote(f, ino, 4096, (off_t)(i * 2 * MIB + 7), &err);
        assert_true(by == BY_FILL || by == BY_COPY);
        assert_int_equal(err, 0);
        assert_memory_equal(rep.buf, data + i * 2 * MIB + 7, 4096);
    }
    assert_true(wait_copy(f, ino));
    /* The keeper counts its copy after the store holds it: once it ends. */
    assert_true(wait_fills_gone(f, OFS_RWIN_FIRST));
    assert_int_equal(count(&f->fs.count.cache_copies), 1);
    free(data);
}

/* The fill's first GET fails: most often the reading thread's own. */
static void a_failure_during_a_fill_should_not_be_reused(void **state)
{
    remote_mem_fault fault = {.op = REMOTE_MEM_GET, .err = REMOTE_EDENIED, .times = 1};
    fail_once_during_a_fill(*state, &fault);
}

/* The fill's second GET fails late, most often a helper's, after the first
 * read was answered: the race the wait above closes. */
static void a_late_failure_during_a_fill_should_not_be_reused(void **state)
{
    remote_mem_fault fault = {.op = REMOTE_MEM_GET, .err = REMOTE_EDENIED, .skip = 1, .times = 1, .delay_ms = 300};
    fail_once_during_a_fill(*state, &fault);
}

/* Once its copy is kept, a fill is unmapped at its last use, with no
 * sweep; a read that looked for the copy just before it was kept is sent
 * to it (OFS_FILL_KEPT), never to a new fill. */
static void a_kept_fill_should_be_unmapped_at_its_last_use(void **state)
{
    struct fx *f = *state;
    const size_t len = 5u * MIB;
    char *data = pattern(len, 10);
    struct ofs_object o;
    int err;
    mem_put(f, "k", data, len);
    fuse_ino_t ino = lookup(f, "k");
    uint64_t lookup_window = count(&f->fs.count.window_bytes);
    assert_int_equal(lookup_window, OFS_RWIN_FIRST);
    assert_int_equal(read_remote(f, ino, 4096, 0, &err), BY_FILL);
    assert_int_equal(err, 0);
    assert_true(wait_copy(f, ino));
    uint64_t end = common_clock_ms() + WAIT_MS;
    while (count(&f->fs.count.window_bytes) != lookup_window && common_clock_ms() < end)
        sleep_ms(5);
    assert_int_equal(count(&f->fs.count.window_bytes), lookup_window);
    /* The read that found no copy a moment ago: no fill, no reply. */
    int replies = rep.replies;
    assert_int_equal(ofs_lookup_object(&f->fs, ino, &o), 0);
    assert_int_equal(ofs_fill_read(&f->fs, ofs_conn_get(&f->fs), f->req, &o, NULL, 4096, 0), OFS_FILL_KEPT);
    assert_int_equal(rep.replies, replies);
    assert_int_equal(count(&f->fs.count.window_bytes), lookup_window);
    ofs_window_sweep(&f->fs, common_clock_ms() + OFS_RWIN_IDLE_MS + 1);
    assert_int_equal(count(&f->fs.count.window_bytes), 0);
    /* The copy answers from now on. */
    assert_int_equal(read_remote(f, ino, 4096, 4 * MIB, &err), BY_COPY);
    assert_memory_equal(rep.buf, data + 4 * MIB, 4096);
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(random_reads_should_fetch_the_result_once_and_keep_a_copy, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(sequential_reads_should_fetch_the_result_once, setup, teardown),
        cmocka_unit_test_setup_teardown(a_read_should_be_answered_before_the_rest_of_its_chunk, setup, teardown),
        cmocka_unit_test_setup_teardown(a_mount_that_keeps_no_copies_should_read_through_the_windows, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_result_the_store_would_not_keep_should_read_through_the_windows,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(a_result_that_came_with_its_lookup_should_not_be_filled, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_version_replaced_before_the_read_should_answer_enodata, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_failing_remote_should_answer_eio_and_a_later_read_fill_again, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_failure_during_a_fill_should_not_be_reused, setup, teardown),
        cmocka_unit_test_setup_teardown(a_late_failure_during_a_fill_should_not_be_reused, setup, teardown),
        cmocka_unit_test_setup_teardown(a_kept_fill_should_be_unmapped_at_its_last_use, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
