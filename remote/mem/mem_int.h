/* mem_int.h -- what the in-memory remote's files share: the buckets and
 * their objects (bucket.c) under one process-wide lock; the request core
 * (request.c: handles, messages, the attempt loop with faults, retries and
 * bounds); the operations on it (object.c, list.c), which use only the
 * core and the buckets. */
#ifndef OFFLOADFS_REMOTE_MEM_INT_H
#define OFFLOADFS_REMOTE_MEM_INT_H

#include "remote/mem/mem.h"

/* One version of an object: immutable once made, shared by reference, so a
 * GET streams it without the lock while a PUT replaces it. */
typedef struct mem_obj {
    unsigned refs;             /* changed under the lock only */
    unsigned char *data;
    size_t len;
    char etag[64];             /* with its quotes */
    int64_t mtime;
    char *tool, *call_id;      /* NULL when absent */
    uint64_t size;             /* x-amz-meta-size, 0 when absent */
    int64_t created;           /* x-amz-meta-created, 0 when absent */
} mem_obj;

/* One listed object, copied out of the bucket. */
typedef struct mem_entry {
    char *key; /* full key */
    uint64_t size;
    int64_t mtime;
} mem_entry;

/* What the faults say about one attempt (remote_mem_attempt()). */
typedef struct mem_act {
    int err;
    unsigned delay_ms;
    uint64_t cut;
    void *replace; /* malloc'd copy, or NULL; the caller frees it */
    size_t replace_len;
    int repeat_token;
    remote_mem_hook_fn hook;
    void *hook_arg;
} mem_act;

/* The one lock of the in-memory server's state ("Locked" below: call
 * with it held). */
void remote_mem_lock(void);
void remote_mem_unlock(void);

/* Locked: the live bucket NAME, or NULL when it does not exist. */
remote_mem *remote_mem_find(const char *name);

/* Locked: counts one attempt of OP on NAME in bucket BUCKET and fills *A
 * from the first fault whose turn it is (zeroed when none, or when the
 * bucket is missing). ENOMEM when REPLACE could not be copied. */
int remote_mem_attempt(const char *bucket, remote_mem_op op, const char *name, mem_act *a);

/* A new version of LEN bytes (copied from DATA, or taken from OWNED when
 * not NULL), META may be NULL, MTIME 0: now, PARTS the parts of a
 * multipart upload (its ETag then ends in "-PARTS"), 0 for one PUT. One
 * reference, yours; NULL without memory. */
mem_obj *remote_mem_obj_new(const void *data, unsigned char *owned, size_t len, const remote_meta *meta,
                            int64_t mtime, unsigned parts);

/* Locked: a new reference to object KEY of M, or NULL when absent. */
mem_obj *remote_mem_obj_ref(remote_mem *m, const char *key);

/* Drops a reference (NULL is fine); takes the lock itself. */
void remote_mem_obj_unref(mem_obj *o);

/* Locked: KEY of M becomes O (its reference passes to M). 0 or ENOMEM
 * (then O is still the caller's). */
int remote_mem_obj_set(remote_mem *m, const char *key, mem_obj *o);

/* Locked: removes KEY of M (a missing one is fine). */
void remote_mem_obj_del(remote_mem *m, const char *key);

/* Locked: up to MAX objects of M whose key starts with PREFIX and is
 * longer, after key AFTER (NULL: from the first) in the bucket's order
 * (byte order, or its reverse), copied into *OUT (malloc'd, *N of them:
 * remote_mem_entries_free()); *MORE is 1 when more follow. 0 or ENOMEM. */
int remote_mem_obj_list(remote_mem *m, const char *prefix, const char *after, unsigned max,
                        mem_entry **out, size_t *n, int *more);
void remote_mem_entries_free(mem_entry *v, size_t n);

/* Locked (remote_mem_set_mtime() writes mtime): fills *INFO (zeroed
 * first) from O as a HEAD answers: ETag, length, Last-Modified, metadata,
 * as remote_info_finish() (remote/answer.c) completes it. 0 or ENOMEM. */
int remote_mem_obj_info(const mem_obj *o, remote_info *info);

/* ---- the request core (request.c), used by object.c and list.c ------- */
#define REMOTE_MEM_MSG_MAX 512

struct remote {
    char *bucket, *prefix; /* prefix "" or "a/b" */
    remote_options opt;
};

struct remote_conn {
    remote *r;
    unsigned attempts;
    char msg[REMOTE_MEM_MSG_MAX];
};

/* One operation: what remote_mem_run() needs to retry and bound it. */
typedef struct remote_mem_rq {
    const char *label;    /* in messages: "PUT", "GET", "LIST", ... */
    remote_mem_op op;
    const char *name;     /* relative name, NULL for a listing */
    const char *match;    /* what faults match: the name, or the listing's prefix */
    int retry;            /* the last attempt failed transiently */
    /* a ranged GET */
    char etag[128];       /* pinned version ("" none yet) */
    int must_match;       /* the caller gave the ETag */
    uint64_t delivered;   /* bytes handed to the sink over every attempt */
    /* a listing's bounds */
    uint64_t deadline_ns;
    int (*stop)(void *arg);
    void *stop_arg;
    int stopped;
} remote_mem_rq;

/* One attempt of an operation, after the faults let it through. */
typedef int (*remote_mem_attempt_fn)(remote_conn *c, remote_mem_rq *q, const mem_act *a, void *ctx);

/* Writes C's message: "LABEL s3://BUCKET/PREFIX/NAME: " + the text. */
void remote_mem_fail(remote_conn *c, const remote_mem_rq *q, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The full key of NAME in R's bucket: "PREFIX/NAME" or NAME (malloc'd,
 * yours); NULL without memory. */
char *remote_mem_full_key(const remote *r, const char *name);

/* Runs Q's attempts (FN(C, Q, the faults' verdict, CTX) answers one):
 * retries a transient failure up to the options' retries with the growing
 * backoff unless Q's bounds end it; sets C's attempts and message as
 * remote/request.c's rq_run() does. 0 or the last attempt's code. */
int remote_mem_run(remote_conn *c, remote_mem_rq *q, remote_mem_attempt_fn fn, void *ctx);

/* Q's own bounds (the caller's stop, the deadline): 0 to go on, or the
 * value to end with, kept in Q->stopped. */
int remote_mem_bounds(remote_mem_rq *q);

/* C's live bucket with the lock held, or NULL (not held) with the 404 of
 * a missing bucket written into C's message. */
remote_mem *remote_mem_bucket_locked(remote_conn *c, remote_mem_rq *q);

#endif
