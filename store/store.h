/* store.h -- the offloadfs result store: tool results in one LMDB environment.
 *
 * A store is a directory holding one LMDB environment (data.mdb, lock.mdb).
 * It maps (namespace, key) to an immutable byte string plus metadata, keeps
 * the sum of live sizes at or below max_total_bytes by evicting the oldest
 * entries inside the writing transaction, and remembers evicted and removed
 * names (tombstones) so readers can tell "evicted" from "never existed".
 *
 * This module knows nothing of FUSE or JSON. Both the daemon (fs/) and the
 * agent side (agentlink/) link it.
 *
 * Caveats
 * =======
 * - Threads: a store handle may be shared by threads. Every call runs its
 *   own short transaction (MDB_NOTLS); no read transaction is ever held
 *   between calls, so long-lived handles never pin old pages.
 * - Processes: any number of processes may open the same store at once;
 *   writers serialise on LMDB's lock. Within one process any number of
 *   handles may be opened and closed by any threads at any time: every
 *   handle on the same data file shares one LMDB environment underneath
 *   (LMDB forbids two: its locks belong to the process), found by the data
 *   file's device and inode under one process-wide lock, and closed with
 *   the last handle. The flags of the first open (STORE_NOSYNC,
 *   STORE_RDONLY, STORE_VERIFY) win for the handles that share it.
 * - fork(): a handle opened before fork() belongs to the parent. In the
 *   child every call on it but store_close() fails with STORE_EFORKED, and
 *   store_close() releases it without touching LMDB (the environment stays
 *   mapped until the child exits: closing it would clear the parent's
 *   reader slots). A child opens the store again with store_open(), which
 *   gives it an environment of its own. The daemon opens the store after
 *   daemonizing.
 * - Durability: by default every write is durable (fsync) when it returns.
 *   STORE_NOSYNC trades that for speed: a system crash may lose the last
 *   writes, never corrupt the store or the bound.
 * - Map size: chosen once at creation (a sparse file, 4 x max_total_bytes +
 *   1 GiB); the data file itself stays near the live bytes.
 * - Read-your-writes: store_put(), store_remove() and store_limits_set()
 *   return only after every offloadfs daemon serving the store has
 *   invalidated what the write changed, or after STORE_WAKE_TIMEOUT_MS
 *   (200 ms, for all daemons together) when one does not answer; a daemon
 *   that let a write wait that long is not waited for again by this
 *   process until it has run again. With no daemon this costs one failed
 *   open() (store/wake.h says how and why).
 * - Compression: values are compressed with zstd (see "Compression" below)
 *   unless the store is set to STORE_COMPRESS_NONE. Sizes, reads and
 *   listings always speak of the original bytes; only max_total_bytes and
 *   store_stats.stored_bytes count what the values occupy.
 *
 * Errors
 * ======
 * Functions return 0, a positive errno value (ENOMEM, EIO, ENOSPC, EACCES,
 * ENOENT, ...) or one of the STORE_E* codes below (negative, in their own
 * range). store_strerror() describes any of them. Free functions accept NULL.
 */
#ifndef OFFLOADFS_STORE_H
#define OFFLOADFS_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Error codes (negative; errno values are positive) ---------------- */
#define STORE_ERR_BASE (-31000)
#define STORE_ENOTFOUND (STORE_ERR_BASE - 1)  /* name never written (or its tombstone expired) */
#define STORE_EEVICTED  (STORE_ERR_BASE - 2)  /* name evicted or removed: see store_tomb */
#define STORE_EGONE     (STORE_ERR_BASE - 3)  /* that version was replaced, evicted or removed */
#define STORE_ETOOBIG   (STORE_ERR_BASE - 4)  /* value longer than max_result_bytes */
#define STORE_EFULL     (STORE_ERR_BASE - 5)  /* LMDB map full: nothing was written */
#define STORE_ECORRUPT  (STORE_ERR_BASE - 6)  /* data.mdb / lock.mdb damaged or not LMDB */
#define STORE_EVERSION  (STORE_ERR_BASE - 7)  /* store made by another format version */
#define STORE_ENOSTORE  (STORE_ERR_BASE - 8)  /* directory exists but holds no store */
#define STORE_EREADERS  (STORE_ERR_BASE - 9)  /* too many concurrent readers */
#define STORE_ELIMITS   (STORE_ERR_BASE - 10) /* bad limits, e.g. max_result > max_total */
#define STORE_ELOGGONE  (STORE_ERR_BASE - 11) /* change log no longer reaches that generation */
#define STORE_ERDONLY   (STORE_ERR_BASE - 12) /* write on a store opened STORE_RDONLY */
#define STORE_ELMDB     (STORE_ERR_BASE - 13) /* any other LMDB failure */
#define STORE_EPENDING  (STORE_ERR_BASE - 14) /* the bound is held by results pending upload */
#define STORE_EFORKED   (STORE_ERR_BASE - 15) /* handle opened by the parent of this fork()ed process */
/* Name rule violations: each names the rule that was broken. */
#define STORE_ENAME_EMPTY (STORE_ERR_BASE - 20) /* empty */
#define STORE_ENAME_LONG  (STORE_ERR_BASE - 21) /* longer than 255 bytes */
#define STORE_ENAME_UTF8  (STORE_ERR_BASE - 22) /* not valid UTF-8 */
#define STORE_ENAME_SLASH (STORE_ERR_BASE - 23) /* contains '/' */
#define STORE_ENAME_CTRL  (STORE_ERR_BASE - 24) /* NUL or control byte 0x00-0x1F, 0x7F */
#define STORE_ENAME_DOT   (STORE_ERR_BASE - 25) /* starts with '.' */

/* Returns a static, human-readable description of any code above or errno.
 * Never NULL. */
const char *store_strerror(int err);

/* ---- Constants -------------------------------------------------------- */
#define STORE_NAME_MAX 255u                      /* bytes in a key or namespace */
#define STORE_TOOL_MAX 255u                      /* bytes in a tool name */
#define STORE_DEFAULT_MAX_TOTAL (1ull << 30)     /* 1 GiB */
#define STORE_DEFAULT_MAX_RESULT (64ull << 20)   /* 64 MiB */
#define STORE_DEFAULT_MAX_TOMBS 100000u          /* tombstones kept */
#define STORE_DEFAULT_NAMESPACE "default"

/* ---- Names ------------------------------------------------------------ */
/* Checks KEY (LEN bytes, may contain NUL) against the key rules of the
 * contract; namespaces follow the same rules.
 * Returns 0, or the STORE_ENAME_* code of the first rule broken. */
int store_name_check(const char *name, size_t len);

/* Length (1-4) of the valid UTF-8 sequence at S, which has N >= 1 bytes
 * left, or 0 when it is not one: overlong forms, surrogates and code points
 * past U+10FFFF are refused. */
size_t store_utf8_len(const void *s, size_t n);

/* ---- Opening ---------------------------------------------------------- */
typedef struct store store;

#define STORE_CREATE 0x1u /* create directory and environment when missing */
#define STORE_RDONLY 0x2u /* refuse every write (the daemon) */
#define STORE_NOSYNC 0x4u /* no fsync per commit (see Caveats) */
#define STORE_VERIFY 0x8u /* check every page of data.mdb at open (the daemon) */
#define STORE_NOWAKE 0x10u /* commits wake no daemon (the daemon's own cached
                              copies: no writer waits on them) */

/* Opens the store in directory DIR.
 * With STORE_CREATE a missing directory is made (mode 0700, missing parents
 * too) and a new store gets the default limits; files are made 0600.
 * Stale reader slots left by killed processes are cleared.
 * Before LMDB follows any page, data.mdb is checked (store/verify.h): the
 * meta page, free list, catalog and the root of every database always;
 * every page with STORE_VERIFY, whose cost grows with the number of
 * entries (about 50 ms for a full 1 GiB store). Damage is STORE_ECORRUPT.
 * The first open of a data file in a process decides; later ones share
 * its environment (Caveats), safely from any thread. On success *OUT is a handle you own: release it with store_close().
 * Errors: ENOENT (no such directory), STORE_ENOSTORE (directory without a
 * store and no STORE_CREATE), EACCES, ENOTDIR, STORE_ECORRUPT,
 * STORE_EVERSION, ENOMEM, ENOSPC, EIO. */
int store_open(store **out, const char *dir, unsigned flags);

/* Releases a handle (NULL is fine), from any thread; the last handle of an
 * environment closes it. In a child of fork(), a handle of the parent is
 * released without closing anything (Caveats). Never fails. */
void store_close(store *st);

/* The directory the handle was opened on, made absolute (realpath) at the
 * open; valid until store_close(). */
const char *store_path(const store *st);

/* Gives back to the kernel every page of data.mdb's map this process
 * holds (madvise MADV_DONTNEED): its resident memory then counts none of
 * the store's bytes, which stay in the page cache, and a later read maps
 * them again (minor faults). LMDB maps the file shared and read-only, so
 * this is safe at any time, from any thread, beside reads and writes.
 * Pages in use are faulted in again after it (about 180 us for a lookup's),
 * so call it after reads, not on a timer alone: the daemon calls it from
 * its 20 ms round on a store that names a remote, when it read or kept
 * something since the last one. Nothing in a forked child of the opener. */
void store_map_trim(store *st);

/* Names the handle ST by PATH from now on (store_path(); the wake-up after
 * each write looks for PATH/wake): for a process that opened the store
 * through another directory (one of links to its files: a daemon run by
 * root, fs/pin.c) and will open it under no other name. Returns 0 or
 * ENOMEM (the name is then unchanged). */
int store_path_set(store *st, const char *path);

/* ---- Limits ----------------------------------------------------------- */
typedef struct store_limits {
    uint64_t max_total_bytes;  /* bound on the bytes live values occupy */
    uint64_t max_result_bytes; /* largest single value; <= max_total_bytes */
    uint64_t max_tombstones;   /* newest tombstones kept (default 100,000) */
} store_limits;

/* Fills *OUT with the store's limits. Errors: LMDB failures. */
int store_limits_get(store *st, store_limits *out);

/* Changes the limits; a field of 0 keeps its current value. The
 * max_result_bytes in force is the configured one (the last given) or
 * max_total_bytes, whichever is lower: lowering the bound below it holds
 * it down, raising the bound again gives the configured value back.
 * Lowering the bound evicts the oldest entries in the same transaction;
 * *NEVICTED (may be NULL) gets how many. Errors: STORE_ELIMITS
 * (max_result_bytes given larger than the resulting max_total_bytes, or a
 * limit too large for the map), STORE_EFULL, STORE_ERDONLY, EIO. Nothing
 * changes on error. store_stats_get() tells both values. */
int store_limits_set(store *st, const store_limits *lim, uint64_t *nevicted);

/* ---- Compression ------------------------------------------------------
 * Each value of at least 64 bytes is cut into frames of 64 KiB of original
 * bytes, each compressed with zstd (level 1) on its own, so a read at any
 * offset decodes only the frames it touches (a 4 KiB read: one). A frame
 * that does not shrink is kept raw, and a value none of whose frames
 * shrink is stored whole as before (the daemon then reads it straight from
 * the map, without a copy). The compressed bytes are stored in pages
 * behind a CRC-32C each, like raw values, next to frame tables that also
 * carry one: a flipped bit on disk is STORE_ECORRUPT (EIO through the
 * mount), never wrong bytes. The layout is in store/frame.h.
 *
 * The setting applies to later writes; every stored value stays readable
 * whatever it is. Stores made before compression existed open unchanged
 * and compress their later writes; from the first compressed write on,
 * code older than compression refuses the store (STORE_EVERSION) instead
 * of reading compressed bytes as data. */
#define STORE_COMPRESS_NONE 0u
#define STORE_COMPRESS_ZSTD 1u /* the default for new stores */

/* Sets *OUT to the store's STORE_COMPRESS_* setting. Errors: LMDB failures. */
int store_compression_get(store *st, unsigned *out);

/* Sets how later writes are stored. Errors: EINVAL (not a STORE_COMPRESS_*
 * value), STORE_ERDONLY, STORE_EFULL, EIO. */
int store_compression_set(store *st, unsigned compression);

/* ---- Entries ---------------------------------------------------------- */
typedef struct store_entry {
    uint64_t version;       /* immutable id of this write, >= 2, never reused */
    uint64_t size;          /* bytes of the value (before compression) */
    uint64_t created_ns;    /* write time, ns since the Unix epoch (UTC) */
    uint64_t original_size; /* bytes before the writer cut them */
    int truncated;          /* 1 when the writer cut the value */
    int has_tool;           /* 0: no tool recorded (tool is "") */
    char tool[STORE_TOOL_MAX + 1];
} store_entry;

/* What a writer says about a value. tool may be NULL. created_ns 0 means
 * "now"; original_size 0 means "same as the value's length". */
typedef struct store_meta {
    const char *tool;
    uint64_t created_ns;
    uint64_t original_size;
    int truncated;
} store_meta;

#define STORE_REASON_EVICTED 1 /* evicted to keep the bound */
#define STORE_REASON_REMOVED 2 /* removed by a caller */

typedef struct store_tomb {
    uint64_t version;  /* the version that was dropped */
    uint64_t when_ns;  /* when, ns since the Unix epoch (UTC) */
    int reason;        /* STORE_REASON_* */
} store_tomb;

/* Returns "evicted" or "removed" for a STORE_REASON_* value. */
const char *store_reason_name(int reason);

/* Stores LEN bytes at DATA under (NS, KEY) in one write transaction that
 * first drops the key's previous version (if any), then evicts the oldest
 * entries of the whole store until the new value fits max_total_bytes,
 * then writes the value as the newest entry (compressed, unless the store
 * is set to STORE_COMPRESS_NONE or the value does not shrink; the bound
 * counts the bytes stored). META may be NULL. On a store that names a
 * remote the new version is marked pending upload in the same transaction
 * (see "The remote tier"); pending versions are never evicted: when only
 * they are left to evict, STORE_EPENDING.
 * *OUT (may be NULL) gets the new entry. NS NULL means "default".
 * Errors: STORE_ENAME_* (for NS or KEY), STORE_ETOOBIG, STORE_EFULL,
 * STORE_EPENDING, STORE_ERDONLY, EINVAL (tool name too long), EIO, ENOSPC.
 * On error nothing changes. */
int store_put(store *st, const char *ns, const char *key, const void *data,
              size_t len, const store_meta *meta, store_entry *out);

/* Looks (NS, KEY) up. Returns 0 and fills *E (may be NULL) for a live key;
 * STORE_EEVICTED and fills *T (may be NULL) for an evicted or removed key;
 * STORE_ENOTFOUND otherwise. Other errors: STORE_ENAME_*, LMDB failures. */
int store_lookup(store *st, const char *ns, const char *key, store_entry *e,
                 store_tomb *t);

/* Finds a version. Returns 0, fills *E (may be NULL) and copies the key
 * into KEYBUF (STORE_NAME_MAX + 1 bytes, may be NULL) when VERSION is live
 * in namespace NS; STORE_EGONE otherwise (replaced, evicted, removed, never
 * existed, or in another namespace). */
int store_version_stat(store *st, const char *ns, uint64_t version,
                       store_entry *e, char *keybuf);

/* Copies up to LEN bytes of version VERSION starting at OFF into BUF, in
 * one read transaction: the bytes are all of that version or none.
 * *NREAD gets the count (0 at or past the end).
 * Errors: STORE_EGONE (version no longer live), STORE_ECORRUPT, LMDB. */
int store_read(store *st, uint64_t version, uint64_t off, void *buf,
               size_t len, size_t *nread);

/* Called by store_read_iov() with the bytes as IOVCNT pieces of the store's
 * memory map (TOTAL bytes in all; none at or past the end). The pieces are
 * valid only during the call and must not be written. Its return value is
 * store_read_iov()'s. */
typedef int (*store_iov_fn)(const struct iovec *iov, size_t iovcnt, size_t total,
                            void *ctx);

/* store_read() without the copy: hands FN up to LEN bytes of VERSION from
 * OFF where they lie in the map, inside one read transaction (so all of
 * one version), after checking the CRC-32C of every chunk they come from.
 * For a server that sends them on at once (the daemon's FUSE replies).
 * A compressed value's frames are decoded, each frame touched once, into
 * a buffer the store keeps for the next call; its raw frames still come
 * from the map. Errors: as store_read(), ENOMEM, or what FN returns. */
int store_read_iov(store *st, uint64_t version, uint64_t off, size_t len,
                   store_iov_fn fn, void *ctx);

/* How VERSION is stored, for a reader that decodes ahead (the daemon's
 * fs/decode.c): *FRAME_SIZE gets the size of its frames (a power of two,
 * 4 KiB to 1 MiB) when it is compressed, 0 when it is stored raw (read it
 * with store_read_iov(), straight from the map); *SIZE its original length
 * when compressed (untouched when raw). A frame I of a compressed value
 * holds bytes [I * frame_size, min((I + 1) * frame_size, size)), and
 * store_read() of exactly one whole frame decodes it straight into the
 * caller's buffer. Errors: STORE_EGONE (version no longer live),
 * STORE_ECORRUPT (a damaged frame table), LMDB failures. */
int store_version_frames(store *st, uint64_t version, uint64_t *size,
                         uint32_t *frame_size);

/* Reads the whole value of (NS, KEY) in one read transaction.
 * On success *BUF is malloc'd storage you now own (free() it; never NULL,
 * even for an empty value), *LEN its length (a NUL follows, not counted),
 * *E (may be NULL) the entry. Errors: as store_lookup (with *T), ENOMEM. */
int store_get(store *st, const char *ns, const char *key, void **buf,
              size_t *len, store_entry *e, store_tomb *t);

/* Removes (NS, KEY), leaving a tombstone with reason "removed".
 * Errors: STORE_ENOTFOUND, STORE_EEVICTED (already gone), STORE_ENAME_*,
 * STORE_ERDONLY, STORE_EFULL, EIO. */
int store_remove(store *st, const char *ns, const char *key);

/* Called once per live key by store_list(), in byte order of the keys.
 * KEY (KEYLEN bytes, NUL-terminated) and E are valid only during the call;
 * no transaction is open while it runs. Return 0 to go on; anything else
 * stops the listing and store_list() returns that value. */
typedef int (*store_list_fn)(const char *key, size_t keylen,
                             const store_entry *e, void *ctx);

/* Lists the live keys of NS that sort after AFTER (NULL or "" for all).
 * Memory stays bounded whatever the number of keys: keys are read in
 * batches, each in its own short transaction, so a key written during the
 * listing appears at most once. Returns 0 or the callback's value, or an
 * LMDB failure. */
int store_list(store *st, const char *ns, const char *after, store_list_fn fn,
               void *ctx);

/* Like store_list(), for the names of NS that have a tombstone (evicted or
 * removed, the newest max_tombstones of them), in byte order; FN gets E
 * NULL. The daemon uses it to forget such names after a gap in the change
 * log (store_changes(): STORE_ELOGGONE). */
int store_list_tombs(store *st, const char *ns, store_list_fn fn, void *ctx);

/* ---- Store-wide figures ---------------------------------------------- */
typedef struct store_stats {
    uint64_t entries;          /* live entries, all namespaces */
    uint64_t bytes;            /* sum of their sizes */
    uint64_t max_total_bytes;
    uint64_t max_result_bytes; /* in force: <= max_total_bytes */
    uint64_t max_result_configured; /* as last set; above max_result_bytes
                                       while a lower bound holds it down */
    uint64_t puts;             /* successful store_put() calls since the
                                  store was made, by every writer (a
                                  replace counts; a refused put does not) */
    uint64_t evictions;        /* entries evicted for the bound, ever */
    uint64_t removals;         /* entries removed by callers, ever */
    uint64_t tombstones;       /* tombstones currently kept */
    uint64_t generation;       /* count of changes ever made */
    uint64_t file_bytes;       /* size of data.mdb on disk */
    uint64_t stored_bytes;     /* bytes the live values occupy (compressed):
                                  what max_total_bytes bounds */
    uint64_t pending;          /* what waits for the remote: live versions
                                  pending upload, and removals whose
                                  tombstone is pending */
    uint64_t cached_entries;   /* of the live entries, cached copies of the
                                  remote's results (store_put_cached()) */
    uint64_t cached_bytes;     /* and the sum of their sizes */
    uint64_t cache_hits;       /* reads served by a cached copy, ever
                                  (store_cache_count()) */
    uint64_t cache_misses;     /* reads that fetched from the remote, ever */
} store_stats;

/* Fills *OUT in one read transaction. puts, evictions and removals live in
 * the store and are updated in each writer's transaction, so they count
 * every process's work and never go backwards, whoever reads them (stores
 * made by earlier versions included: puts is derived from the version
 * counter every put has always advanced by one). Errors: LMDB failures. */
int store_stats_get(store *st, store_stats *out);

/* ---- The remote tier ---------------------------------------------------
 * The store records which remote it is tiered to (an "s3://BUCKET/PREFIX"
 * URL, never a credential) so every writer and daemon of the store agrees,
 * and which live versions still wait for their upload ("pending"). The
 * store itself never talks to the network: the uploader (agentlink) and
 * the daemon do, through remote/. While a remote is set, store_put()
 * marks each new version pending in its own transaction, so a writer
 * killed before its upload leaves it pending, never lost; the uploader
 * clears the mark once the remote has it. A pending version is not
 * evicted (a write that would need it gone fails with STORE_EPENDING) and
 * its mark goes with it when it is replaced or removed. Likewise
 * store_remove() marks the removal's tombstone pending in its own
 * transaction; the remover clears the mark once the tombstone is written,
 * and a later store_put() of the same name drops it (the new result
 * replaces the object). Earlier versions of offloadfs ignore these
 * records. */
#define STORE_REMOTE_MAX 1024u /* bytes in a remote URL */

/* Copies the store's remote URL into BUF (CAP bytes, terminated); "" when
 * none is set. Errors: ERANGE (CAP too small), LMDB failures. */
int store_remote_get(store *st, char *buf, size_t cap);

/* Sets the remote URL (NULL or "": removes it). The store checks only
 * that it is at most STORE_REMOTE_MAX bytes without control characters;
 * its meaning is remote/'s. Errors: EINVAL, STORE_ERDONLY, STORE_EFULL,
 * EIO. */
int store_remote_set(store *st, const char *url);

/* Drops the pending mark of VERSION (its upload is done). A version not
 * marked (or no longer live) is fine. Errors: STORE_ERDONLY, LMDB
 * failures. */
int store_pending_clear(store *st, uint64_t version);

/* Called once per pending version, oldest first; NS and KEY valid during
 * the call only. Return 0 to go on, nonzero to stop (store_pending_list()
 * returns it). */
typedef int (*store_pending_fn)(const char *ns, const char *key, uint64_t version, void *ctx);

/* Lists the pending versions of every namespace in one read transaction;
 * FN runs after it ended. Errors: ENOMEM, LMDB failures, FN's value. */
int store_pending_list(store *st, store_pending_fn fn, void *ctx);

/* Lists the removals whose tombstone is pending, oldest first, as
 * store_pending_list() does (VERSION: the version removed). */
int store_tomb_pending_list(store *st, store_pending_fn fn, void *ctx);

/* Drops the tombstone marks of (NS, KEY) (its tombstone is written). None
 * is fine, and then no write transaction is taken. Errors: STORE_ENAME_*,
 * STORE_ERDONLY, LMDB failures. */
int store_tomb_pending_clear(store *st, const char *ns, const char *key);

/* ---- Cached copies of the remote's results -----------------------------
 * A reader (agentlink) that fetched a result from the remote keeps it as
 * a cached copy of that version: a live entry like any other (every
 * reader, the daemon included, serves it), marked with the remote's ETag.
 * A cached copy is never marked pending, so no sync or upload sends it;
 * eviction takes the oldest cached copy before any result written here;
 * a write or removal of the name drops it as it drops any version. The
 * marks and counters are records of their own (store/cache.c): stores
 * from before have none and read as before. */
#define STORE_ETAG_MAX 127u /* bytes in a remote version's ETag */

/* Keeps LEN bytes at DATA as a cached copy of version ETAG (1 to
 * STORE_ETAG_MAX bytes) of (NS, KEY), replacing a cached copy of another
 * version, as store_put() stores a value (the same bound and eviction,
 * cached copies first). Not kept, and nothing changes, when the copy would
 * take over half of max_total_bytes or more than max_result_bytes
 * (STORE_ETOOBIG), when (NS, KEY) holds a result written here
 * (STORE_EGONE: written since the remote was asked), or when only pending
 * results could make room (STORE_EPENDING). Counts itself out of
 * store_stats.puts. *OUT (may be NULL) gets the entry. Errors: also those
 * of store_put(); EINVAL (ETAG empty or too long). */
int store_put_cached(store *st, const char *ns, const char *key, const void *data,
                     size_t len, const store_meta *meta, const char *etag, store_entry *out);

/* Whether live version VERSION is a cached copy: 1 and its ETag into ETAG
 * (CAP bytes, may be NULL) when it is; 0 when it is not (a result written
 * here, or no longer live). Errors (negative or errno): ERANGE (CAP too
 * small), LMDB failures. */
int store_cached(store *st, uint64_t version, char *etag, size_t cap);

/* Drops the cached copy VERSION of (NS, KEY): the remote holds another
 * version, a tombstone or nothing. No tombstone is left here (the remote's
 * answer is the name's). Returns 0, also when VERSION is no longer the
 * name's or is a result written here (then nothing changes). Errors:
 * STORE_ENAME_*, STORE_ERDONLY, LMDB failures. */
int store_cache_drop(store *st, const char *ns, const char *key, uint64_t version);

/* Adds HITS and MISSES to the store's cache counters (one write
 * transaction; none when both are 0). Errors: STORE_ERDONLY, LMDB
 * failures. */
int store_cache_count(store *st, uint64_t hits, uint64_t misses);

/* ---- Learning what changed ------------------------------------------- */
/* A cheap token that changes whenever any process commits a write: the id
 * of a fresh read snapshot (one short read transaction, no lock). When it
 * differs from the last one seen, store_changes() sees the new writes. */
uint64_t store_commit_token(store *st);

/* Called by store_changes() once per change, oldest first. OLD_VERSION is
 * the version the name had before (0: none), NEW_VERSION the one it has
 * after (0: evicted or removed). Pointers valid only during the call. */
typedef void (*store_change_fn)(const char *ns, const char *key,
                                uint64_t old_version, uint64_t new_version,
                                void *ctx);

/* Reports every change with a generation above SINCE and sets *NOW to the
 * latest generation reported (pass it as SINCE next time). Start from
 * store_stats_get()'s generation. The change log keeps the newest 200,000
 * changes; when SINCE is older than that, returns STORE_ELOGGONE and sets
 * *NOW to the current generation: the caller must assume anything changed.
 * Callbacks run with no transaction open. Errors: LMDB failures. */
int store_changes(store *st, uint64_t since, store_change_fn fn, void *ctx,
                  uint64_t *now);

/* ---- Watching lock.mdb under a long-lived reader ----------------------
 * LMDB maps lock.mdb and keeps its reader table and process-shared mutexes
 * in it, trusting every byte. A lock file truncated under a process that
 * has the store open turns that process's next transaction into SIGBUS;
 * one overwritten with garbage can make it wait for ever on a mutex the
 * garbage shows as taken; one removed or replaced is no longer the file
 * writers use, so they stop seeing its readers and may reuse pages it
 * still reads. None of this can happen to a healthy file: only the first
 * process to open an environment sizes and initialises lock.mdb, so while
 * a process holds the store open its size, inode and first 8 bytes
 * (mti_magic, mti_format) stay as they are, whatever readers and writers
 * come and go (every store_open() uses the same maxreaders).
 *
 * A lock mark records those at one moment; store_lock_check() says whether
 * they still hold, without any LMDB call. The daemon takes a mark right
 * after store_open() and checks it before each of its polls; a handle opened
 * by a short-lived command needs none.
 *
 * Caveat: the mark keeps a descriptor on lock.mdb, and POSIX drops every
 * fcntl() lock a process holds on a file when it closes any descriptor of
 * that file -- LMDB's shared lock on lock.mdb among them. Call
 * store_lock_unmark() only after store_close() of every handle of the
 * store (or when the process is about to exit). */
typedef struct store_lockmark {
    int fd;                /* lock.mdb, O_RDONLY; -1: nothing to watch */
    uint64_t dev, ino;     /* which file it was */
    uint64_t size;         /* its length */
    unsigned char head[8]; /* its first 8 bytes: mti_magic, mti_format */
    char *path;            /* DIR/lock.mdb, malloc'd */
} store_lockmark;

/* Takes the mark of ST's lock.mdb: opens it read-only and records its
 * device, inode, length and first 8 bytes. On a read-only filesystem
 * without a lock.mdb (LMDB then runs without one) the mark is inert: every
 * check passes. On success release it with store_lock_unmark().
 * Errors: ENOENT (no lock.mdb), STORE_ECORRUPT (not a regular file, or
 * shorter than 8 bytes), ENOMEM, EACCES, EIO; *M then holds nothing and
 * any descriptor opened was closed (see the caveat above). */
int store_lock_mark(const store *st, store_lockmark *m);

/* Compares lock.mdb with mark M: one fstat() of the marked file, one
 * stat() of its path, one 8-byte pread(); no LMDB call, no lock taken, safe
 * from any thread. Returns 0 while nothing changed (always, for an inert
 * or zero-filled mark), and leaves *WHY (may be NULL) NULL. Otherwise
 * returns STORE_ECORRUPT and sets *WHY to a static phrase that completes
 * "lock.mdb ...": "was truncated", "was removed", "was replaced by another
 * file", "had its header overwritten" or "changed size"; or returns the
 * errno value of a check that could not be made, *WHY "could not be
 * checked". */
int store_lock_check(const store_lockmark *m, const char **why);

/* After a change: 1 when store_close() may still run on the store, 0 when
 * it must not. LMDB's close clears this process's slots in the reader
 * table it maps from lock.mdb; once the marked file is shorter than at the
 * mark, that map reaches past its end and the close dies of SIGBUS. One
 * fstat(); 0 also when that fails; 1 for an inert or zero-filled mark. */
int store_lock_closable(const store_lockmark *m);

/* Releases mark M (closes its descriptor, frees its path). A zero-filled
 * mark (never taken), one whose store_lock_mark() failed and one already
 * released are fine. See the caveat above about when. Never fails. */
void store_lock_unmark(store_lockmark *m);

#ifdef __cplusplus
}
#endif
#endif
