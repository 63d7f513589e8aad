/* zpool.c -- what reads of compressed values reuse: a zstd decoder context
 * and buffers for each reader running at once, kept by the shared
 * environment (no global, no thread-local). A FUSE read of 128 KiB then
 * allocates nothing: the daemon's threads take a set, decode, give it back. */
#include "store/store_int.h"
#include "store/frame.h"

#include <errno.h>
#include <stdlib.h>

#define ZPOOL_OUT_KEEP (1u << 20) /* larger output buffers are not kept */

struct zscratch *store_zpool_get(struct shared_env *se)
{
    struct zscratch *z;
    pthread_mutex_lock(&se->zlock);
    if ((z = se->zfree))
        se->zfree = z->next;
    pthread_mutex_unlock(&se->zlock);
    if (!z && (z = calloc(1, sizeof *z)) && !(z->dctx = store_frame_dctx_new())) {
        free(z);
        z = NULL;
    }
    return z;
}

void store_zpool_put(struct shared_env *se, struct zscratch *z)
{
    if (!z)
        return;
    if (z->out_cap > ZPOOL_OUT_KEEP) {
        free(z->out);
        z->out = NULL;
        z->out_cap = 0;
    }
    pthread_mutex_lock(&se->zlock);
    z->next = se->zfree;
    se->zfree = z;
    pthread_mutex_unlock(&se->zlock);
}

void store_zpool_free(struct shared_env *se)
{
    while (se->zfree) {
        struct zscratch *z = se->zfree;
        se->zfree = z->next;
        store_frame_dctx_free(z->dctx);
        free(z->frame);
        free(z->out);
        free(z);
    }
}

/* Grows *BUF (of *CAP bytes) to at least NEED; 0 or ENOMEM. */
static int grow(unsigned char **buf, size_t *cap, size_t need)
{
    unsigned char *p;
    if (*cap >= need)
        return 0;
    if (!(p = malloc(need)))
        return ENOMEM;
    free(*buf);
    *buf = p;
    *cap = need;
    return 0;
}

int store_zscratch_frame(struct zscratch *z, size_t need)
{
    return grow(&z->frame, &z->frame_cap, need);
}

int store_zscratch_out(struct zscratch *z, size_t need)
{
    return grow(&z->out, &z->out_cap, need);
}
