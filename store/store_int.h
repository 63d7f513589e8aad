/* store_int.h -- internal: what the store's .c files share. Not installed;
 * store/store.h is the one public header.
 *
 * Why the store is shaped this way:
 * - Values are split into chunks of one page minus its header, each an LMDB
 *   overflow value of exactly one page. Freed single pages are reusable
 *   anywhere, so churn does not fragment the file the way multi-page
 *   overflow runs do.
 * - Versions come from one counter and are never reused, so the "ver"
 *   database in key order is the write order: eviction takes its first row.
 *   A reader holding a version either finds that version's chunks or none.
 * - Every change appends a row to "log" so the daemon can invalidate exactly
 *   what changed; the log is trimmed to its newest LOG_KEEP rows.
 * - One LMDB environment per directory per process (LMDB forbids opening one
 *   twice); handles share it through a small refcounted registry.
 *
 * The files, one concern each:
 *   txn.c     errors, transactions, the state record, names, entry records
 *   open.c    opening and closing: directory, environment, databases
 *   limits.c  the limits and store-wide figures
 *   write.c   store_put(), store_put_cached(), store_remove(),
 *             store_cache_drop(): chunks written behind CRC-32C
 *   evict.c   dropping versions, evicting the oldest to keep the bound
 *   tomb.c    tombstones of evicted and removed names
 *   read.c    lookups and reads, CRC-checked
 *   list.c    listing a namespace
 *   changes.c the change log
 *   codec.c   the compression setting; frame.c/frame.h the frames;
 *   zpool.c   decoders and buffers reused by reads of compressed values
 *   wake.c    waking the daemons after a write (wake.h), and the memory of
 *             those found late; notify.c calls it after each commit
 *   cache.c   cached copies of the remote's results (marks, counters)
 *   pending.c the remote URL, the pending marks (versions waiting for their
 *             upload) and the tombstone-pending marks of the remote tier
 * and, apart: record.c (record layouts), verify.c (the page check),
 * lockmark.c (watching lock.mdb), name.c (the name rules), crc.c.
 */
#ifndef OFFLOADFS_STORE_INT_H
#define OFFLOADFS_STORE_INT_H

#include "store/store.h"
#include "store/record.h"
#include "store/frame.h"
#include "store/verify.h"

#include <lmdb.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

/* Internal symbols stay out of libagentlink.so's exports. */
#pragma GCC visibility push(hidden)

#define LOG_KEEP 200000u
#define LIST_BATCH 256u
#define MAP_SLACK (1ull << 30)
#define NAME_BUF (2 * STORE_NAME_MAX + 1)

enum { DB_META, DB_LIVE, DB_VER, DB_DATA, DB_TOMB, DB_TOMBQ, DB_LOG, DB_COUNT };
extern const char *const store_db_names[DB_COUNT];

/* What one read of a compressed value needs (zpool.c). */
struct zscratch {
    void *dctx;           /* a zstd decoder */
    unsigned char *frame; /* a frame's stored bytes, then a frame decoded */
    size_t frame_cap;
    unsigned char *out;   /* decoded bytes for store_read_iov()'s callback */
    size_t out_cap;
    /* The frame table row this set checked last (read.c): a row of the
     * same bytes, as row ROW_J, decodes to ROW again. */
    size_t row_len;       /* 0: none */
    uint32_t row_j;
    frame_row row;        /* its entries pointer is not kept */
    unsigned char row_bytes[4 + FRAME_ROW_MAX];
    struct zscratch *next;
};

/* One open LMDB environment, shared by every handle on the same directory. */
struct shared_env {
    dev_t dev;
    ino_t ino;
    pid_t pid; /* the process that opened it: a forked child must not share it */
    MDB_env *env;
    MDB_dbi dbi[DB_COUNT];
    unsigned flags;
    uint64_t chunk; /* bytes per data chunk, fixed at creation */
    size_t psize;   /* LMDB page size */
    const void *base; /* where LMDB maps data.mdb (store_verify_map_base), or NULL */
    size_t mapsize;   /* and how much */
    int refs;
    pthread_rwlock_t resize; /* held shared by every txn, exclusively to grow the map */
    pthread_mutex_t zlock;   /* guards zfree */
    struct zscratch *zfree;  /* idle decode sets (zpool.c) */
    struct wake_memory *wake; /* daemons that ran late (wake.c) */
    struct shared_env *next;
};

struct store {
    struct shared_env *se;
    char *path;
};

/* ---- txn.c ------------------------------------------------------------ */

/* An LMDB result (or one of ours, passed through) as a store code. */
int store_map_err(int rc);
/* CLOCK_REALTIME in ns. */
uint64_t store_now_ns(void);

typedef struct tx {
    struct shared_env *se;
    MDB_txn *txn;
} tx;

/* Learns where LMDB maps the file (no transaction of ours open). */
void store_map_base_find(struct shared_env *se);
/* Begins a transaction (WRITE: a write one) holding the resize lock shared;
 * adopts a map grown by another process. STORE_ERDONLY on a read-only store. */
int store_tx_begin(store *st, int write, tx *t);
void store_tx_abort(tx *t);
/* Ends T: commits when RC is 0, aborts otherwise. Returns the final code. */
int store_tx_end(tx *t, int rc);

MDB_dbi store_db(const tx *t, int which);
/* mdb_get/put/del on database WHICH; not found is STORE_ENOTFOUND. */
int store_db_get(const tx *t, int which, const void *k, size_t klen, MDB_val *v);
int store_db_put(const tx *t, int which, const void *k, size_t klen, const void *v,
                 size_t vlen, unsigned flags);
int store_db_del(const tx *t, int which, const void *k, size_t klen);

/* The state record; a missing one is STORE_ENOSTORE. */
int store_state_load(const tx *t, rec_state *s);
int store_state_save(const tx *t, const rec_state *s);
/* store_state_load() in a read transaction of its own. */
int store_state_read(store *st, rec_state *s);

/* Builds ns \0 key into OUT (NAME_BUF bytes) after checking both parts. */
int store_name_make(const char *ns, const char *key, char *out, size_t *len);
/* The live entry of NAME; STORE_ENOTFOUND when it has none. */
int store_entry_load(const tx *t, const char *name, size_t len, store_entry *e);
/* The key of chunk IDX of VERSION (12 bytes). */
void store_data_key(unsigned char *k, uint64_t version, uint32_t idx);

/* ---- tomb.c ----------------------------------------------------------- */

/* Drops the tombstone of NAME, if any. */
int store_tomb_clear(const tx *t, rec_state *s, const char *name, size_t len);
/* Expires the oldest tombstones until at most max_tombs remain. */
int store_tomb_trim(const tx *t, rec_state *s);
/* Records NAME's VERSION as dropped for REASON (then trims). */
int store_tomb_add(const tx *t, rec_state *s, const char *name, size_t len,
                   uint64_t version, int reason);

/* ---- evict.c ---------------------------------------------------------- */

/* Drops the live entry NAME (whose record is E) and accounts for it. */
int store_entry_drop(const tx *t, rec_state *s, const char *name, size_t len,
                     const store_entry *e);
/* Evicts the oldest entries until NEED more bytes fit the bound; adds the
 * count to *COUNT (may be NULL). */
int store_evict_until(const tx *t, rec_state *s, uint64_t need, uint64_t *count);

/* ---- pending.c -------------------------------------------------------- */

/* Pending marks live in the meta database under "pend" + be64(version),
 * their value the name (ns \0 key). */
#define PENDING_PREFIX "pend"
#define PENDING_KEY_LEN 12u
void store_pending_key(unsigned char *k, uint64_t version);
/* 1 when VERSION is marked pending, 0 when not, or an error (< 0). */
int store_pending_is(const tx *t, uint64_t version);
/* Marks VERSION of NAME pending / drops its mark (absent is fine). */
int store_pending_set(const tx *t, uint64_t version, const char *name, size_t len);
int store_pending_del(const tx *t, uint64_t version);
/* Counts the marks, pending uploads and pending tombstones. */
int store_pending_count(const tx *t, uint64_t *n);
/* Removals whose tombstone waits for the remote: "ptmb" + be64(version
 * removed), their value the name (ns \0 key). */
#define TOMB_PENDING_PREFIX "ptmb"
/* Marks the removal of VERSION of NAME as waiting for its tombstone. */
int store_tomb_pending_set(const tx *t, uint64_t version, const char *name, size_t len);
/* Drops every tombstone mark of NAME (none is fine). */
int store_tomb_pending_drop_name(const tx *t, const char *name, size_t len);
/* 1 when the store names a remote, 0 when not, or an error (< 0). */
int store_remote_is_set(const tx *t);

/* ---- cache.c ---------------------------------------------------------- */

/* Cached copies are marked in the meta database: "cach" + be64(version)
 * -> le64(size) + the remote's ETag (store/cache.c says why). */
#define CACHE_PREFIX "cach"
/* Marks VERSION (SIZE bytes) a cached copy of the remote's version ETAG
 * (at most STORE_ETAG_MAX bytes, else EINVAL). */
int store_cache_mark_set(const tx *t, uint64_t version, uint64_t size, const char *etag);
/* Drops VERSION's mark (absent is fine). */
int store_cache_mark_del(const tx *t, uint64_t version);
/* 1 when VERSION is marked cached, 0 when not, or an error (< 0). */
int store_cache_mark_is(const tx *t, uint64_t version);
/* The oldest live cached copy: its name into NAME (NAME_BUF bytes) and
 * its length into *LEN (0: there is none). Returns 0 or an error. */
int store_cache_oldest(const tx *t, char *name, size_t *len);
/* Counts one copy made (its version is counted out of the puts). */
int store_cache_fill_count(const tx *t);
/* Adds the cache's figures to OUT: cached entries and bytes, hits, misses,
 * and takes the copies made out of OUT->puts. */
int store_cache_figures(const tx *t, store_stats *out);

/* ---- zpool.c ---------------------------------------------------------- */

/* Takes an idle decode set of SE, or makes one; NULL when out of memory.
 * Give it back with store_zpool_put(). */
struct zscratch *store_zpool_get(struct shared_env *se);
void store_zpool_put(struct shared_env *se, struct zscratch *z);
/* Frees the idle sets (the environment is closing). */
void store_zpool_free(struct shared_env *se);
/* Grow Z's frame or out buffer to NEED bytes: 0 or ENOMEM. */
int store_zscratch_frame(struct zscratch *z, size_t need);
int store_zscratch_out(struct zscratch *z, size_t need);

/* ---- wake.c ----------------------------------------------------------- */

/* What one process remembers of the daemons that let a write wait the
 * whole bound (store/wake.h): one per shared environment, wake.c's own. */
struct wake_memory;
/* A new, empty memory; NULL when out of memory. */
struct wake_memory *store_wake_memory_new(void);
/* Closes the connections kept for late daemons and frees M (may be NULL). */
void store_wake_memory_free(struct wake_memory *m);

struct store_wake_result;
/* store_wake() remembering late daemons in M (NULL: store_wake()). */
int store_wake_run(const char *dir, uint64_t generation, unsigned timeout_ms,
                   struct wake_memory *m, struct store_wake_result *r);

/* ---- notify.c --------------------------------------------------------- */

/* What write.c and limits.c call after each writing commit (store_put,
 * store_remove, store_limits_set): RC is the commit's result and
 * GENERATION the store's generation after it. When RC is 0, wakes the
 * daemons of ST (store_wake_run() with STORE_WAKE_TIMEOUT_MS and ST's memory of
 * late daemons) and returns 0 whatever they answer: the write is done.
 * Otherwise returns RC without reading GENERATION. */
int store_wake_after_commit(store *st, int rc, uint64_t generation);

/* ---- changes.c -------------------------------------------------------- */

/* Appends a change of NAME to the log (next generation) and trims it. */
int store_log_change(const tx *t, rec_state *s, const char *name, size_t len,
                     uint64_t old_version, uint64_t new_version);

#pragma GCC visibility pop

#endif
