/* remote.h -- the remote tier: tool results as objects on an S3 API
 * (AWS S3, Ceph radosgw, MinIO, R2, ...), over libcurl.
 *
 * A remote is a bucket and a prefix, "s3://BUCKET/PREFIX". Object names
 * given to this module are relative to the prefix: the result KEY of
 * namespace NS is the name "NS/KEY", stored as object "PREFIX/NS/KEY"
 * (doc/remote.md). This module knows nothing of LMDB, FUSE or JSON; the
 * store (store/) knows nothing of the network.
 *
 * Caveats
 * =======
 * - Configuration comes from the AWS conventions, read once by
 *   remote_open(): AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 *   AWS_SESSION_TOKEN, AWS_REGION / AWS_DEFAULT_REGION, AWS_ENDPOINT_URL_S3
 *   / AWS_ENDPOINT_URL, AWS_PROFILE with ~/.aws/credentials and
 *   ~/.aws/config (AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE move
 *   them). Variables beat the files. No instance metadata, SSO or
 *   web-identity provider: give such credentials as variables.
 * - Addressing: a custom endpoint is addressed path-style
 *   (ENDPOINT/BUCKET/NAME); AWS itself virtual-hosted
 *   (https://BUCKET.s3.REGION.amazonaws.com/NAME).
 * - Threads: a remote handle is immutable after remote_open() and may be
 *   shared. A connection (remote_conn) belongs to one thread at a time: it
 *   is one libcurl easy handle, reused so its connections stay alive. Make
 *   one per thread.
 * - Bounds: every request has a connect timeout and a stall limit (less
 *   than REMOTE_STALL_BYTES bytes a second for stall_s aborts it). A
 *   transient failure (no connection, timeout, HTTP 429 or 5xx) is retried
 *   up to retries times with a growing backoff; so an operation against a
 *   dead or stalled server fails within remote_bound_ms(), computed in one
 *   place (remote_options_bound_ms(); 9.5 s with the default options).
 * - Secrets: no message of this module, no URL and no log line contains a
 *   secret key or session token; the access key id is never printed either.
 * - fork(): do not use a connection made before fork() in the child.
 *
 * Errors
 * ======
 * Functions return 0, a positive errno value (ENOMEM, EINVAL, EIO) or one
 * of the REMOTE_E* codes below (negative, their own range).
 * remote_strerror() describes any of them; remote_conn_message() says what
 * the last operation on a connection did wrong: the operation, the bucket
 * and name, and the HTTP status and S3 error code or the curl error. Free
 * functions accept NULL.
 */
#ifndef OFFLOADFS_REMOTE_H
#define OFFLOADFS_REMOTE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Error codes (negative; errno values are positive) ---------------- */
#define REMOTE_ERR_BASE (-33000) /* apart from AL_ERR_BASE (-32000) and STORE_ERR_BASE */
#define REMOTE_ENOTFOUND (REMOTE_ERR_BASE - 1) /* no such object (HTTP 404 NoSuchKey) */
#define REMOTE_ENOBUCKET (REMOTE_ERR_BASE - 2) /* no such bucket (HTTP 404 NoSuchBucket) */
#define REMOTE_EDENIED   (REMOTE_ERR_BASE - 3) /* credentials refused or no permission (401/403) */
#define REMOTE_EDOWN     (REMOTE_ERR_BASE - 4) /* unreachable, timed out or 5xx after every retry */
#define REMOTE_ECONFIG   (REMOTE_ERR_BASE - 5) /* bad URL, no credentials, unreadable profile */
#define REMOTE_EPROTO    (REMOTE_ERR_BASE - 6) /* any other HTTP status, or an answer not understood */
#define REMOTE_ESOURCE   (REMOTE_ERR_BASE - 7) /* the caller's source or sink callback failed */
#define REMOTE_ECHANGED  (REMOTE_ERR_BASE - 8) /* the object is no longer the version asked for (412) */
#define REMOTE_ELIMIT    (REMOTE_ERR_BASE - 9) /* a listing past its bound of pages or time */

/* Returns a static description of any code above or errno. Never NULL. */
const char *remote_strerror(int err);

/* True for the errors a later retry may cure (REMOTE_EDOWN): what a writer
 * turns into "pending" and a reader into EIO. */
int remote_err_transient(int err);

/* ---- Opening ---------------------------------------------------------- */
typedef struct remote remote;

/* Request bounds; zero fields take $OFFLOADFS_REMOTE_STALL_SECONDS and
 * $OFFLOADFS_REMOTE_RETRIES (0: no retry) when set, else the defaults. */
typedef struct remote_options {
    unsigned connect_ms; /* TCP (and TLS) connect timeout, default 1000 */
    unsigned stall_s;    /* abort below REMOTE_STALL_BYTES/s this long, default 2 */
    unsigned retries;    /* retries after the first attempt, default 2; see below */
    unsigned backoff_ms; /* first backoff, x4 each retry, default 100 */
    uint64_t part_bytes; /* multipart part size, default 16 MiB (min 5 MiB) */
    uint64_t multipart_over; /* uploads larger than this go multipart, default 32 MiB */
    unsigned list_page;  /* objects per listing request, default (and max) 1000 */
} remote_options;
#define REMOTE_STALL_BYTES 1024u
/* retries = REMOTE_NO_RETRY: one attempt only (0 means the default). */
#define REMOTE_NO_RETRY 0xffffffffu

/* Parses URL ("s3://BUCKET" or "s3://BUCKET/PREFIX"; surrounding slashes of
 * the prefix are dropped) and reads the configuration from the environment
 * and the AWS files (see Caveats). OPT may be NULL (defaults).
 * On success *OUT is a handle you own: release it with remote_close().
 * On failure, when MSG is not NULL, a description (naming the variable,
 * file or rule, never a secret) is written to MSG (MSGLEN bytes, always
 * terminated).
 * Errors: REMOTE_ECONFIG (malformed URL or bucket name, no credentials,
 * unreadable profile, no such profile), ENOMEM. */
int remote_open(remote **out, const char *url, const remote_options *opt,
                char *msg, size_t msglen);

/* Releases a handle (NULL is fine). Close its connections first. */
void remote_close(remote *r);

/* Checks URL's syntax only (no environment, no network): 0 or
 * REMOTE_ECONFIG with a description in MSG as for remote_open(). */
int remote_url_check(const char *url, char *msg, size_t msglen);

/* The bucket, the prefix ("" when none) and the endpoint URL (without any
 * credential); valid until remote_close(). */
const char *remote_bucket(const remote *r);
const char *remote_prefix(const remote *r);
const char *remote_endpoint(const remote *r);

/* The longest an operation on an unreachable or stalled server takes before
 * it fails with REMOTE_EDOWN, in milliseconds, from the options (attempts x
 * (connect or stall limit) + backoffs); a transfer that keeps moving is not
 * bounded by it. */
uint64_t remote_bound_ms(const remote *r);

/* The same bound from options whose zero fields have already been given
 * their defaults (as a remote holds them): connect_ms + 1000 x stall_s per
 * attempt, 1 + retries attempts, and the backoffs between them (backoff_ms,
 * x4 each). The one place the formula is written; remote_bound_ms() and the
 * in-memory remote call it. */
uint64_t remote_options_bound_ms(const remote_options *o);

/* Fills *O from IN (NULL: all zero) and gives every zero field its value:
 * $OFFLOADFS_REMOTE_STALL_SECONDS and $OFFLOADFS_REMOTE_RETRIES when set,
 * else the defaults above; clamps part_bytes and list_page. What
 * remote_open() does with its options. */
void remote_options_resolve(remote_options *o, const remote_options *in);

/* ---- Connections ------------------------------------------------------ */
typedef struct remote_conn remote_conn;

/* Makes a connection (an easy handle) on R, which must outlive it.
 * *OUT is yours: remote_conn_free(). Errors: ENOMEM. */
int remote_conn_new(remote_conn **out, remote *r);

/* Releases a connection (NULL is fine). */
void remote_conn_free(remote_conn *c);

/* What the last failed operation on C did wrong, one line without a
 * newline, e.g. "GET s3://b/p/ns/k: HTTP 403 AccessDenied" or
 * "PUT s3://b/p/ns/k: Timeout was reached (curl 28), 3 attempts".
 * "" after a success. Valid until the next operation on C. */
const char *remote_conn_message(const remote_conn *c);

/* How many attempts the last operation on C made (1 when it needed no
 * retry). */
unsigned remote_conn_attempts(const remote_conn *c);

/* ---- Objects ---------------------------------------------------------- */
/* Metadata kept with each object as x-amz-meta-* headers. Strings are
 * percent-encoded on the wire (RFC 3986, UTF-8) so any byte survives. */
typedef struct remote_meta {
    const char *tool;    /* x-amz-meta-tool, or NULL */
    const char *call_id; /* x-amz-meta-call-id, or NULL */
    uint64_t size;       /* x-amz-meta-size: bytes before any cut (original size) */
    int64_t created;     /* x-amz-meta-created: Unix seconds of the write */
} remote_meta;

/* Reads LEN bytes at OFF of the body being uploaded into BUF. Returns 0 or
 * any nonzero value to abort the upload (REMOTE_ESOURCE). A retry reads the
 * same range again, so the source must be re-readable. */
typedef int (*remote_source_fn)(void *arg, uint64_t off, void *buf, size_t len);

/* Uploads SIZE bytes from SRC(ARG) as object NAME (relative to the prefix;
 * any bytes but NUL) with META (may be NULL). Larger than
 * multipart_over: a multipart upload in part_bytes parts, each retried on
 * its own, aborted on failure (no part left behind). Returns when the
 * server has stored the whole object.
 * Errors: REMOTE_EDOWN, REMOTE_EDENIED, REMOTE_ENOBUCKET, REMOTE_EPROTO,
 * REMOTE_ESOURCE, ENOMEM. */
int remote_put(remote_conn *c, const char *name, uint64_t size,
               remote_source_fn src, void *arg, const remote_meta *meta);

/* remote_put() of LEN bytes at BUF. */
int remote_put_buf(remote_conn *c, const char *name, const void *buf, size_t len,
                   const remote_meta *meta);

/* Receives the next N bytes of a body; returns 0, or nonzero to abort
 * (REMOTE_ESOURCE). */
typedef int (*remote_sink_fn)(void *arg, const void *data, size_t n);

/* Streams bytes [OFF, OFF + LEN) of object NAME to SINK(ARG) in order, in
 * pieces as they arrive (nothing buffered whole); LEN = UINT64_MAX means to
 * the end. *GOT (may be NULL) gets how many bytes the sink received. A
 * range past the end delivers what exists (0 bytes at or past the end). A
 * retried attempt resumes after the bytes already delivered, so the sink
 * sees each byte once.
 * Errors: REMOTE_ENOTFOUND, REMOTE_ENOBUCKET, REMOTE_EDENIED, REMOTE_EDOWN,
 * REMOTE_EPROTO, REMOTE_ESOURCE, ENOMEM. */
int remote_get(remote_conn *c, const char *name, uint64_t off, uint64_t len,
               remote_sink_fn sink, void *arg, uint64_t *got);

/* remote_get() of the version whose ETag is ETAG only (If-Match): an object
 * replaced since is REMOTE_ECHANGED, never bytes of another version. ETAG
 * NULL: any version, as remote_get(). */
int remote_get_if(remote_conn *c, const char *name, const char *etag, uint64_t off, uint64_t len,
                  remote_sink_fn sink, void *arg, uint64_t *got);

/* remote_get() into BUF (CAP bytes): *GOT gets the bytes stored, at most
 * CAP. */
int remote_get_buf(remote_conn *c, const char *name, uint64_t off, void *buf,
                   size_t cap, size_t *got);

/* What remote_head() answers. Strings are yours: remote_info_clear(). */
typedef struct remote_info {
    uint64_t length;  /* object length in bytes (Content-Length) */
    int64_t mtime;    /* Last-Modified, Unix seconds (0 when absent) */
    char *etag;       /* ETag with its quotes, or NULL */
    char *tool;       /* decoded metadata, or NULL when absent */
    char *call_id;
    uint64_t size;    /* x-amz-meta-size, or length when absent */
    int64_t created;  /* x-amz-meta-created, or mtime when absent */
} remote_info;

/* Fetches object NAME's length and metadata into *OUT (cleared first).
 * Errors: REMOTE_ENOTFOUND (also for a missing bucket: HEAD answers no
 * body to tell them apart), REMOTE_EDENIED, REMOTE_EDOWN, REMOTE_EPROTO,
 * ENOMEM. */
int remote_head(remote_conn *c, const char *name, remote_info *out);

/* remote_head() and the first LEN bytes in one request: a GET of bytes
 * [0, LEN) of NAME, streamed to SINK as remote_get() does (*GOT: the bytes
 * given, min(LEN, length) once all came), with the object's length (from
 * Content-Range), ETag and metadata into *OUT (cleared first; yours:
 * remote_info_clear()). A lookup that is followed by a read saves a round
 * trip. An empty object (416 to any range) is answered by a HEAD; LEN 0
 * is a HEAD. Errors: as remote_head() and remote_get(); REMOTE_EPROTO for
 * a 206 without a Content-Range total. */
int remote_get_first(remote_conn *c, const char *name, uint64_t len, remote_sink_fn sink, void *arg,
                     uint64_t *got, remote_info *out);

/* Frees the strings of INFO and zeroes it (NULL is fine). */
void remote_info_clear(remote_info *info);

/* Deletes object NAME. Deleting a missing object succeeds (S3 semantics).
 * Errors: REMOTE_ENOBUCKET, REMOTE_EDENIED, REMOTE_EDOWN, REMOTE_EPROTO. */
int remote_delete(remote_conn *c, const char *name);

/* One listed object: NAME is relative to the prefix; valid during the
 * call only. Return 0 to go on, nonzero to stop (remote_list() returns
 * that value). */
typedef int (*remote_list_fn)(void *arg, const char *name, uint64_t size, int64_t mtime);

/* Lists every object whose name starts with PREFIX (relative to the
 * remote's prefix; "" for all), page by page (1000 a page) so any number
 * of objects is listed in bounded memory. The names come in the order the
 * server sends them: S3 sends byte order, but nothing here relies on it,
 * so a caller that needs an order sorts. Only keys that start with
 * "REMOTE_PREFIX/PREFIX" and are longer are handed on; a server's other
 * keys are skipped. The listing ends with an error rather than run on: a
 * page that repeats a continuation token already used (REMOTE_EPROTO), or
 * more than REMOTE_LIST_PAGES pages (REMOTE_ELIMIT).
 * Errors: REMOTE_ENOBUCKET, REMOTE_EDENIED, REMOTE_EDOWN, REMOTE_EPROTO,
 * REMOTE_ELIMIT, ENOMEM, or FN's nonzero value. */
int remote_list(remote_conn *c, const char *prefix, remote_list_fn fn, void *arg);

/* Bounds of one listing (remote_list_bounded()); zero fields take the
 * defaults. */
typedef struct remote_list_bounds {
    unsigned max_pages;     /* at most this many pages, 0: REMOTE_LIST_PAGES */
    uint64_t max_ms;        /* the whole listing ends within this many ms, 0:
                               only each request's own bound (remote_bound_ms()) */
    int (*stop)(void *arg); /* when not NULL: asked between pages and at least
                               once a second while a page comes; a nonzero
                               value ends the listing with that value */
    void *stop_arg;
} remote_list_bounds;
#define REMOTE_LIST_PAGES 10000u /* 10 million objects */

/* remote_list() within the bounds B (NULL: the defaults): past max_pages
 * or max_ms it ends with REMOTE_ELIMIT (what was handed to FN stays
 * handed); STOP's value ends it at once. Errors: as remote_list(), or
 * STOP's value. */
int remote_list_bounded(remote_conn *c, const char *prefix, const remote_list_bounds *b,
                        remote_list_fn fn, void *arg);

/* Checks that the bucket exists and that the credentials may list the
 * prefix (one small listing): what init and mount time call to give a
 * clear message. Errors: REMOTE_ENOBUCKET, REMOTE_EDENIED, REMOTE_EDOWN,
 * REMOTE_EPROTO. */
int remote_check(remote_conn *c);

#ifdef __cplusplus
}
#endif
#endif
