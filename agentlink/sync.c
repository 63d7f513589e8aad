/* sync.c -- the API of the remote tier on a store handle: recording the
 * remote (checked first: init --remote), sync, gc --remote. Writes and
 * removals reach the remote from handle.c through tier_use.c. */
#include "agentlink/internal.h"
#include "tier/tier.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int al_store_set_remote(al_store *h, const char *url)
{
    store *st;
    al_tier **tp;
    int rc, has;
    if (!h)
        return EINVAL;
    int none = !url || !*url || strcmp(url, "none") == 0;
    if ((rc = al_store_lock(h, 1, &st, &tp)))
        return rc;
    if (!none && strlen(url) > STORE_REMOTE_MAX)
        rc = EINVAL;
    char old[STORE_REMOTE_MAX + 1] = "";
    if (!rc && !none)
        rc = al_err_from_store(store_remote_get(st, old, sizeof old));
    if (!rc)
        rc = al_err_from_store(store_remote_set(st, none ? NULL : url));
    if (!rc && !none) {
        /* check before keeping it: the configuration, then one listing */
        rc = al_tier_use(st, tp, &has);
        if (!rc && (rc = remote_check(al_tier_conn(*tp)))) {
            al_tier_fail(*tp, rc);
            rc = AL_EREMOTE;
        }
        if (rc) /* put the old one back */
            store_remote_set(st, old[0] ? old : NULL);
    }
    al_store_unlock(h);
    return rc;
}

int al_store_remote(al_store *h, char *buf, size_t cap)
{
    store *st;
    al_tier **tp;
    int rc;
    if (!h || !buf)
        return EINVAL;
    if ((rc = al_store_lock(h, 0, &st, &tp)))
        return rc;
    rc = al_err_from_store(store_remote_get(st, buf, cap));
    al_store_unlock(h);
    return rc;
}

int al_store_sync(al_store *h, unsigned *uploaded, unsigned *left)
{
    store *st;
    al_tier **tp;
    unsigned up = 0, bad = 0;
    int rc, has = 0;
    if (!h)
        return EINVAL;
    if ((rc = al_store_lock(h, 0, &st, &tp)))
        return rc;
    rc = al_tier_use(st, tp, &has);
    if (!rc && has) {
        rc = tier_sync(al_tier_tier(*tp), al_tier_conn(*tp), NULL, NULL, &up, &bad);
        if (rc == TIER_EUNSENT) {
            al_tier_fail(*tp, rc);
            rc = AL_EUPLOAD;
        } else {
            rc = al_err_from_store(rc);
        }
    }
    al_store_unlock(h);
    if (uploaded)
        *uploaded = up;
    if (left)
        *left = bad;
    return rc;
}

int al_store_gc_remote(al_store *h, uint64_t max_age_s, uint64_t max_bytes, unsigned *removed,
                       uint64_t *kept_bytes)
{
    store *st;
    al_tier **tp;
    int rc, has = 0;
    if (!h)
        return EINVAL;
    if ((rc = al_store_lock(h, 0, &st, &tp)))
        return rc;
    rc = al_tier_use(st, tp, &has);
    if (!rc && !has)
        rc = AL_EREMOTE;
    else if (!rc && (rc = tier_gc(al_tier_tier(*tp), al_tier_conn(*tp), max_age_s, max_bytes, removed,
                                  kept_bytes))) {
        al_tier_fail(*tp, rc);
        rc = AL_EREMOTE;
    }
    al_store_unlock(h);
    return rc;
}
