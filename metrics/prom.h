/* prom.h -- offloadfs' figures in the Prometheus text exposition format
 * (version 0.0.4), for the daemon's GET /metrics (fs/metrics.c) and for
 * agentlink stats --prometheus. One formatter, so both outputs name and
 * describe every metric the same way.
 *
 * This module knows nothing of FUSE, HTTP or LMDB: callers gather the
 * figures and hand them over in plain structs; it only writes text.
 *
 * Caveats
 * =======
 * - Every family is written whole: "# HELP", "# TYPE", then its samples.
 *   A family must appear once in an exposition, so write each group of
 *   figures once per output.
 * - Label values are escaped as the format requires (backslash, double
 *   quote, line feed); HELP texts here are fixed and need none.
 * - Values are unsigned 64-bit integers written in decimal; Prometheus
 *   reads them as float64 (exact up to 2^53).
 * - Errors: functions return 0, or EIO when writing to F failed (ferror).
 *   They never allocate.
 */
#ifndef OFFLOADFS_METRICS_PROM_H
#define OFFLOADFS_METRICS_PROM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The Content-Type of an exposition served over HTTP. */
#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* The store's figures: store-wide, every namespace together (the bound is
 * over the whole store). puts and evictions are the store's own counts
 * since it was made (store_stats), so they never go backwards. */
typedef struct prom_store_figures {
    uint64_t entries;         /* live results */
    uint64_t bytes;           /* their sizes (before compression) */
    uint64_t stored_bytes;    /* what they occupy: what the bound counts */
    uint64_t max_total_bytes; /* the bound */
    uint64_t puts;            /* results written, ever */
    uint64_t evictions;       /* results evicted to keep the bound, ever */
    uint64_t removals;        /* results removed by callers, ever */
} prom_store_figures;

/* What one mount answered since its daemon started (counters kept in the
 * daemon's memory: they restart at 0 with it, as Prometheus expects). */
typedef struct prom_mount_figures {
    uint64_t reads;           /* read requests answered with data */
    uint64_t read_bytes;      /* bytes they returned */
    uint64_t evicted_reads;   /* lookups, opens, reads answered ENODATA */
    uint64_t missing_lookups; /* lookups answered ENOENT */
} prom_mount_figures;

/* A histogram (the remote tier's offloadfs_remote_fetch_seconds, say).
 * BOUNDS are the NBOUNDS upper bounds of the buckets, increasing; COUNTS
 * has NBOUNDS + 1 entries: observations that fell in each bucket (not
 * cumulative; the last is above every bound), SUM their total. */
typedef struct prom_histogram {
    const double *bounds;
    const uint64_t *counts;
    size_t nbounds;
    double sum;
} prom_histogram;

/* What one mount fetched from the store's remote tier since its daemon
 * started (fs/metrics.c says what a fetch is). SECONDS times every fetch,
 * failed ones too. */
typedef struct prom_remote_figures {
    uint64_t fetches;       /* GETs of remote results' bytes (reads', lookups') */
    uint64_t fetch_errors;  /* those the remote failed */
    uint64_t lookup_errors; /* listings and HEAD-only lookups the remote failed */
    uint64_t window_bytes;  /* memory the read windows hold now (a gauge) */
    prom_histogram seconds; /* how long each took */
    uint64_t fetch_bytes;   /* the bytes they brought */
    uint64_t cache_hits;    /* reads served from a cached copy here */
    uint64_t cache_misses;  /* results fetched whole */
} prom_remote_figures;

/* Writes the families of the store's figures S. STORE (may be NULL: no
 * label) is the store's directory, given as label store="..." on every
 * sample, so that several stores on one host stay apart. */
int prom_store_write(FILE *f, const prom_store_figures *s, const char *store);

/* Writes the families of one mount's figures M, each sample labelled
 * namespace="NS" (NS not NULL). */
int prom_mount_write(FILE *f, const prom_mount_figures *m, const char *ns);

/* Writes offloadfs_remote_pending_uploads, the gauge of the store's
 * results pending upload to its remote and removals whose tombstone is
 * pending (store_stats.pending, every namespace), labelled store="STORE" as prom_store_write() does. Only for
 * a store that names a remote. */
int prom_pending_write(FILE *f, uint64_t pending, const char *store);

/* Writes offloadfs_store_cached_entries and offloadfs_store_cached_bytes,
 * the gauges of the store's cached copies of remote results
 * (store_stats.cached_entries, cached_bytes), labelled as
 * prom_pending_write() labels. Only for a store that names a remote. */
int prom_cached_write(FILE *f, uint64_t entries, uint64_t bytes, const char *store);

/* Writes the families of one mount's remote figures R
 * (offloadfs_remote_fetches_total, offloadfs_remote_fetch_errors_total,
 * offloadfs_remote_lookup_errors_total, offloadfs_remote_fetch_bytes_total,
 * offloadfs_cache_hits_total, offloadfs_cache_misses_total, the gauge
 * offloadfs_remote_window_bytes, the histogram
 * offloadfs_remote_fetch_seconds), each sample labelled
 * namespace="NS" (NS not NULL). */
int prom_remote_write(FILE *f, const prom_remote_figures *r, const char *ns);

/* Writes offloadfs_build_info{version="VERSION"} 1 with its HELP and TYPE. */
int prom_build_info_write(FILE *f, const char *version);

/* Writes "# HELP NAME HELP" and "# TYPE NAME TYPE" (TYPE: "counter",
 * "gauge", "histogram"): the start of a family whose samples the caller
 * writes next with prom_sample_write(). */
int prom_family_write(FILE *f, const char *name, const char *type, const char *help);

/* Writes one sample: NAME, the label LABEL="VALUE" when LABEL is not NULL
 * (VALUE escaped), and V. */
int prom_sample_write(FILE *f, const char *name, const char *label, const char *value,
                      uint64_t v);

/* Writes histogram family NAME (HELP, TYPE, the _bucket samples with their
 * cumulative counts and le="..." labels ending with le="+Inf", _sum and
 * _count), each sample labelled namespace="NS" when NS is not NULL. */
int prom_histogram_write(FILE *f, const char *name, const char *help, const char *ns,
                         const prom_histogram *h);

#endif
