/* counters.h -- the data path's counters (counters.c): what the handlers,
 * the lookups and the read windows count, the one gauge of the data path
 * (window_bytes), and the one definition of a fetch. A leaf: it calls no
 * other file of fs/. The HTTP server (metrics.c) only loads these
 * counters; nothing on the data path ever calls the server.
 *
 * Relaxed atomics, added to with ofs_count() (the gauge also lowered, by
 * window.c) and only loaded by a scrape,
 * so counting costs a request one uncontended add and a scrape never makes
 * it wait. Counted whether or not metrics are served.
 *
 * What a fetch is (the one place it is defined; offloadfs_remote_fetches
 * and the histogram count exactly these): one ranged GET of a remote
 * result's bytes, its retries included -- a read window, a read-ahead
 * window or a direct read (window.c), and a lookup's GET of the first
 * OFS_RWIN_FIRST bytes (lookup.c; with the tombstone or empty-object HEAD
 * that may follow it in that lookup, one fetch). Listings, and a lookup
 * that could only HEAD (no memory for the bytes), are not fetches. Every
 * fetch is timed into the histogram, failed ones too.
 */
#ifndef OFFLOADFS_FS_COUNTERS_H
#define OFFLOADFS_FS_COUNTERS_H

#include <stdatomic.h>
#include <stdint.h>

/* Buckets of offloadfs_remote_fetch_seconds (1 ms to 10 s: counters.c). */
#define OFS_FETCH_BOUNDS 13u

/* What the daemon counts. Lives inside struct ofs (fs->count). */
struct ofs_counters {
    _Atomic uint64_t reads;           /* read requests answered with data */
    _Atomic uint64_t read_bytes;      /* bytes they returned */
    _Atomic uint64_t evicted_reads;   /* lookups, opens, reads answered ENODATA */
    _Atomic uint64_t missing_lookups; /* lookups answered ENOENT */
    _Atomic uint64_t fetches;         /* fetches (above), through ofs_fetch_done() */
    _Atomic uint64_t fetch_errors;    /* fetches that failed: a read or lookup answered EIO */
    _Atomic uint64_t fetch_ns;        /* their total time, nanoseconds */
    _Atomic uint64_t fetch_bytes;     /* the bytes they brought */
    _Atomic uint64_t fetch_buckets[OFS_FETCH_BOUNDS + 1]; /* not cumulative */
    /* Listings the remote failed, and HEAD-only lookups it failed; a
     * failed lookup GET is a fetch error only (never both). */
    _Atomic uint64_t lookup_errors;
    /* A gauge, not a counter: bytes of memory the read windows hold now
     * (window.c: the pages their fetches filled), falling to 0 once no
     * read has used them for OFS_RWIN_IDLE_MS (window.h). */
    _Atomic uint64_t window_bytes;
    /* The local store as a cache of the remote (keep.c): reads of a remote
     * inode served from a cached copy here; results fetched whole from the
     * remote (each a miss, kept or not); copies the store took. */
    _Atomic uint64_t cache_hits;
    _Atomic uint64_t cache_misses;
    _Atomic uint64_t cache_copies;
};

/* Adds N to counter C. */
static inline void ofs_count(_Atomic uint64_t *c, uint64_t n)
{
    atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

/* Counts into C one fetch that began at START (common_clock_ns(),
 * common/clock.h) and has
 * just ended: fetches, its time into the histogram, and fetch_errors when
 * FAILED (the remote failed it: the read or lookup is answered EIO). A
 * version or name found gone (ENODATA, ENOENT) is a fetch, not an error.
 * Relaxed atomic adds only: never blocks. */
void ofs_fetch_done(struct ofs_counters *c, uint64_t start, int failed);

/* The upper bounds, in seconds, of the histogram's OFS_FETCH_BOUNDS
 * buckets (ascending; bucket OFS_FETCH_BOUNDS is +Inf). Static storage,
 * read-only; never NULL. */
const double *ofs_fetch_bounds(void);

#endif
