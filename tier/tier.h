/* tier.h -- the remote tier of a store: results uploaded to the store's
 * remote (remote/) and found there again, with tombstones for removals.
 * The glue between store/ (which knows no network) and remote/ (which
 * knows no store); the library (agentlink) writes through it and the
 * daemon reads through it.
 *
 * Object layout under the remote's prefix (doc/remote.md):
 *   NS/KEY          exactly the stored bytes of result KEY of namespace NS,
 *                   metadata x-amz-meta-{tool,call-id,size,created}
 *   .tomb/NS/KEY    a tombstone: KEY was removed (rm, drop-referenced, gc);
 *                   empty, x-amz-meta-created the removal time
 * Keys and namespaces never start with '.', so no result can be named
 * like a tombstone.
 *
 * Caveats
 * =======
 * - Writes: tier_put() commits locally first (the store marks the version
 *   pending in that transaction), then uploads, then clears the mark. A
 *   writer killed at any point leaves the result either uploaded or
 *   pending; tier_sync() uploads what is pending.
 * - A name that is an object and a tombstone (written again after a
 *   removal) is live: readers ask for the object first.
 * - Threads: a tier handle may be shared; each thread passes its own
 *   remote_conn (remote.h).
 * - This header is the writer's (the library's). A reader -- the daemon --
 *   includes reader.h alone: it sees no remote.h, no object name and no
 *   REMOTE_E* code.
 *
 * Errors
 * ======
 * 0, errno values, STORE_E* codes (store.h), REMOTE_E* codes (remote.h),
 * or the TIER_E* codes (reader.h); tier_strerror() describes them all.
 * The functions of reader.h return no REMOTE_E* code.
 */
#ifndef OFFLOADFS_TIER_H
#define OFFLOADFS_TIER_H

#include <stddef.h>
#include <stdint.h>

#include "remote/remote.h"
#include "store/store.h"
#include "tier/reader.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opens the tier of ST (which must outlive it): reads the store's remote
 * URL and the AWS configuration (remote_open()). OPT may be NULL.
 * On success *OUT is yours (tier_close()). A description of a failure
 * goes to MSG (MSGLEN bytes) when not NULL.
 * Errors: TIER_ENONE (the store names no remote), REMOTE_ECONFIG, ENOMEM,
 * store errors reading the URL. */
int tier_open(tier **out, store *st, const remote_options *opt, char *msg, size_t msglen);

/* tier_close(): reader.h. */

/* The remote of T, for remote_conn_new() and remote_check(). */
remote *tier_remote(tier *t);

/* Checks the syntax of a remote URL (s3://BUCKET or s3://BUCKET/PREFIX)
 * before a store records it: remote_url_check(), no environment, no
 * network. Returns 0 or REMOTE_ECONFIG with a description in MSG (MSGLEN
 * bytes). For the command, which reaches the remote only through here. */
int tier_url_check(const char *url, char *msg, size_t msglen);

/* Writes the object name of (NS, KEY) -- "NS/KEY", or ".tomb/NS/KEY" with
 * TOMB -- into BUF (at least 2 * STORE_NAME_MAX + 8 bytes). */
void tier_name(char *buf, size_t cap, const char *ns, const char *key, int tomb);
#define TIER_NAME_MAX (2 * STORE_NAME_MAX + 8)

/* Uploads live version VERSION of (NS, KEY) from the store as its object
 * (CALL_ID may be NULL), then clears its pending mark. A version replaced
 * during the upload is not an error: the newer one is uploaded if its own
 * writer has already finished, so the object ends as the newest bytes.
 * Errors: REMOTE_E* (remote_conn_message() says more), STORE_EGONE (the
 * version is no longer live and nothing was uploaded), store errors. */
int tier_upload(tier *t, remote_conn *c, const char *ns, const char *key, uint64_t version,
                const char *call_id);

/* store_put() then tier_upload(). Returns 0 when the remote has the result
 * (then results left pending by earlier writes are uploaded too, as
 * tier_sync() does; those that fail stay pending); TIER_EUNSENT when it
 * was stored locally (and *OUT filled) but the upload failed
 * (remote_conn_message() says why; the result is pending); store errors
 * when nothing was written. */
int tier_put(tier *t, remote_conn *c, const char *ns, const char *key, const void *data,
             size_t len, const store_meta *meta, const char *call_id, store_entry *out);

/* Called by tier_sync() per pending result: RC 0 (uploaded) or its error,
 * MSG the connection's message. */
typedef void (*tier_report_fn)(void *ctx, const char *ns, const char *key, int rc, const char *msg);

/* Uploads every pending result, oldest first, then writes every pending
 * tombstone as tier_remove() does (a name written here again since is
 * live: its mark is dropped, nothing sent); FN (may be NULL) hears of
 * each. *UPLOADED and *LEFT (may be NULL) get the counts, tombstones
 * included. Returns 0 when nothing is left pending, TIER_EUNSENT
 * otherwise, or a store error. */
int tier_sync(tier *t, remote_conn *c, tier_report_fn fn, void *ctx, unsigned *uploaded,
              unsigned *left);

/* 1 when T's store has anything pending for the remote (an upload or a
 * tombstone), else 0. */
int tier_has_pending(tier *t);

/* One pending mark of a store: an upload of live version VERSION of (NS,
 * KEY), or, with TOMB, the tombstone of (NS, KEY) (VERSION: the version
 * removed). */
typedef struct tier_mark {
    char ns[STORE_NAME_MAX + 1];
    char key[STORE_NAME_MAX + 1];
    uint64_t version;
    int tomb;
} tier_mark;

/* Lists what T's store has pending for the remote: every pending upload,
 * oldest first, then every pending tombstone, oldest first (each list read
 * in one read transaction, the two one after the other: a mark may go or
 * come between them and after). *OUT (yours: free(); NULL when none) gets
 * *N marks. What tier_sync() walks, and what a writer that sends the
 * marks itself (the library's catch-up after an upload) lists first.
 * Errors: ENOMEM, store errors; then *OUT is NULL and *N 0. */
int tier_pending_list(tier *t, tier_mark **out, size_t *n);

/* Removes (NS, KEY) from the remote: writes its tombstone, then deletes
 * the object (so no host ever finds neither), then drops the store's
 * pending marks of that tombstone (store_remove() set them). Errors:
 * REMOTE_E* (the marks stay: tier_sync() sends the tombstone later),
 * store errors. */
int tier_remove(tier *t, remote_conn *c, const char *ns, const char *key);

/* Garbage collection for operators (agentlink gc --remote): removes, with
 * tombstones as tier_remove() does, the results of every namespace under
 * the prefix that are older than MAX_AGE_S seconds (0: no age bound), then
 * the oldest ones until at most MAX_BYTES remain (0: no byte bound).
 * *REMOVED and *KEPT_BYTES (may be NULL) get what was removed and what
 * remains. Errors: REMOTE_E*, ENOMEM; what was removed before an error
 * stays removed. */
int tier_gc(tier *t, remote_conn *c, uint64_t max_age_s, uint64_t max_bytes, unsigned *removed,
            uint64_t *kept_bytes);

/* Looks (NS, KEY) up on the remote: 0 and *INFO (yours:
 * remote_info_clear()) for an object; TIER_ETOMB when only a tombstone is
 * there; REMOTE_ENOTFOUND when neither; other REMOTE_E* codes. */
int tier_lookup(tier *t, remote_conn *c, const char *ns, const char *key, remote_info *info);

/* tier_lookup() that also fetches the object's first LEN bytes in the
 * same request (remote_get_first(): SINK gets them, *GOT their count;
 * LEN 0: none, a HEAD). The daemon's lookups use it, so a lookup followed
 * by a read costs one round trip, not two. */
int tier_lookup_first(tier *t, remote_conn *c, const char *ns, const char *key, uint64_t len,
                      remote_sink_fn sink, void *arg, uint64_t *got, remote_info *info);

/* Streams bytes [OFF, OFF + LEN) of the result object of (NS, KEY) to
 * SINK(ARG) as remote_get_if() does: ETAG (from a lookup; NULL: any
 * version) pins the version, so a result replaced since is
 * REMOTE_ECHANGED, never a mix of two. *GOT (may be NULL) gets the bytes
 * given. Errors: as remote_get_if(). */
int tier_get(tier *t, remote_conn *c, const char *ns, const char *key, const char *etag,
             uint64_t off, uint64_t len, remote_sink_fn sink, void *arg, uint64_t *got);

/* The tombstone of (NS, KEY) on the remote: 0 and *CREATED (Unix seconds
 * of the removal, 0 when unknown) when there is one; REMOTE_ENOTFOUND when
 * not; other REMOTE_E* codes. */
int tier_tomb_get(tier *t, remote_conn *c, const char *ns, const char *key, int64_t *created);

/* Calls FN for each result of NS on the remote (KEY without the "NS/"),
 * in the order the server sends (remote_list(): sort when you need one),
 * within the bounds B (NULL: remote_list()'s defaults). Only objects
 * exactly one level under "NS/" are results; others are skipped.
 * Errors: as remote_list_bounded(). */
int tier_list(tier *t, remote_conn *c, const char *ns, const remote_list_bounds *b, remote_list_fn fn,
              void *arg);

#ifdef __cplusplus
}
#endif
#endif
