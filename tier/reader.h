/* reader.h -- the tier as a reader sees it: the daemon's port to the
 * remote. Lookups of a result (with its first bytes), ranged reads of one
 * version of it, listings of a namespace, the mount-time check, and the
 * codes all of the tier's functions return. Nothing here names an S3
 * object, a remote handle or a REMOTE_E* code: a reader asks for (NS, KEY)
 * and gets 0, an errno value or a TIER_E* code. The writer's side (upload,
 * sync, removal, gc) is tier.h, which includes this header.
 *
 * Caveats
 * =======
 * - Threads: a tier handle may be shared once open; a connection
 *   (tier_conn) belongs to one thread at a time. Make one per thread.
 * - Bounds: every request is bounded (a connect timeout, a stall limit,
 *   a bounded number of retries); tier_bound_ms() is the longest an
 *   operation on a dead or stalled remote takes before it fails, and the
 *   one function that computes it (the daemon logs it at mount).
 * - Versions: a version is an ETag from a lookup. A read of a version
 *   never mixes two: a result replaced or removed since is TIER_ECHANGED.
 *
 * Errors
 * ======
 * 0, errno values (ENOMEM above all), store codes (store.h) where a call
 * reads the store, or the TIER_E* codes below; tier_strerror() describes
 * them all. tier_conn_message() says what the last request on a
 * connection did wrong (the operation, the object, the HTTP status or the
 * transport error, never a secret).
 */
#ifndef OFFLOADFS_TIER_READER_H
#define OFFLOADFS_TIER_READER_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TIER_ERR_BASE (-34000)
/* Stored locally, but the upload failed: kept pending for tier_sync().
 * Not STORE_EPENDING, which is the store's bound held by such results. */
#define TIER_EUNSENT   (TIER_ERR_BASE - 1)
#define TIER_ETOMB     (TIER_ERR_BASE - 2) /* removed (a tombstone on the remote) */
#define TIER_ENONE     (TIER_ERR_BASE - 3) /* the store names no remote */
#define TIER_ENOTFOUND (TIER_ERR_BASE - 4) /* neither a result nor a tombstone there */
#define TIER_ECHANGED  (TIER_ERR_BASE - 5) /* that version is gone: replaced or removed */
#define TIER_ECONFIG   (TIER_ERR_BASE - 6) /* the remote's URL, credentials or profile is unusable */
#define TIER_EDENIED   (TIER_ERR_BASE - 7) /* credentials refused, or no permission */
#define TIER_ENOBUCKET (TIER_ERR_BASE - 8) /* the bucket does not exist */
#define TIER_EFAILED   (TIER_ERR_BASE - 9) /* the remote failed otherwise: down, stalled
                                              past its bound, or an answer not understood */

/* retries = TIER_NO_RETRY: one attempt only (0 means the default). */
#define TIER_NO_RETRY 0xffffffffu

/* A static description of any code tier functions return (TIER_E*,
 * store codes, errno values). Never NULL. */
const char *tier_strerror(int err);

typedef struct tier tier;
typedef struct tier_conn tier_conn;

/* Opens the tier of ST (which must outlive it) for reading, with request
 * bounds STALL_S (seconds without progress that fail a request; 0: the
 * default) and RETRIES (after the first attempt; 0: the default,
 * TIER_NO_RETRY: none). On success *OUT is yours (tier_close()). A
 * description of a failure goes to MSG (MSGLEN bytes) when not NULL.
 * Errors: TIER_ENONE (the store names no remote), TIER_ECONFIG, ENOMEM,
 * store errors reading the URL. */
int tier_open_reader(tier **out, store *st, unsigned stall_s, unsigned retries, char *msg,
                     size_t msglen);

/* Releases T (NULL is fine). Free its connections first. */
void tier_close(tier *t);

/* The longest, in milliseconds, an operation of T against a dead or
 * stalled remote takes before it fails (attempts x (connect or stall
 * limit) + backoffs, from T's options); a transfer that keeps moving is not
 * bounded by it. Every place that shows the bound calls this. */
uint64_t tier_bound_ms(const tier *t);

/* Writes "s3://BUCKET/PREFIX at ENDPOINT" (no credential) into BUF (CAP
 * bytes, always terminated), for log lines. */
void tier_describe(const tier *t, char *buf, size_t cap);

/* Makes a connection to T's remote (T must outlive it); *OUT is yours:
 * tier_conn_free(). Errors: ENOMEM. */
int tier_conn_new(tier_conn **out, tier *t);

/* Releases a connection (NULL is fine). */
void tier_conn_free(tier_conn *c);

/* What the last failed request on C did wrong, one line ("" after a
 * success, or when C is NULL). Valid until the next call on C. */
const char *tier_conn_message(const tier_conn *c);

/* Checks that the bucket exists and that the credentials may list the
 * prefix (one small listing), for a clear message at mount. 0, or
 * TIER_EDENIED, TIER_ENOBUCKET, TIER_EFAILED, ENOMEM. */
int tier_check(tier_conn *c);

/* Receives the next N bytes of a body; 0, or nonzero to abort the request
 * (which then fails with TIER_EFAILED). */
typedef int (*tier_sink_fn)(void *arg, const void *data, size_t n);

/* What a lookup found: one version of a result. */
#define TIER_ETAG_MAX 127
typedef struct tier_object {
    uint64_t length;                 /* bytes of the object (of the result as stored) */
    uint64_t size;                   /* bytes before any cut (the original size) */
    int64_t created;                 /* Unix seconds of the write, 0 when unknown */
    int64_t mtime;                   /* the object's Last-Modified, Unix seconds, 0 when
                                        unknown: what a listing gives for it */
    char etag[TIER_ETAG_MAX + 1];    /* the version, "" when the server sent none usable */
    int has_tool;                    /* tool holds the writer's tool name */
    char tool[STORE_TOOL_MAX + 1];
} tier_object;

/* Looks (NS, KEY) up on the remote and fetches the first LEN bytes of its
 * result in the same request (LEN 0: none): SINK(ARG) gets them, *GOT
 * their count, *OBJ the version found. A lookup followed by a read of a
 * small result is then one round trip, not two. Returns 0; TIER_ETOMB
 * when only a tombstone is there; TIER_ENOTFOUND when neither;
 * TIER_EDENIED, TIER_ENOBUCKET, TIER_EFAILED; ENOMEM. */
int tier_read_lookup(tier *t, tier_conn *c, const char *ns, const char *key, uint64_t len,
                     tier_sink_fn sink, void *arg, uint64_t *got, tier_object *obj);

/* Streams bytes [OFF, OFF + LEN) of version ETAG (from tier_read_lookup())
 * of the result (NS, KEY) to SINK(ARG), each byte once (a retried request
 * resumes). *GOT (may be NULL) gets the bytes given; fewer than LEN when
 * the object is shorter. Returns 0; TIER_ECHANGED when that version is no
 * longer there (replaced or removed: never bytes of another); TIER_EDENIED,
 * TIER_ENOBUCKET, TIER_EFAILED (also when SINK aborted); ENOMEM. */
int tier_read_version(tier *t, tier_conn *c, const char *ns, const char *key, const char *etag,
                      uint64_t off, uint64_t len, tier_sink_fn sink, void *arg, uint64_t *got);

/* Called by tier_read_list() per result: KEY (valid during the call), its
 * object's SIZE and MTIME. 0 to go on, nonzero to stop (returned). */
typedef int (*tier_list_fn)(void *arg, const char *key, uint64_t size, int64_t mtime);

/* Calls FN(ARG) for each result of NS on the remote, in the order the
 * server sends (sort when you need one), within MAX_MS milliseconds in
 * all (0: only each request's own bound); STOP (may be NULL) is asked
 * between pages and at least once a second, and its nonzero value ends
 * the listing at once. Returns 0; FN's or STOP's nonzero value;
 * TIER_EDENIED, TIER_ENOBUCKET, TIER_EFAILED (also past MAX_MS or the page
 * bound); ENOMEM. */
int tier_read_list(tier *t, tier_conn *c, const char *ns, uint64_t max_ms, int (*stop)(void *),
                   void *stop_arg, tier_list_fn fn, void *arg);

/* 1 when T's store holds a removal of (NS, KEY) whose tombstone is not yet
 * on the remote (removed here while it could not be reached): this host's
 * answer is then "removed", whatever the remote still holds. 0 otherwise,
 * also when the marks cannot be read. */
int tier_tomb_pending(tier *t, const char *ns, const char *key);

#ifdef __cplusplus
}
#endif
#endif
