/* remote_int.h -- internals of the remote module shared by its files. */
#ifndef OFFLOADFS_REMOTE_INT_H
#define OFFLOADFS_REMOTE_INT_H

#include "remote/remote.h"

#include "remote/curl_load.h"

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

/* A growing byte buffer, capped: bytes past CAP are counted, not kept. */
typedef struct rbuf {
    char *p;
    size_t len, size, cap;
    int over; /* bytes were dropped at the cap */
} rbuf;
int rbuf_add(rbuf *b, const void *data, size_t n);
void rbuf_free(rbuf *b);

/* One S3 request, run with retries by rq_run(). Zero-initialise, fill in
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
    rbuf resp;          /* body when no sink takes it (or an error body) */
    remote_info *info;  /* headers parsed into it when not NULL */
    uint64_t range_total; /* with info: the object's length in a Content-Range (0: none) */
    /* per attempt */
    uint64_t src_pos;
    int sink_failed, src_failed;
    int stalled;        /* no byte moved for stall_s: aborted */
    double moved_at;    /* monotonic seconds of the last byte moved */
    curl_off_t moved;   /* bytes moved (up + down) at moved_at */
    int range_ignored;  /* a 200 (whole body) answered a range not at 0 */
    char etag[128];     /* ETag asked for, or of the first answer: a resumed GET must match it */
    int must_match;     /* the caller gave the ETag: If-Match on every attempt */
} rq;

/* Runs Q on C: builds the URL, signs (SigV4), retries transient failures
 * with backoff, maps the answer. Sets c->msg on failure (naming Q->label,
 * the bucket and the object) and c->attempts.
 * Returns 0 on a 2xx (and 416 for a ranged GET: nothing there) or a
 * REMOTE_E* code / ENOMEM. Q->resp holds the body of a 2xx without sink
 * (up to 16 MiB); the caller frees it with rbuf_free(). */
int rq_run(remote_conn *c, rq *q);

/* Writes into C's message: "LABEL s3://BUCKET/PREFIX/NAME: " + the text. */
void rq_fail(remote_conn *c, const rq *q, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Appends S percent-encoded (RFC 3986 unreserved kept; '/' kept when
 * KEEP_SLASH) to B. Returns 0 or ENOMEM. */
int enc_add(rbuf *b, const char *s, int keep_slash);

/* Decodes the percent-encoding of S into a new string (malloc), or NULL. */
char *enc_decode(const char *s, size_t n);

/* XML: the text of the first <TAG>...</TAG> in [*P, END), entities
 * decoded, as a new string (malloc); *P moves past it. NULL when absent
 * (or no memory: *OOM set). */
char *xml_take(const char **p, const char *end, const char *tag, int *oom);

/* Bounds of the next <TAG>...</TAG> element's content in [*P, END): 1 and
 * [*S, *E) when found, *P past it; 0 when none. */
int xml_next(const char **p, const char *end, const char *tag, const char **s, const char **e);

/* Parses an ISO 8601 UTC time "YYYY-MM-DDTHH:MM:SS[.fff]Z": Unix seconds,
 * or 0 when malformed. */
int64_t iso8601_parse(const char *s);

#endif
