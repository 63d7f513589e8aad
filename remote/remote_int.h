/* remote_int.h -- internals of the remote module shared by its files.
 *
 * The files of remote/ form a one-way graph, each layer calling only the
 * layers below it (the table in doc/development.md):
 *
 *   entry       upload.c   remote_put(), remote_put_buf(): chooses put.c
 *                          or multipart.c by size (the only caller of an
 *                          operation)
 *   operations  put.c, multipart.c, get.c, head.c, delete.c, list.c: one
 *               S3 operation each; each uses the core and the leaves,
 *               never another operation
 *   core        request.c  one request: URL, headers, signing, bounds,
 *                          retries, answers to REMOTE_E* codes
 *               config.c   the handle: URL, credentials, endpoint, options,
 *                          remote_strerror()
 *   leaves      answer.c   reading answers (over text.c)
 *               text.c     XML elements, percent coding, escaping
 *               profile.c  the AWS credentials and config files
 *               curl_load.c  libcurl, loaded at run time
 *
 * Below them all, common/ (libcommon.a): the growing buffer (common_buf),
 * the array push, the monotonic clock, common_env().
 *
 * Every global name is remote_* (the internal ones remote_rq_* for the
 * core, remote_<thing>_* for a leaf), so nothing of remote/ can clash in
 * a program that links it. */
#ifndef OFFLOADFS_REMOTE_INT_H
#define OFFLOADFS_REMOTE_INT_H

#include "remote/remote.h"

#include "remote/curl_load.h"
#include "common/buf.h"

struct remote {
    char *bucket;
    char *prefix;   /* "" or "a/b" (no leading or trailing '/') */
    char *endpoint; /* scheme://host[:port], no trailing '/' */
    char *sigv4;    /* "aws:amz:REGION:s3" */
    char *access;   /* secrets: never printed */
    char *secret;
    char *token;    /* NULL without a session token */
    int vhost;      /* virtual-hosted addressing (AWS), else path-style */
    remote_options opt;
    const rcurl_api *cu; /* libcurl's functions (curl_load.h): every call goes through it */
};

#define REMOTE_MSG_MAX 512

struct remote_conn {
    remote *r;
    CURL *h;
    unsigned attempts;
    char msg[REMOTE_MSG_MAX];
    char errbuf[CURL_ERROR_SIZE];
};

/* URLs, queries, headers and answer bodies are built in common_buf
 * (common/buf.h): a failed add turns into ENOMEM where the build ends. An
 * answer body is kept up to REMOTE_RESP_CAP bytes; past it the rest is
 * dropped and rq.resp_over set (a listing page is ~300 KiB; errors are
 * small). */
#define REMOTE_RESP_CAP (16u << 20)

/* libcurl's receive buffer (CURLOPT_BUFFERSIZE; its default is 16 KiB).
 * Each buffer's worth of a body is one recv() and one call of the sink,
 * which for a fill is one pwrite() and one wake of the readers waiting: at
 * 256 KiB a 64 MiB fetch costs the daemon about a sixth less CPU. Each
 * connection keeps its buffer until it is freed: about 2 MiB more RSS over
 * the daemon's threads in the s3fs bench (doc/benchmark.md). */
#define REMOTE_RECV_BUF (256L * 1024)

/* ---- the request and what answer.c reads into it -------------------- */

/* The longest ETag kept (an If-Match header carries it back), and the
 * longest continuation token taken from a listing; S3's are far shorter. */
#define REMOTE_ETAG_MAX 127
#define REMOTE_TOKEN_MAX 1024

/* A Content-Range "bytes FIRST-LAST/TOTAL". */
typedef struct crange {
    uint64_t first, last, total;
    int known; /* TOTAL was a number (not "*") */
} crange;

/* One S3 request, run with retries by remote_rq_run(). Zero-initialise, fill in
 * what applies. */
typedef struct rq {
    const char *label;  /* in messages: "PUT", "GET", "LIST", ... */
    const char *method; /* "GET", "PUT", "HEAD", "DELETE", "POST" */
    const char *name;   /* object name under the prefix, NULL: the bucket */
    const char *query;  /* encoded query without '?' (sorted), or NULL */
    struct curl_slist *headers; /* extra headers (caller frees) */
    /* request body: a source range, or bytes in memory */
    remote_source_fn src;
    void *src_arg;
    uint64_t src_off, src_len;
    const char *body;
    size_t body_len;
    /* ranged GET: bytes [range_off, range_off + range_len) to the sink */
    int ranged;
    uint64_t range_off, range_len;
    remote_sink_fn sink;
    void *sink_arg;
    /* results */
    long status;
    uint64_t delivered; /* bytes handed to the sink, over every attempt */
    common_buf resp;    /* body when no sink takes it (or an error body) */
    int resp_over;      /* bytes of it were dropped at REMOTE_RESP_CAP */
    remote_info *info;  /* headers parsed into it when not NULL */
    uint64_t range_total; /* with info: the object's length in a Content-Range (0: none) */
    /* per attempt */
    uint64_t src_pos;
    int sink_failed, src_failed;
    int stalled;        /* no byte moved for stall_s: aborted */
    double moved_at;    /* monotonic seconds of the last byte moved */
    curl_off_t moved;   /* bytes moved (up + down) at moved_at */
    int range_ignored;  /* a 200 (whole body) answered a range not at 0 */
    char etag[REMOTE_ETAG_MAX + 1]; /* ETag asked for, or of the first answer: a resumed GET must match it */
    int must_match;     /* the caller gave the ETag: If-Match on every attempt */
    /* a 206 answer is checked against the range asked (answer.c) */
    char crange[96];    /* this answer's Content-Range ("" when none) */
    uint64_t att_from;  /* first byte this attempt asked for */
    uint64_t att_delivered; /* q->delivered when this attempt began */
    int range_checked;  /* this answer's Content-Range was checked */
    crange cr;          /* ... and what it said */
    uint64_t total_seen; /* the object length the first 206 gave (0: none yet) */
    char bad[256];      /* why the answer was refused ("" when it was not) */
    /* bounds of the whole operation (a listing): set by the caller */
    uint64_t deadline_ns; /* common_clock_ns() by which it must end, 0: none */
    int (*stop)(void *arg); /* nonzero: abort now with that value */
    void *stop_arg;
    int stopped;        /* the value stop() or the deadline gave */
} rq;

/* ---- text.c: XML elements, percent coding, escaping ------------------ */

/* Appends S percent-encoded (RFC 3986 unreserved kept; '/' kept when
 * KEEP_SLASH) to B. Returns 0, or ENOMEM when B has failed (now or
 * before). */
int remote_enc_add(common_buf *b, const char *s, int keep_slash);

/* Decodes the percent-encoding of S into a new string (malloc), or NULL. */
char *remote_enc_decode(const char *s, size_t n);

/* XML: the text of the first <TAG>...</TAG> in [*P, END), entities
 * decoded, as a new string (malloc); *P moves past it. NULL when absent
 * (or no memory: *OOM set). */
char *remote_xml_take(const char **p, const char *end, const char *tag, int *oom);

/* Bounds of the next <TAG>...</TAG> element's content in [*P, END): 1 and
 * [*S, *E) when found, *P past it; 0 when none. */
int remote_xml_next(const char **p, const char *end, const char *tag, const char **s, const char **e);

/* Writes S into OUT (CAP bytes, always terminated, cut only between
 * characters) with every control character escaped: \n, \r, \t, \\,
 * \xHH for other C0 bytes, DEL and bytes that are not UTF-8, \uHHHH for
 * C1 controls, line separators and bidirectional overrides. Returns the
 * length written. Every text of an answer shown in a message goes
 * through it (remote_rq_fail() does it), so no server writes into a log. */
size_t remote_text_escape(char *out, size_t cap, const char *s);

/* ---- answer.c: reading answers (no libcurl: the fuzz target drives it) */

/* Parses N bytes at S as a decimal number (digits only, no sign, no
 * overflow) into *OUT: 0, or -1 when it is not one. */
int remote_dec_parse(const char *s, size_t n, uint64_t *out);

/* An HTTP date (IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT") as Unix
 * seconds; 0 when malformed. */
int64_t remote_http_date_parse(const char *s);

/* The value of header line LINE (N bytes, with or without CRLF) when it is
 * header NAME (any case), blanks trimmed, as a new string (malloc); NULL
 * when it is another header (or no memory). */
char *remote_hdr_value(const char *line, size_t n, const char *name);

/* 1 when ETAG can pin a version: 1 to REMOTE_ETAG_MAX printable ASCII
 * bytes without blanks; else 0 (then it is treated as absent). */
int remote_etag_ok(const char *etag);

/* Takes header line LINE (N bytes) into IN when it is one remote_info
 * holds (Content-Length, Last-Modified, ETag, x-amz-meta-*); numbers that
 * are not numbers count as absent. Sets *OOM without memory. */
void remote_hdr_info(remote_info *in, const char *line, size_t n, int *oom);

/* Parses Content-Range value V into *OUT: 0; 1 for a "*" total; -1 when
 * malformed. */
int remote_crange_parse(const char *v, crange *out);

/* Checks Content-Range V of a 206 against the range asked, bytes FROM to
 * TO (UINT64_MAX: to the end): it must start at FROM, end at TO or at the
 * object's last byte, whichever comes first, and give the length. 0 and
 * *OUT; or -1 with the reason (quoting V) in WHY. */
int remote_crange_check(const char *v, uint64_t from, uint64_t to, crange *out, char *why, size_t whylen);

/* The <Code> of error body BODY (N bytes) into OUT (CAP bytes), "" when
 * none. Not escaped: remote_rq_fail() does it. */
void remote_s3_error_code(const char *body, size_t n, char *out, size_t cap);

/* Reads one ListObjectsV2 page BODY (N bytes): calls FN(ARG) for each key
 * that starts with WANT and is longer, with the name after its first
 * STRIP bytes (STRIP <= strlen(WANT)); other keys are skipped. *TOKEN
 * gets the next page's continuation token (malloc, yours) or NULL on the
 * last page. Returns 0, ENOMEM, FN's nonzero value, or REMOTE_EPROTO
 * with the reason in WHY (not a listing; truncated without a token, or
 * with one longer than REMOTE_TOKEN_MAX). */
int remote_list_page_parse(const char *body, size_t n, const char *want, size_t strip, remote_list_fn fn,
                           void *arg, char **token, char *why, size_t whylen);

/* Parses an ISO 8601 UTC time "YYYY-MM-DDTHH:MM:SS[.fff]Z": Unix seconds,
 * or 0 when malformed. Shares its calendar arithmetic with
 * remote_http_date_parse(). */
int64_t remote_iso8601_parse(const char *s);

/* The defaults of an answer's info, once its headers are read: an original
 * size is never below the length (a cut only shrinks), so a smaller or
 * missing x-amz-meta-size means the object's own; a missing
 * x-amz-meta-created means its Last-Modified. (remote_info_clear(), the
 * other function of answer.c on a remote_info, is public: remote.h.) */
void remote_info_finish(remote_info *out);

/* ---- request.c: the core ------------------------------------------------ */

/* Runs Q on C: builds the URL, signs (SigV4), retries transient failures
 * with backoff, maps the answer. Sets c->msg on failure (naming Q->label,
 * the bucket and the object) and c->attempts.
 * Returns 0 on a 2xx (and 416 for a ranged GET: nothing there) or a
 * REMOTE_E* code / ENOMEM. Q->resp holds the body of a 2xx without sink
 * (up to REMOTE_RESP_CAP); the caller frees it with common_buf_release(). */
int remote_rq_run(remote_conn *c, rq *q);

/* Q's own bounds: asks Q->stop (when set) and Q->deadline_ns (when set);
 * 0 to go on, else the value to stop with (REMOTE_ELIMIT past the
 * deadline), also kept in Q->stopped. */
int remote_rq_bounds(rq *q);

/* Writes into C's message: "LABEL s3://BUCKET/PREFIX/NAME: " + the text,
 * escaped whole (remote_text_escape()). */
void remote_rq_fail(remote_conn *c, const rq *q, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Appends META's x-amz-meta-* headers (tool and call id percent-encoded)
 * to *H (a list of C's libcurl: C->r->cu->slist_free_all() frees it).
 * META may be NULL (nothing added). Returns 0 or ENOMEM. */
int remote_rq_meta_headers(const remote_conn *c, struct curl_slist **h, const remote_meta *meta);

/* A HEAD of NAME on C, its headers into OUT (zeroed first) and
 * completed by remote_info_finish(); on failure OUT is cleared (nothing
 * to free). What remote_head() answers, and what a GET of no byte or of
 * an empty object falls back to. Returns as remote_head() (remote.h). */
int remote_rq_head(remote_conn *c, const char *name, remote_info *out);

/* ---- operations called by upload.c ------------------------------------ */

/* put.c: remote_put() as one PUT request (SIZE up to multipart_over).
 * Same arguments and errors as remote_put(). */
int remote_put_single(remote_conn *c, const char *name, uint64_t size, remote_source_fn src, void *arg,
                      const remote_meta *meta);

/* multipart.c: remote_put() as a multipart upload: initiate (with META),
 * parts of part_bytes each retried on its own, complete; any failure
 * aborts the upload so no part is left behind. Same arguments and errors
 * as remote_put(). */
int remote_put_multipart(remote_conn *c, const char *name, uint64_t size, remote_source_fn src, void *arg,
                         const remote_meta *meta);

#endif
