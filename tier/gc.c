/* gc.c -- tier_gc(): the remote's own bound, for operators to run on a
 * timer. The local store bounds itself; the bucket grows until this runs
 * (or a lifecycle rule of the bucket, which leaves no tombstones). */
#include "tier/tier_int.h"
#include "common/array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct obj {
    char *name; /* "NS/KEY" */
    uint64_t size;
    int64_t mtime;
} obj;

typedef struct objs {
    obj *v;
    size_t n, cap;
} objs;

static int take(void *arg, const char *name, uint64_t size, int64_t mtime)
{
    objs *o = arg;
    const char *slash = strchr(name, '/');
    /* results only: NS/KEY, neither tombstones (.tomb/...) nor deeper objects */
    if (name[0] == '.' || !slash || strchr(slash + 1, '/') || !slash[1])
        return 0;
    obj *v = common_array_grow(o->v, o->n, &o->cap, sizeof *v, 256);
    if (!v)
        return ENOMEM;
    o->v = v;
    if (!(o->v[o->n].name = strdup(name)))
        return ENOMEM;
    o->v[o->n].size = size;
    o->v[o->n++].mtime = mtime;
    return 0;
}

static int oldest_first(const void *a, const void *b)
{
    const obj *x = a, *y = b;
    if (x->mtime != y->mtime)
        return x->mtime < y->mtime ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Removes object O (NS/KEY) with its tombstone. */
static int gc_one(tier *t, remote_conn *c, const obj *o)
{
    char ns[STORE_NAME_MAX + 1];
    const char *slash = strchr(o->name, '/');
    size_t n = (size_t)(slash - o->name);
    if (n > STORE_NAME_MAX)
        return 0; /* not a namespace of ours */
    memcpy(ns, o->name, n);
    ns[n] = '\0';
    return tier_remove(t, c, ns, slash + 1);
}

int tier_gc(tier *t, remote_conn *c, uint64_t max_age_s, uint64_t max_bytes, unsigned *removed,
            uint64_t *kept_bytes)
{
    objs o = {0};
    unsigned gone = 0;
    uint64_t total = 0;
    int64_t cutoff = max_age_s ? (int64_t)time(NULL) - (int64_t)max_age_s : INT64_MIN;
    int rc = remote_list(c, "", take, &o);
    if (!rc)
        qsort(o.v, o.n, sizeof *o.v, oldest_first);
    for (size_t i = 0; !rc && i < o.n; i++)
        total += o.v[i].size;
    for (size_t i = 0; !rc && i < o.n; i++) {
        int old = o.v[i].mtime < cutoff, over = max_bytes && total > max_bytes;
        if (!old && !over)
            break; /* oldest first: nothing later is older, and the bytes fit */
        if (!(rc = gc_one(t, c, &o.v[i]))) {
            gone++;
            total -= o.v[i].size;
        }
    }
    for (size_t i = 0; i < o.n; i++)
        free(o.v[i].name);
    free(o.v);
    if (removed)
        *removed = gone;
    if (kept_bytes)
        *kept_bytes = total;
    return rc;
}
