/* i2check.c -- an independent checker of the store's invariants, reading
 * the LMDB environment directly (read-only), one read transaction per check.
 *
 *   i2check DIR once [--crc]           one check; exit 0 ok, 1 violation
 *   i2check DIR watch STOPFILE [--crc] checks after every commit it sees
 *                                      (LMDB's last transaction id moved)
 *                                      until STOPFILE exists, then once more
 *
 * It does not go through the store's own code: it opens the databases itself and walks
 * every row, using only the record decoders of store/record.h. In one
 * snapshot it verifies
 *   I2  the sum of live sizes equals the recorded total, which is at most
 *       max_total_bytes, and the live count matches; the live entries are
 *       the newest in version order: every version dropped by eviction (a
 *       tombstone with reason "evicted") is older than every live version;
 *       With compression (a "codec" record), the bytes the values occupy
 *       (every chunk's and frame table row's payload) equal the recorded
 *       stored total, which is the one at most max_total_bytes;
 *   I4  no orphans: the "ver" rows are exactly the live versions, each
 *       naming its live key; every chunk belongs to a live version, chunks
 *       are numbered 0..n-1 and their payloads add up to the entry's size,
 *       or for a compressed value to the stream length its frame table
 *       rows (numbered 0x80000000..) give, along with the entry's size
 *       (--crc: and all match their CRC-32C); tombstones and their queue
 *       agree with each other and with the recorded count; no name is both
 *       live and a tombstone.
 * Prints one line per violation (stderr) and a summary (stdout):
 *   "checks N commits_seen N last_txn N live N bytes N max_total N"
 */
#include "store/record.h"

#include <errno.h>
#include <inttypes.h>
#include <lmdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { DB_META, DB_LIVE, DB_VER, DB_DATA, DB_TOMB, DB_TOMBQ, DB_COUNT };
static const char *const names[DB_COUNT] = {"meta", "live", "ver", "data", "tomb", "tombq"};

static MDB_env *env;
static MDB_dbi dbi[DB_COUNT];
static int check_crc;
static int violations;
static uint64_t last_live, last_bytes, last_max;

static void bad(uint64_t txn, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad(uint64_t txn, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "i2check: VIOLATION at txn %" PRIu64 ": ", txn);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    violations++;
}

#define ROW_BASE 0x80000000u /* store/frame.h: frame table rows */

struct live {
    uint64_t version, size, seen_bytes;
    uint64_t stream_len; /* from the frame table; 0: raw */
    uint32_t next_idx, next_row;
    int has_ver;
    char name[2 * STORE_NAME_MAX + 2];
    size_t namelen;
};

static int by_version(const void *a, const void *b)
{
    const struct live *x = a, *y = b;
    return x->version < y->version ? -1 : x->version > y->version;
}

static struct live *find(struct live *v, size_t n, uint64_t version)
{
    struct live k = {.version = version};
    return n ? bsearch(&k, v, n, sizeof *v, by_version) : NULL;
}

static int txn_begin(MDB_txn **txn)
{
    int rc;
    for (int i = 0; i < 5; i++) {
        rc = mdb_txn_begin(env, NULL, MDB_RDONLY, txn);
        if (rc != MDB_MAP_RESIZED)
            return rc;
        mdb_env_set_mapsize(env, 0); /* a writer grew the map: adopt it */
    }
    return rc;
}

/* One full check in one read transaction. Returns 0, or -1 when the
 * transaction could not be read at all. */
static int check(uint64_t *txnid)
{
    MDB_txn *txn;
    MDB_cursor *c;
    MDB_val k, v;
    rec_state s;
    struct live *lv = NULL;
    size_t n = 0, cap = 0, ntombs = 0, nq = 0;
    uint64_t sum = 0, min_live = UINT64_MAX, t;
    int rc = txn_begin(&txn);
    if (rc) {
        fprintf(stderr, "i2check: read transaction: %s\n", mdb_strerror(rc));
        return -1;
    }
    t = (uint64_t)mdb_txn_id(txn);
    *txnid = t;
    k.mv_size = 5;
    k.mv_data = "state";
    if ((rc = mdb_get(txn, dbi[DB_META], &k, &v)) || store_rec_state_decode(v.mv_data, v.mv_size, &s)) {
        bad(t, "state record missing or undecodable (%s)", rc ? mdb_strerror(rc) : "decode");
        mdb_txn_abort(txn);
        return 0;
    }
    k.mv_data = "codec";
    s.stored = s.live_bytes;
    if (!mdb_get(txn, dbi[DB_META], &k, &v) && store_rec_codec_decode(v.mv_data, v.mv_size, &s))
        bad(t, "codec record undecodable");
    if (s.format == REC_FORMAT)
        s.stored = s.live_bytes;

    /* live: the entries */
    mdb_cursor_open(txn, dbi[DB_LIVE], &c);
    for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        const char *ns, *key;
        size_t nsl, kl;
        store_entry e;
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            lv = realloc(lv, cap * sizeof *lv);
            if (!lv)
                abort();
        }
        if (store_rec_name_split(k.mv_data, k.mv_size, &ns, &nsl, &key, &kl)
            || store_rec_entry_decode(v.mv_data, v.mv_size, &e)) {
            bad(t, "live row %zu undecodable", n);
            continue;
        }
        if (e.version >= s.next_version)
            bad(t, "live version %" PRIu64 " >= next_version %" PRIu64, e.version, s.next_version);
        memset(&lv[n], 0, sizeof lv[n]);
        lv[n].version = e.version;
        lv[n].size = e.size;
        lv[n].namelen = k.mv_size;
        memcpy(lv[n].name, k.mv_data, k.mv_size);
        sum += e.size;
        if (e.version < min_live)
            min_live = e.version;
        n++;
    }
    mdb_cursor_close(c);
    if (rc != MDB_NOTFOUND)
        bad(t, "live cursor: %s", mdb_strerror(rc));
    if (n)
        qsort(lv, n, sizeof *lv, by_version);
    for (size_t i = 1; i < n; i++)
        if (lv[i].version == lv[i - 1].version)
            bad(t, "version %" PRIu64 " live under two names", lv[i].version);

    /* I2: totals and the bound */
    if (sum != s.live_bytes)
        bad(t, "sum of live sizes %" PRIu64 " != recorded total %" PRIu64, sum, s.live_bytes);
    if (n != s.live_entries)
        bad(t, "%zu live rows != recorded count %" PRIu64, n, s.live_entries);
    if (s.stored > s.max_total)
        bad(t, "stored bytes %" PRIu64 " > max_total_bytes %" PRIu64, s.stored, s.max_total);

    /* ver: exactly the live versions, each naming its key */
    mdb_cursor_open(txn, dbi[DB_VER], &c);
    for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        uint64_t ver = k.mv_size == 8 ? store_rec_get_be64(k.mv_data) : 0;
        struct live *l = find(lv, n, ver);
        if (!l)
            bad(t, "orphan ver row %" PRIu64, ver);
        else if (l->namelen != v.mv_size || memcmp(l->name, v.mv_data, v.mv_size))
            bad(t, "ver row %" PRIu64 " names another key", ver);
        else
            l->has_ver = 1;
    }
    mdb_cursor_close(c);
    for (size_t i = 0; i < n; i++)
        if (!lv[i].has_ver)
            bad(t, "live version %" PRIu64 " has no ver row", lv[i].version);

    /* data: chunks of live versions only, numbered from 0, sizes add up */
    uint64_t stored = 0;
    mdb_cursor_open(txn, dbi[DB_DATA], &c);
    for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        uint64_t ver;
        uint32_t idx;
        struct live *l;
        if (k.mv_size != 12) {
            bad(t, "data key of %zu bytes", k.mv_size);
            continue;
        }
        ver = store_rec_get_be64(k.mv_data);
        idx = store_rec_get_be32((unsigned char *)k.mv_data + 8);
        if (!(l = find(lv, n, ver))) {
            bad(t, "orphan chunk %" PRIu64 "/%" PRIu32, ver, idx);
            continue;
        }
        if (v.mv_size <= REC_CHUNK_HDR || v.mv_size - REC_CHUNK_HDR > s.chunk) {
            bad(t, "chunk %" PRIu64 "/%" PRIu32 " of %zu bytes", ver, idx, v.mv_size);
            continue;
        }
        stored += v.mv_size - REC_CHUNK_HDR;
        if (idx >= ROW_BASE) { /* a frame table row: its original size and stream length */
            const unsigned char *r = (const unsigned char *)v.mv_data + REC_CHUNK_HDR;
            if (idx != ROW_BASE + l->next_row++ || v.mv_size < REC_CHUNK_HDR + 40
                || store_rec_get_le64(r + 16) != l->size
                || (l->stream_len && store_rec_get_le64(r + 24) != l->stream_len))
                bad(t, "frame table row %" PRIu64 "/%" PRIu32 " out of sequence or disagrees",
                    ver, idx);
            l->stream_len = store_rec_get_le64(r + 24);
        } else if (idx != l->next_idx++ || l->next_row) {
            bad(t, "chunk %" PRIu64 "/%" PRIu32 " out of sequence", ver, idx);
        } else {
            l->seen_bytes += v.mv_size - REC_CHUNK_HDR;
        }
        if (check_crc && store_rec_crc32c((unsigned char *)v.mv_data + REC_CHUNK_HDR,
                                          v.mv_size - REC_CHUNK_HDR) != store_rec_get_le32(v.mv_data))
            bad(t, "chunk %" PRIu64 "/%" PRIu32 " fails its CRC", ver, idx);
    }
    mdb_cursor_close(c);
    for (size_t i = 0; i < n; i++)
        if (lv[i].seen_bytes != (lv[i].next_row ? lv[i].stream_len : lv[i].size))
            bad(t, "version %" PRIu64 ": chunks hold %" PRIu64 " bytes, entry says %" PRIu64
                   " (stream %" PRIu64 ")",
                lv[i].version, lv[i].seen_bytes, lv[i].size, lv[i].stream_len);
    if (stored != s.stored)
        bad(t, "values occupy %" PRIu64 " bytes, recorded %" PRIu64, stored, s.stored);

    /* tombstones: evicted versions are older than every live one (I2) */
    mdb_cursor_open(txn, dbi[DB_TOMB], &c);
    for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        rec_tomb tb;
        MDB_val lk = k, lv2, qk, qv;
        unsigned char seq[8];
        ntombs++;
        if (store_rec_tomb_decode(v.mv_data, v.mv_size, &tb)) {
            bad(t, "tombstone undecodable");
            continue;
        }
        if (tb.reason == STORE_REASON_EVICTED && tb.version >= min_live)
            bad(t, "evicted version %" PRIu64 " is newer than live version %" PRIu64
                   ": eviction did not take the oldest", tb.version, min_live);
        if (find(lv, n, tb.version))
            bad(t, "tombstone of version %" PRIu64 " which is live", tb.version);
        if (mdb_get(txn, dbi[DB_LIVE], &lk, &lv2) == 0)
            bad(t, "a name is both live and a tombstone");
        store_rec_be64(seq, tb.seq);
        qk.mv_size = 8;
        qk.mv_data = seq;
        if (mdb_get(txn, dbi[DB_TOMBQ], &qk, &qv) || qv.mv_size != k.mv_size
            || memcmp(qv.mv_data, k.mv_data, k.mv_size))
            bad(t, "tombstone seq %" PRIu64 " missing from its queue", tb.seq);
    }
    mdb_cursor_close(c);
    mdb_cursor_open(txn, dbi[DB_TOMBQ], &c);
    for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT))
        nq++;
    mdb_cursor_close(c);
    if (ntombs != s.tombs || nq != s.tombs)
        bad(t, "%zu tombstones, %zu queued, recorded %" PRIu64, ntombs, nq, s.tombs);

    mdb_txn_abort(txn);
    last_live = n;
    last_bytes = sum;
    last_max = s.max_total;
    free(lv);
    return 0;
}

static uint64_t last_txnid(void)
{
    MDB_envinfo info;
    return mdb_env_info(env, &info) ? 0 : (uint64_t)info.me_last_txnid;
}

int main(int argc, char **argv)
{
    const char *dir, *mode, *stopfile = NULL;
    MDB_txn *txn;
    uint64_t checks = 0, seen = 0, txnid = 0, prev = 0, first = 0;
    int rc;
    if (argc < 3)
        goto usage;
    dir = argv[1];
    mode = argv[2];
    if (!strcmp(mode, "watch")) {
        if (argc < 4)
            goto usage;
        stopfile = argv[3];
    } else if (strcmp(mode, "once")) {
        goto usage;
    }
    for (int i = 3; i < argc; i++)
        if (!strcmp(argv[i], "--crc"))
            check_crc = 1;
    if ((rc = mdb_env_create(&env)) || (rc = mdb_env_set_maxdbs(env, 16))
        || (rc = mdb_env_open(env, dir, MDB_RDONLY | MDB_NOTLS, 0600))) {
        fprintf(stderr, "i2check: cannot open '%s': %s\n", dir, mdb_strerror(rc));
        return 3;
    }
    if ((rc = txn_begin(&txn))) {
        fprintf(stderr, "i2check: %s\n", mdb_strerror(rc));
        return 3;
    }
    for (int i = 0; i < DB_COUNT; i++)
        if ((rc = mdb_dbi_open(txn, names[i], 0, &dbi[i]))) {
            fprintf(stderr, "i2check: database '%s': %s\n", names[i], mdb_strerror(rc));
            return 3;
        }
    mdb_txn_commit(txn); /* keeps the database handles */

    if (stopfile) {
        for (;;) {
            int stop = access(stopfile, F_OK) == 0;
            uint64_t now = last_txnid();
            if (now != prev || stop) {
                if (check(&txnid) == 0) {
                    checks++;
                    if (txnid != prev) {
                        seen++;
                        if (!first)
                            first = txnid;
                    }
                    prev = txnid;
                }
                if (violations > 20)
                    break;
            } else {
                struct timespec ts = {0, 200000}; /* 0.2 ms */
                nanosleep(&ts, NULL);
            }
            if (stop)
                break;
        }
    } else {
        if (check(&txnid) == 0)
            checks++, seen = 1, first = txnid;
    }
    printf("checks %" PRIu64 " commits_seen %" PRIu64 " first_txn %" PRIu64 " last_txn %" PRIu64
           " live %" PRIu64 " bytes %" PRIu64 " max_total %" PRIu64 " violations %d\n",
           checks, seen, first, txnid, last_live, last_bytes, last_max, violations);
    mdb_env_close(env);
    return violations ? 1 : 0;
usage:
    fprintf(stderr, "usage: i2check DIR once [--crc] | i2check DIR watch STOPFILE [--crc]\n");
    return 2;
}
