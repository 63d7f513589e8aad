/* test_remote_read.c -- the daemon's remote read path without FUSE or Ceph:
 * fs/lookup.c, fs/window.c, fs/listing.c, fs/conn.c over the tier and the
 * in-memory remote (remote/mem/mem.h, linked instead of libremote.a).
 * The replies a handler would send are caught by wrapping fuse_reply_buf()
 * and fuse_reply_err(); a request is a dummy pointer. Faults (errors,
 * stalls, cut bodies, a version replaced) come from the in-memory remote.
 */
/* WRAP: -Wl,--wrap=fuse_reply_buf -Wl,--wrap=fuse_reply_err -Wl,--wrap=fuse_req_interrupted */
#include "fs/fs.h"
#include "fs/conn.h"
#include "fs/listing.h"
#include "fs/lookup.h"
#include "fs/window.h"
#include "common/clock.h"
#include "remote/mem/mem.h"

#include <stdarg.h>
#include <stdatomic.h>
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

/* ---- the replies ------------------------------------------------------- */

/* What the last reply said: an error, or the bytes of a read. */
static struct {
    int replies;   /* how many were sent */
    int err;       /* fuse_reply_err()'s value, 0 after fuse_reply_buf() */
    char *buf;     /* a copy of fuse_reply_buf()'s bytes */
    size_t len;
} rep;

int __wrap_fuse_reply_buf(fuse_req_t req, const char *buf, size_t size);
int __wrap_fuse_reply_buf(fuse_req_t req, const char *buf, size_t size)
{
    (void)req;
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

/* A store naming s3://BUCKET/pre, the daemon state over it with its tier,
 * connections, slots, windows and listings, as main.c makes them. Two
 * retries with the default backoff, a 1 s stall limit. */
static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    char base[] = "/tmp/offloadfs-fsmem.XXXXXX";
    assert_non_null(f);
    assert_non_null(mkdtemp(base));
    snprintf(f->dir, sizeof f->dir, "%s/store", base);
    assert_non_null(f->m = remote_mem_bucket(BUCKET));
    assert_int_equal(store_open(&f->fs.st, f->dir, STORE_CREATE | STORE_NOSYNC), 0);
    assert_int_equal(store_remote_set(f->fs.st, "s3://" BUCKET "/pre"), 0);
    f->fs.ns = NS;
    f->fs.remote_ttl = 3600;
    f->fs.remote_stall = 1;
    assert_int_equal(ofs_conn_open(&f->fs), 0);
    assert_non_null(f->fs.tier);
    assert_int_equal(ofs_lookup_init(&f->fs), 0);
    assert_int_equal(ofs_window_init(&f->fs), 0);
    assert_int_equal(ofs_listing_init(&f->fs), 0);
    f->req = (fuse_req_t)f;
    memset(&rep, 0, sizeof rep);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    char cmd[128];
    ofs_listing_free(&f->fs);
    ofs_window_free(&f->fs);
    ofs_lookup_free(&f->fs);
    ofs_conn_close(&f->fs);
    store_close(f->fs.st);
    remote_mem_reset();
    free(rep.buf);
    memset(&rep, 0, sizeof rep);
    snprintf(cmd, sizeof cmd, "rm -rf '%.*s'", (int)(strlen(f->dir) - strlen("/store")), f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

/* LEN bytes of a pattern that differs at every offset of a window, with
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

/* Reads SIZE bytes at OFF of remote inode INO as ops.c does: what it is,
 * then the windows. Returns the reply's error (0: rep.buf holds the bytes). */
static int read_remote(struct fx *f, fuse_ino_t ino, size_t size, off_t off)
{
    struct ofs_object o;
    int replies = rep.replies;
    int err = ofs_lookup_object(&f->fs, ino, &o);
    if (err)
        return err;
    ofs_window_read(&f->fs, ofs_conn_get(&f->fs), f->req, &o, size, off);
    assert_int_equal(rep.replies, replies + 1); /* exactly one reply */
    return rep.err;
}

/* ofs_lookup_name()'s ms left of a miss, where a test does not look. */
static uint64_t miss;

static uint64_t count(_Atomic uint64_t *c)
{
    return atomic_load(c);
}

/* ---- lookups ------------------------------------------------------------- */

static void lookup_should_give_an_inode_and_keep_the_first_bytes_as_a_window(void **state)
{
    struct fx *f = *state;
    char *data = pattern(5000, 1);
    store_entry e;
    mem_put(f, "small", data, 5000);
    assert_int_equal(ofs_lookup_name(&f->fs, "small", &e, &miss), 0);
    assert_true(ofs_remote_ino((fuse_ino_t)e.version));
    assert_int_equal(e.size, 5000);
    assert_int_equal(e.has_tool, 1);
    assert_string_equal(e.tool, "grep");
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_GET), 1);
    /* The whole result came with the lookup: reading it asks nothing. */
    assert_int_equal(read_remote(f, (fuse_ino_t)e.version, 5000, 0), 0);
    assert_int_equal(rep.len, 5000);
    assert_memory_equal(rep.buf, data, 5000);
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_ANY), 1);
    assert_int_equal(count(&f->fs.count.fetches), 1);
    assert_int_equal(count(&f->fs.count.reads), 1);
    assert_int_equal(count(&f->fs.count.read_bytes), 5000);
    /* Past the end: no bytes, no request. */
    assert_int_equal(read_remote(f, (fuse_ino_t)e.version, 100, 5000), 0);
    assert_int_equal(rep.len, 0);
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_ANY), 1);
    free(data);
}

static void lookup_should_answer_enoent_enodata_and_reuse_its_answer(void **state)
{
    struct fx *f = *state;
    store_entry e, again;
    mem_put(f, "k", "bytes", 5);
    assert_int_equal(remote_mem_put(f->m, "pre/.tomb/" NS "/gone", "", 0, NULL, 0), 0);
    assert_int_equal(ofs_lookup_name(&f->fs, "never", &e, &miss), ENOENT);
    assert_int_equal(ofs_lookup_name(&f->fs, "gone", &e, &miss), ENODATA);
    assert_int_equal(ofs_lookup_name(&f->fs, "k", &e, &miss), 0);
    unsigned long n = remote_mem_requests(f->m, REMOTE_MEM_ANY);
    /* Within remote_ttl the answer is reused: the same inode, no request. */
    assert_int_equal(ofs_lookup_name(&f->fs, "k", &again, &miss), 0);
    assert_int_equal(again.version, e.version);
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_ANY), n);
    assert_int_equal(ofs_lookup_entry(&f->fs, (fuse_ino_t)e.version, &again), 0);
    assert_int_equal(again.size, 5);
    assert_int_equal(ofs_lookup_entry(&f->fs, (fuse_ino_t)e.version + 1, NULL), ENODATA);
    /* With remote_ttl 0 every lookup asks; a replaced object is a new inode. */
    f->fs.remote_ttl = 0;
    mem_put(f, "k", "other bytes", 11);
    assert_int_equal(ofs_lookup_name(&f->fs, "k", &again, &miss), 0);
    assert_true(again.version != e.version);
    assert_int_equal(again.size, 11);
    assert_int_equal(count(&f->fs.count.fetch_errors), 0);
}

static void lookup_should_answer_eio_when_the_remote_fails_and_count_a_fetch_error(void **state)
{
    struct fx *f = *state;
    store_entry e;
    mem_put(f, "k", "bytes", 5);
    remote_mem_fault fault = {.op = REMOTE_MEM_GET, .err = REMOTE_EDENIED};
    assert_int_equal(remote_mem_fault_add(f->m, &fault), 0);
    assert_int_equal(ofs_lookup_name(&f->fs, "k", &e, &miss), EIO);
    assert_int_equal(count(&f->fs.count.fetches), 1);
    assert_int_equal(count(&f->fs.count.fetch_errors), 1);
    assert_int_equal(count(&f->fs.count.lookup_errors), 0); /* never both */
    /* Nothing is kept broken: the next lookup asks again and works. */
    remote_mem_fault_clear(f->m);
    assert_int_equal(ofs_lookup_name(&f->fs, "k", &e, &miss), 0);
}

/* ---- windows ------------------------------------------------------------- */

static void window_read_should_serve_a_sequential_read_in_few_requests(void **state)
{
    struct fx *f = *state;
    const size_t len = 3u << 20, piece = 128u << 10;
    char *data = pattern(len, 2);
    store_entry e;
    mem_put(f, "big", data, len);
    assert_int_equal(ofs_lookup_name(&f->fs, "big", &e, &miss), 0);
    for (size_t off = 0; off < len; off += piece) {
        assert_int_equal(read_remote(f, (fuse_ino_t)e.version, piece, (off_t)off), 0);
        assert_int_equal(rep.len, piece);
        assert_memory_equal(rep.buf, data + off, piece);
    }
    /* 24 pieces; the lookup's 128 KiB, then windows of 256 KiB doubling to
     * OFS_RWIN_MAX, fetched ahead: a handful of GETs, never one a piece. */
    unsigned long gets = remote_mem_requests(f->m, REMOTE_MEM_GET);
    assert_in_range(gets, 3, 8);
    assert_int_equal(count(&f->fs.count.fetches), gets);
    assert_int_equal(count(&f->fs.count.reads), len / piece);
    /* A read in the middle again comes from a window still held, or one GET. */
    assert_int_equal(read_remote(f, (fuse_ino_t)e.version, 4096, (off_t)(len - 5000)), 0);
    assert_memory_equal(rep.buf, data + len - 5000, 4096);
    assert_in_range(remote_mem_requests(f->m, REMOTE_MEM_GET), gets, gets + 1);
    free(data);
}

static void window_sweep_should_free_idle_windows_and_a_read_should_fetch_again(void **state)
{
    struct fx *f = *state;
    const size_t len = 3u << 20, piece = 128u << 10;
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    char *data = pattern(len, 8), *small = pattern(5000, 9);
    store_entry e, s;
    mem_put(f, "big", data, len);
    mem_put(f, "small", small, 5000);
    assert_int_equal(count(&f->fs.count.window_bytes), 0);
    /* Every window below is used at or after T0 (no timing: valgrind may
     * take seconds over the reads). */
    uint64_t t0 = common_clock_ms();
    /* A lookup's window holds the pages its bytes filled. */
    assert_int_equal(ofs_lookup_name(&f->fs, "small", &s, &miss), 0);
    assert_int_equal(count(&f->fs.count.window_bytes), (5000 + page - 1) / page * page);
    assert_int_equal(ofs_lookup_name(&f->fs, "big", &e, &miss), 0);
    for (size_t off = 0; off < len; off += piece)
        assert_int_equal(read_remote(f, (fuse_ino_t)e.version, piece, (off_t)off), 0);
    uint64_t held = count(&f->fs.count.window_bytes);
    /* Four windows, the largest of them 2 MiB (3 MiB: 128K, 256K, 512K,
     * 1M, the last 1 MiB + 128K read ahead): more than 2 MiB, at most
     * four windows of OFS_RWIN_MAX. */
    assert_in_range(held, 2u << 20, (uint64_t)OFS_RWIN_COUNT * OFS_RWIN_MAX);
    /* Used since T0: a sweep then, or less than OFS_RWIN_IDLE_MS later,
     * frees none. */
    ofs_window_sweep(&f->fs, t0);
    ofs_window_sweep(&f->fs, t0 + OFS_RWIN_IDLE_MS - 1);
    assert_int_equal(count(&f->fs.count.window_bytes), held);
    unsigned long gets = remote_mem_requests(f->m, REMOTE_MEM_GET);
    assert_int_equal(read_remote(f, (fuse_ino_t)e.version, 4096, (off_t)(len - 5000)), 0);
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_GET), gets); /* still held */
    /* Idle for OFS_RWIN_IDLE_MS: every window goes, the gauge to 0. */
    ofs_window_sweep(&f->fs, common_clock_ms() + OFS_RWIN_IDLE_MS);
    assert_int_equal(count(&f->fs.count.window_bytes), 0);
    ofs_window_sweep(&f->fs, common_clock_ms() + OFS_RWIN_IDLE_MS); /* nothing left: no-op */
    assert_int_equal(count(&f->fs.count.window_bytes), 0);
    /* A read after the sweep fetches again, and gets the same bytes. */
    assert_int_equal(read_remote(f, (fuse_ino_t)e.version, 4096, (off_t)(len - 5000)), 0);
    assert_memory_equal(rep.buf, data + len - 5000, 4096);
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_GET), gets + 1);
    assert_int_equal(read_remote(f, (fuse_ino_t)s.version, 5000, 0), 0);
    assert_memory_equal(rep.buf, small, 5000);
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_GET), gets + 2);
    assert_true(count(&f->fs.count.window_bytes) > 0);
    /* Freeing the windows (unmount) takes the gauge to 0 too. */
    ofs_window_free(&f->fs);
    assert_int_equal(count(&f->fs.count.window_bytes), 0);
    ofs_window_sweep(&f->fs, common_clock_ms()); /* no windows: nothing to do */
    free(data);
    free(small);
}

static void window_read_should_answer_enodata_once_the_version_is_replaced(void **state)
{
    struct fx *f = *state;
    const size_t len = 1u << 20;
    char *v1 = pattern(len, 3), *v2 = pattern(len, 4);
    store_entry e;
    mem_put(f, "k", v1, len);
    assert_int_equal(ofs_lookup_name(&f->fs, "k", &e, &miss), 0);
    mem_put(f, "k", v2, len); /* another host writes k again */
    /* The inode pins version 1: never a byte of version 2. */
    assert_int_equal(read_remote(f, (fuse_ino_t)e.version, 4096, 512 << 10), ENODATA);
    assert_int_equal(count(&f->fs.count.evicted_reads), 1);
    assert_int_equal(count(&f->fs.count.fetch_errors), 0); /* gone is not a failure */
    /* The first bytes came with the lookup: still version 1's. */
    assert_int_equal(read_remote(f, (fuse_ino_t)e.version, 4096, 0), 0);
    assert_memory_equal(rep.buf, v1, 4096);
    /* An inode this mount never made is ENODATA too. */
    assert_int_equal(read_remote(f, (fuse_ino_t)e.version + 7, 10, 0), ENODATA);
    free(v1);
    free(v2);
}

static void window_read_should_resume_a_cut_body_on_retry(void **state)
{
    struct fx *f = *state;
    const size_t len = 1u << 20;
    char *data = pattern(len, 5);
    store_entry e;
    mem_put(f, "k", data, len);
    assert_int_equal(ofs_lookup_name(&f->fs, "k", &e, &miss), 0);
    unsigned long gets = remote_mem_requests(f->m, REMOTE_MEM_GET);
    remote_mem_fault fault = {.op = REMOTE_MEM_GET, .times = 1, .cut = 1000};
    assert_int_equal(remote_mem_fault_add(f->m, &fault), 0);
    assert_int_equal(read_remote(f, (fuse_ino_t)e.version, 8192, 300000), 0);
    assert_memory_equal(rep.buf, data + 300000, 8192);
    assert_true(remote_mem_requests(f->m, REMOTE_MEM_GET) >= gets + 2); /* cut, then resumed */
    assert_int_equal(count(&f->fs.count.fetch_errors), 0);
    free(data);
}

/* A read the remote fails (every attempt REMOTE_EDOWN): EIO after exactly
 * RETRIES + 1 attempts, one fetch, one fetch error. */
static void read_fails_after(struct fx *f, unsigned attempts)
{
    const size_t len = 1u << 20;
    char *data = pattern(len, 6);
    store_entry e;
    mem_put(f, "k", data, len);
    assert_int_equal(ofs_lookup_name(&f->fs, "k", &e, &miss), 0);
    remote_mem_requests_reset(f->m);
    remote_mem_fault fault = {.op = REMOTE_MEM_GET, .err = REMOTE_EDOWN};
    assert_int_equal(remote_mem_fault_add(f->m, &fault), 0);
    uint64_t fetches = count(&f->fs.count.fetches);
    assert_int_equal(read_remote(f, (fuse_ino_t)e.version, 4096, 600000), EIO);
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_GET), attempts);
    assert_int_equal(count(&f->fs.count.fetches), fetches + 1);
    assert_int_equal(count(&f->fs.count.fetch_errors), 1);
    /* The window is not kept broken: once the remote answers, so does the read. */
    remote_mem_fault_clear(f->m);
    assert_int_equal(read_remote(f, (fuse_ino_t)e.version, 4096, 600000), 0);
    assert_memory_equal(rep.buf, data + 600000, 4096);
    free(data);
}

static void window_read_should_answer_eio_after_its_retries(void **state)
{
    read_fails_after(*state, 3); /* the default: two retries */
}

static void window_read_should_try_once_without_retries(void **state)
{
    struct fx *f = *state;
    ofs_listing_free(&f->fs);
    ofs_window_free(&f->fs);
    ofs_lookup_free(&f->fs);
    ofs_conn_close(&f->fs);
    f->fs.remote_retries = OFS_REMOTE_NO_RETRY; /* -o remote_retries=0 */
    assert_int_equal(ofs_conn_open(&f->fs), 0);
    assert_int_equal(ofs_lookup_init(&f->fs), 0);
    assert_int_equal(ofs_window_init(&f->fs), 0);
    assert_int_equal(ofs_listing_init(&f->fs), 0);
    read_fails_after(f, 1);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void window_read_should_fail_a_stalled_remote_within_the_bound(void **state)
{
    struct fx *f = *state;
    const size_t len = 1u << 20;
    char *data = pattern(len, 7);
    store_entry e;
    mem_put(f, "k", data, len);
    assert_int_equal(ofs_lookup_name(&f->fs, "k", &e, &miss), 0);
    remote_mem_requests_reset(f->m);
    /* Every GET stalls past the stall limit (1 s): each attempt is aborted. */
    remote_mem_fault fault = {.op = REMOTE_MEM_GET, .delay_ms = 60000};
    assert_int_equal(remote_mem_fault_add(f->m, &fault), 0);
    double t0 = now_ms();
    assert_int_equal(read_remote(f, (fuse_ino_t)e.version, 4096, 600000), EIO);
    double took = now_ms() - t0;
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_GET), 3);
    /* A deadline, not a speed: far below the fault's 60 s, within ten
     * times the bound the tier computes (and the mount logs). */
    assert_true(took < 10.0 * (double)tier_bound_ms(f->fs.tier));
    free(data);
}

/* ---- listings ------------------------------------------------------------ */

struct names {
    char got[8][32];
    int n;
};

static int take(const struct ofs_listed *l, void *ctx)
{
    struct names *nm = ctx;
    if (nm->n < 8)
        snprintf(nm->got[nm->n++], sizeof nm->got[0], "%s", l->key);
    return 0;
}

/* What readdirplus does with a listed name (ops.c): an inode from the
 * listing, into the struct listed_fx CTX. */
struct listed_fx {
    struct fx *f;
    int n, rc;
    store_entry e[4];
};

static int take_listed(const struct ofs_listed *l, void *ctx)
{
    struct listed_fx *x = ctx;
    if (x->n < 4 && x->rc == 0)
        x->rc = ofs_lookup_listed(&x->f->fs, l->key, l->size, l->mtime, l->at_ms, &x->e[x->n++]);
    return 0;
}

static void listed_names_should_get_attributes_without_fetching_a_byte(void **state)
{
    struct fx *f = *state;
    struct ofs_rlist *held = NULL;
    struct listed_fx x = {f, 0, 0, {{0}}};
    struct ofs_listed l;
    store_entry e;
    char *data = pattern(300000, 3);
    mem_put(f, "big", data, 300000);
    mem_put(f, "small", "12345", 5);
    assert_int_equal(remote_mem_set_mtime(f->m, "pre/" NS "/big", 1700000123), 0);
    assert_int_equal(ofs_listing_names(&f->fs, f->req, &held, NULL, take_listed, &x), 0);
    assert_int_equal(x.rc, 0);
    assert_int_equal(x.n, 2);
    assert_true(ofs_remote_ino((fuse_ino_t)x.e[0].version));
    assert_int_equal(x.e[0].size, 300000);
    assert_int_equal(x.e[0].created_ns, UINT64_C(1700000123) * 1000000000u);
    assert_int_equal(x.e[1].size, 5);
    /* One listing, nothing else: no GET, no HEAD, no fetch. */
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_ANY), remote_mem_requests(f->m, REMOTE_MEM_LIST));
    assert_int_equal(count(&f->fs.count.fetches), 0);
    /* A lookup while the listing is valid is answered from it: the same inode. */
    assert_int_equal(ofs_listing_find(&f->fs, "big", &l), 0);
    assert_int_equal(l.size, 300000);
    assert_int_equal(ofs_listing_find(&f->fs, "none", &l), ENOENT);
    assert_int_equal(ofs_lookup_listed(&f->fs, "big", 300000, 1700000123, l.at_ms, &e), 0);
    assert_int_equal(e.version, x.e[0].version);
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_ANY), remote_mem_requests(f->m, REMOTE_MEM_LIST));
    /* The first read pins the version and reads its exact bytes. */
    assert_int_equal(read_remote(f, (fuse_ino_t)x.e[0].version, 300000, 0), 0);
    assert_int_equal(rep.len, 300000);
    assert_memory_equal(rep.buf, data, 300000);
    /* The metadata comes with it: the tool, the recorded write time. */
    assert_int_equal(ofs_lookup_meta(&f->fs, (fuse_ino_t)x.e[0].version, &e), 0);
    assert_int_equal(e.has_tool, 1);
    assert_string_equal(e.tool, "grep");
    assert_int_equal(e.created_ns, UINT64_C(1700000000) * 1000000000u);
    /* A listing again keeps the pinned inode: same length, same Last-Modified. */
    ofs_listing_drop(&f->fs, held);
    held = NULL;
    x.n = 0;
    assert_int_equal(ofs_listing_names(&f->fs, f->req, &held, NULL, take_listed, &x), 0);
    assert_int_equal(x.e[0].version, e.version);
    ofs_listing_drop(&f->fs, held);
    free(data);
}

static void listed_name_replaced_before_its_first_read_should_answer_enodata(void **state)
{
    struct fx *f = *state;
    struct ofs_rlist *held = NULL;
    struct listed_fx x = {f, 0, 0, {{0}}};
    store_entry e;
    mem_put(f, "k", "first version", 13);
    assert_int_equal(ofs_listing_names(&f->fs, f->req, &held, NULL, take_listed, &x), 0);
    assert_int_equal(x.n, 1);
    mem_put(f, "k", "the second, longer version", 26);
    /* Never a byte of the new version under the listed one's inode. */
    assert_int_equal(read_remote(f, (fuse_ino_t)x.e[0].version, 13, 0), ENODATA);
    /* The name now leads to the new version, its own inode. */
    f->fs.remote_ttl = 0;
    assert_int_equal(ofs_lookup_name(&f->fs, "k", &e, &miss), 0);
    assert_true(e.version != x.e[0].version);
    assert_int_equal(e.size, 26);
    /* Replaced by as many bytes: that version's bytes, exactly, pinned. */
    mem_put(f, "s", "version one!", 12);
    ofs_listing_drop(&f->fs, held);
    held = NULL;
    x.n = 0;
    assert_int_equal(ofs_listing_names(&f->fs, f->req, &held, NULL, take_listed, &x), 0);
    assert_int_equal(x.n, 2); /* k (known since), s */
    mem_put(f, "s", "version two?", 12);
    assert_int_equal(read_remote(f, (fuse_ino_t)x.e[1].version, 12, 0), 0);
    assert_int_equal(rep.len, 12);
    assert_memory_equal(rep.buf, "version two?", 12);
    /* Removed before the first read: ENODATA too. */
    mem_put(f, "j", "abc", 3);
    ofs_listing_drop(&f->fs, held);
    held = NULL;
    x.n = 0;
    assert_int_equal(ofs_listing_names(&f->fs, f->req, &held, NULL, take_listed, &x), 0);
    assert_int_equal(x.n, 3); /* j, k, s */
    remote_mem_remove(f->m, "pre/" NS "/j");
    assert_int_equal(read_remote(f, (fuse_ino_t)x.e[0].version, 3, 0), ENODATA);
    ofs_listing_drop(&f->fs, held);
}

static void missing_name_should_be_asked_again_after_the_miss_time_only(void **state)
{
    struct fx *f = *state;
    store_entry e;
    uint64_t left = 0, t0 = common_clock_ms();
    assert_int_equal(ofs_lookup_name(&f->fs, "later", &e, &left), ENOENT);
    assert_true(left > 0 && left <= OFS_REMOTE_MISS_MS);
    uint64_t asked = count(&f->fs.count.fetches);
    assert_int_equal(asked, 1);
    /* A burst: answered from the miss, at most one request per miss time
     * since the first (none when all is quicker, as it is but on a stalled
     * machine). */
    for (int i = 0; i < 50; i++)
        assert_int_equal(ofs_lookup_name(&f->fs, "later", &e, &left), ENOENT);
    assert_true(left <= OFS_REMOTE_MISS_MS);
    uint64_t took = common_clock_ms() - t0;
    asked = count(&f->fs.count.fetches);
    assert_true(asked <= 1 + took / OFS_REMOTE_MISS_MS);
    mem_put(f, "later", "now here", 8);
    /* Past the miss time the remote is asked again, and the name is found. */
    struct timespec ts = {0, (long)(OFS_REMOTE_MISS_MS + 20) * 1000000L};
    nanosleep(&ts, NULL);
    assert_int_equal(ofs_lookup_name(&f->fs, "later", &e, &left), 0);
    assert_int_equal(left, 0);
    assert_int_equal(e.size, 8);
    assert_int_equal(count(&f->fs.count.fetches), asked + 1);
}

struct racer {
    struct fx *f;
    atomic_int *started;
    int rc;
};

static void *race_lookup(void *arg)
{
    struct racer *r = arg;
    store_entry e;
    uint64_t left;
    atomic_fetch_add(r->started, 1);
    r->rc = ofs_lookup_name(&r->f->fs, "missing", &e, &left);
    return NULL;
}

/* The first request's hook: holds it until every racer has started (10 s
 * at most), then 1 s more for the last to reach the lookup (a thread
 * descheduled between its count and its lookup, as under valgrind on a busy
 * machine). However slowly the threads start (valgrind on a busy machine
 * took over 0.5 s), they all find the request under way, or its answer
 * cached. */
static int hold_until_all_started(void *arg, remote_mem_op op, const char *name)
{
    atomic_int *started = arg;
    (void)op;
    (void)name;
    for (int i = 0; i < 10000 && atomic_load(started) < 8; i++)
        nanosleep(&(struct timespec){0, 1000000L}, NULL);
    nanosleep(&(struct timespec){1, 0}, NULL);
    return 0;
}

static void concurrent_lookups_of_one_name_should_share_one_request(void **state)
{
    struct fx *f = *state;
    pthread_t t[8];
    struct racer r[8];
    atomic_int started = 0;
    remote_mem_fault hold = {.op = REMOTE_MEM_GET, .times = 1, .hook = hold_until_all_started,
                             .hook_arg = &started};
    assert_int_equal(remote_mem_fault_add(f->m, &hold), 0);
    for (int i = 0; i < 8; i++) {
        r[i] = (struct racer){f, &started, -1};
        assert_int_equal(pthread_create(&t[i], NULL, race_lookup, &r[i]), 0);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(r[i].rc, ENOENT);
    }
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_GET), 1);
    assert_int_equal(count(&f->fs.count.fetches), 1);
}

static void listing_should_give_remote_only_names_sorted_after_a_name(void **state)
{
    struct fx *f = *state;
    struct ofs_rlist *held = NULL;
    struct names nm = {0};
    store_entry e;
    remote_mem_list_reverse(f->m, 1); /* a server that does not sort */
    mem_put(f, "b", "1", 1);
    mem_put(f, "a", "1", 1);
    mem_put(f, "c", "1", 1);
    assert_int_equal(store_put(f->fs.st, NS, "b", "local", 5, NULL, &e), 0); /* live here */
    assert_int_equal(remote_mem_put(f->m, "pre/" NS "/deep/er", "x", 1, NULL, 0), 0); /* not a result */
    assert_int_equal(ofs_listing_names(&f->fs, f->req, &held, NULL, take, &nm), 0);
    assert_int_equal(nm.n, 2);
    assert_string_equal(nm.got[0], "a");
    assert_string_equal(nm.got[1], "c");
    /* The handle's snapshot again, after "a": no new listing. */
    unsigned long lists = remote_mem_requests(f->m, REMOTE_MEM_LIST);
    nm.n = 0;
    assert_int_equal(ofs_listing_names(&f->fs, f->req, &held, "a", take, &nm), 0);
    assert_int_equal(nm.n, 1);
    assert_string_equal(nm.got[0], "c");
    assert_int_equal(remote_mem_requests(f->m, REMOTE_MEM_LIST), lists);
    ofs_listing_drop(&f->fs, held);
}

static void listing_should_count_a_failed_listing_and_show_none(void **state)
{
    struct fx *f = *state;
    struct ofs_rlist *held = NULL;
    struct names nm = {0};
    mem_put(f, "a", "1", 1);
    remote_mem_fault fault = {.op = REMOTE_MEM_LIST, .err = REMOTE_EDENIED};
    assert_int_equal(remote_mem_fault_add(f->m, &fault), 0);
    assert_int_equal(ofs_listing_names(&f->fs, f->req, &held, NULL, take, &nm), 0);
    assert_int_equal(nm.n, 0);
    assert_int_equal(count(&f->fs.count.lookup_errors), 1);
    assert_int_equal(count(&f->fs.count.fetches), 0); /* a listing is no fetch */
    ofs_listing_drop(&f->fs, held);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(lookup_should_give_an_inode_and_keep_the_first_bytes_as_a_window,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(lookup_should_answer_enoent_enodata_and_reuse_its_answer, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(lookup_should_answer_eio_when_the_remote_fails_and_count_a_fetch_error,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(listed_names_should_get_attributes_without_fetching_a_byte, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(listed_name_replaced_before_its_first_read_should_answer_enodata, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(missing_name_should_be_asked_again_after_the_miss_time_only, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(concurrent_lookups_of_one_name_should_share_one_request, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(window_read_should_serve_a_sequential_read_in_few_requests, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(window_sweep_should_free_idle_windows_and_a_read_should_fetch_again,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(window_read_should_answer_enodata_once_the_version_is_replaced, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(window_read_should_resume_a_cut_body_on_retry, setup, teardown),
        cmocka_unit_test_setup_teardown(window_read_should_answer_eio_after_its_retries, setup, teardown),
        cmocka_unit_test_setup_teardown(window_read_should_try_once_without_retries, setup, teardown),
        cmocka_unit_test_setup_teardown(window_read_should_fail_a_stalled_remote_within_the_bound, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(listing_should_give_remote_only_names_sorted_after_a_name, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(listing_should_count_a_failed_listing_and_show_none, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
