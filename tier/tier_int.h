/* tier_int.h -- what tier.c and upload.c share. */
#ifndef OFFLOADFS_TIER_INT_H
#define OFFLOADFS_TIER_INT_H

#include "tier/tier.h"

struct tier {
    store *st;
    remote *r;
};

/* tier_list()'s callback state: names under "NS/" handed on without it. */
typedef struct list_ctx {
    remote_list_fn fn;
    void *arg;
    const char *ns; /* "NS/" */
    size_t skip;    /* its length */
} list_ctx;
int tier_list_strip(void *arg, const char *name, uint64_t size, int64_t mtime);

/* 1 when VERSION is marked pending in T's store. */
int tier_pending_is(tier *t, uint64_t version);

#endif
