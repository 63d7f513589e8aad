/* mem_int.h -- what the in-memory remote's two files share: the buckets
 * and their objects (bucket.c) under one process-wide lock, read by the
 * requests (request.c). */
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
 * with remote/object.c's defaults. 0 or ENOMEM. */
int remote_mem_obj_info(const mem_obj *o, remote_info *info);

#endif
