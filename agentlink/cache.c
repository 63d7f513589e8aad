/* cache.c -- the local store as a cache of the remote, for the library's
 * readers: a result fetched from the remote is kept as a cached copy of
 * that version (store_put_cached()), and a cached copy is checked against
 * the remote before it is served.
 *
 * Why it is shaped so:
 * - A cached copy answers a read only while the remote still holds that
 *   version: one HEAD (no body) per read, so a result replaced or removed
 *   on another host is never served stale by get, stat or a binding. The
 *   copy whose version the remote no longer holds is dropped, and the
 *   caller asks the remote as for a key not here (the new version is
 *   fetched and kept; a tombstone is "removed"; nothing is "never
 *   written").
 * - A remote that cannot answer leaves the copy as it is and serves it:
 *   what this host has read stays readable while the remote is down.
 * - Keeping is best effort: a copy the store refuses (too big for the
 *   bound, a result written here meanwhile, the store full) is not kept,
 *   and the read still succeeds. Counters (hits, misses) likewise. */
#include "agentlink/internal.h"
#include "tier/tier.h"

#include <stdint.h>
#include <string.h>

void al_cache_keep(store *st, const char *ns, const char *key, const void *data, size_t len,
                   const remote_info *in)
{
    store_meta m = {0};
    if (in->etag && in->etag[0] && strlen(in->etag) <= STORE_ETAG_MAX) {
        m.tool = in->tool;
        m.created_ns = (uint64_t)(in->created > 0 ? in->created : 0) * 1000000000u;
        m.original_size = in->size > len ? in->size : 0;
        m.truncated = in->size > len;
        /* refused (too big, written here meanwhile, full): simply not kept */
        (void)store_put_cached(st, ns, key, data, len, &m, in->etag, NULL);
    }
    (void)store_cache_count(st, 0, 1);
}

int al_cache_check(store *st, al_tier **tp, const char *ns, const char *key, uint64_t version,
                   int hit, al_entry *e)
{
    char etag[STORE_ETAG_MAX + 1];
    remote_info in;
    int has = 0;
    int rc = store_cached(st, version, etag, sizeof etag);
    if (rc <= 0)
        return 0; /* written here (or the mark unreadable): the local answer */
    if (e)
        e->where = AL_WHERE_CACHED;
    if (al_tier_use(st, tp, &has) || !has)
        rc = REMOTE_EDOWN; /* no usable remote to ask: the copy is the answer */
    else
        rc = tier_lookup(al_tier_tier(*tp), al_tier_conn(*tp), ns, key, &in);
    int same = rc == 0 && in.etag && strcmp(in.etag, etag) == 0;
    if (rc == 0)
        remote_info_clear(&in);
    if (same || (rc != 0 && rc != REMOTE_ENOTFOUND && rc != TIER_ETOMB)) {
        if (hit)
            (void)store_cache_count(st, 1, 0);
        return 0; /* that version, or no answer: served from here */
    }
    (void)store_cache_drop(st, ns, key, version);
    if (e)
        e->where = AL_WHERE_HERE;
    return AL_ENOTFOUND;
}
