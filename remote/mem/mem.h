/* mem.h -- an in-memory remote for unit tests: a second implementation of
 * every function of remote/remote.h, over buckets held in this process,
 * with faults injected on demand. A test links build/libremote_mem.a
 * instead of build/libremote.a (a link-time substitution: nothing in
 * remote/, tier/ or fs/ knows about it), opens its store's tier as
 * usual, and drives the remote's answers through the functions below.
 *
 * What it keeps of S3 (remote/remote.h documents each function; these are
 * the points a test meets):
 * - Buckets exist only once made (remote_mem_bucket()); every request on a
 *   missing one fails as S3's does: REMOTE_ENOBUCKET, but REMOTE_ENOTFOUND
 *   for a HEAD (no body to tell them apart).
 * - An object is stored whole under its full key ("PREFIX/NAME"), replaced
 *   whole by a PUT; its ETag is a hash of its bytes (the same bytes give
 *   the same ETag, as S3's MD5 does), Last-Modified the second of the PUT.
 * - Ranged GETs answer 206 with exactly the range asked, 416 at or past the
 *   end (0 bytes, no error); If-Match against another version is 412
 *   (REMOTE_ECHANGED). A retried GET resumes after the bytes delivered,
 *   pinned to the first answer's ETag.
 * - DELETE of a missing key succeeds. Listings come in byte order of the
 *   full key, list_page keys a page, with a continuation token; the
 *   listing's bounds (pages, time, stop) end it as remote/list.c does.
 * - Retries: an attempt that fails with REMOTE_EDOWN (a 5xx, a timeout, a
 *   dropped connection, a stall) is retried up to the options' retries
 *   with the same growing backoff (real sleeps: tests set backoff_ms 1);
 *   any other code ends the operation at once. remote_conn_attempts() and
 *   remote_conn_message() ("OP s3://BUCKET/PREFIX/NAME: why[, N
 *   attempts]") say what happened, as the real ones do.
 * What it does not model: configuration (no AWS variable or file is read;
 * remote_open() checks the URL only), credentials, the parts of a
 * multipart upload (one PUT request whatever the size; only its ETag takes
 * the multipart form "HASH-PARTS"), time skew.
 *
 * Caveats
 * =======
 * - State is process-wide (a test program is one remote "server"): two
 *   remotes opened on the same bucket see the same objects, as two hosts
 *   do. remote_mem_reset() empties it; call it at each test's teardown.
 * - Threads: every function may be called from any thread; a request's
 *   sink, source, stop and hook callbacks run without any lock held, so
 *   they may call back into this module.
 * - Requests are counted per attempt, as a server would count them.
 *
 * Errors: 0, ENOMEM, EINVAL, or what the remote_* functions document. */
#ifndef OFFLOADFS_REMOTE_MEM_H
#define OFFLOADFS_REMOTE_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "remote/remote.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kinds of request, for faults and counters. remote_get_first() is a
 * GET (a HEAD when LEN is 0 or the object is empty); each page of a
 * listing is one LIST; remote_check() is one CHECK. */
typedef enum remote_mem_op {
    REMOTE_MEM_ANY = 0,
    REMOTE_MEM_PUT,
    REMOTE_MEM_GET,
    REMOTE_MEM_HEAD,
    REMOTE_MEM_DELETE,
    REMOTE_MEM_LIST,
    REMOTE_MEM_CHECK,
    REMOTE_MEM_OPS /* the number of kinds */
} remote_mem_op;

/* One bucket of the in-memory server. Never freed while the process holds
 * it: remote_mem_reset() and remote_mem_bucket_drop() empty it and mark it
 * gone, so a pointer a test kept stays safe to pass. */
typedef struct remote_mem remote_mem;

/* The bucket NAME, made (empty) when it does not exist. NULL without
 * memory or for a NAME of more than 63 bytes. */
remote_mem *remote_mem_bucket(const char *name);

/* Drops the bucket NAME with its objects and faults: requests then fail as
 * on a missing bucket. A missing NAME is fine. */
void remote_mem_bucket_drop(const char *name);

/* Drops every bucket, object and fault, and zeroes the counters: the state
 * of a fresh process. Remotes and connections stay valid (they find their
 * bucket missing). */
void remote_mem_reset(void);

/* ---- Faults ----------------------------------------------------------- */
/* Called when a request that a fault matches is about to be answered, with
 * the operation and the name (relative to the remote's prefix; a listing's
 * prefix). No lock is held: it may sleep, wait on the test, write objects
 * (remote_mem_put()) or make requests on another connection. Returns 0 to
 * let the attempt go on, or a code the attempt fails with. */
typedef int (*remote_mem_hook_fn)(void *arg, remote_mem_op op, const char *name);

/* A rule for the requests of one kind. Zero-initialise and fill in what
 * applies; several effects may be combined (HOOK first, then DELAY_MS,
 * then ERR, or else the answer with CUT, then REPLACE). */
typedef struct remote_mem_fault {
    remote_mem_op op;     /* the requests it matches (REMOTE_MEM_ANY: all) */
    const char *name;     /* ... whose name starts with this (NULL: any); copied */
    unsigned skip;        /* let this many matching attempts through first */
    unsigned times;       /* then act on this many (0: on every one after) */
    int err;              /* fail the attempt with this code: any REMOTE_E*
                             or errno value; REMOTE_EDOWN is transient and
                             retried (a 503, a refused connection) */
    unsigned delay_ms;    /* wait this long before the first byte of the
                             answer: below the remote's stall limit
                             (stall_s) a slow first byte; at or above it the
                             attempt stalls and is aborted after stall_s, as
                             REMOTE_EDOWN (retried) */
    uint64_t cut;         /* GET: the answer stops after this many body bytes
                             (0: not cut) and the connection drops:
                             REMOTE_EDOWN, retried after what was delivered */
    const void *replace;  /* after the attempt (answered or not), object
                             NAME (the request's) is replaced by these
                             REPLACE_LEN bytes, a new version: what another
                             host's write between two requests does; copied */
    size_t replace_len;
    int repeat_token;     /* LIST: the page answers the continuation token it
                             was asked with (a server that loops) */
    remote_mem_hook_fn hook; /* called first (see above), or NULL */
    void *hook_arg;
} remote_mem_fault;

/* Adds fault F to bucket M. For each attempt, every rule is checked in the
 * order added; each rule that matches counts the attempt toward its SKIP
 * and TIMES, and the first whose turn it is acts. Errors: ENOMEM, EINVAL
 * (M NULL, OP out of range). */
int remote_mem_fault_add(remote_mem *m, const remote_mem_fault *f);

/* Removes every fault of M. */
void remote_mem_fault_clear(remote_mem *m);

/* Listings in reverse byte order when ON (a server that does not sort:
 * callers must not rely on the order), byte order when 0. */
void remote_mem_list_reverse(remote_mem *m, int on);

/* ---- Counters --------------------------------------------------------- */
/* The attempts of kind OP made on M since the last reset (REMOTE_MEM_ANY:
 * all kinds), whether they succeeded or not. */
unsigned long remote_mem_requests(const remote_mem *m, remote_mem_op op);

/* Zeroes M's counters. */
void remote_mem_requests_reset(remote_mem *m);

/* ---- Objects, behind the requests' back ------------------------------- */
/* KEY is the object's full key in the bucket ("PREFIX/NAME", or "NAME"
 * with no prefix). None of these is a request: no fault, no counter. */

/* Stores LEN bytes at DATA as KEY with META (may be NULL), as a PUT does;
 * MTIME 0: now. Errors: ENOMEM, REMOTE_ENOBUCKET (M was dropped). */
int remote_mem_put(remote_mem *m, const char *key, const void *data, size_t len,
                   const remote_meta *meta, int64_t mtime);

/* Copies object KEY: *DATA (malloc'd, yours, NUL-terminated past LEN; may
 * be NULL to skip) and *LEN, and into *INFO (may be NULL; yours:
 * remote_info_clear()) what a HEAD answers. Errors: REMOTE_ENOTFOUND,
 * ENOMEM. */
int remote_mem_get(remote_mem *m, const char *key, void **data, size_t *len, remote_info *info);

/* Sets object KEY's Last-Modified (Unix seconds): ages it for a gc.
 * Errors: REMOTE_ENOTFOUND. */
int remote_mem_set_mtime(remote_mem *m, const char *key, int64_t mtime);

/* Removes KEY (a missing one is fine). */
void remote_mem_remove(remote_mem *m, const char *key);

/* The number of objects in M. */
size_t remote_mem_count(const remote_mem *m);

#ifdef __cplusplus
}
#endif
#endif
