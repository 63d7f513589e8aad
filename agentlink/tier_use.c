/* tier_use.c -- the library's use of the remote tier (tier/): after a write
 * commits, the result goes to the store's remote; after a removal, a
 * tombstone. A handle keeps one al_tier: the tier of the URL the store
 * named when last asked, one connection, and the last failure's message.
 * The store's URL is read at every write (one short read transaction), so
 * a handle follows init --remote made by another process. */
#include "agentlink/internal.h"
#include "tier/tier.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct al_tier {
    char url[STORE_REMOTE_MAX + 1]; /* "" when the store names no remote */
    tier *t;                        /* NULL: none, or it could not be opened */
    remote_conn *c;
    char msg[STORE_REMOTE_MAX + 600]; /* why the last remote step failed, "" after a success */
};

void al_tier_free(al_tier *at)
{
    if (!at)
        return;
    remote_conn_free(at->c);
    tier_close(at->t);
    free(at);
}

void al_tier_forget(al_tier *at)
{
    free(at);
}

const char *al_tier_message(const al_tier *at)
{
    return at ? at->msg : "";
}

int al_tier_use(store *st, al_tier **tp, int *has)
{
    char url[STORE_REMOTE_MAX + 1];
    int rc = store_remote_get(st, url, sizeof url);
    *has = 0;
    if (rc)
        return al_err_from_store(rc);
    if (!*tp && !(*tp = calloc(1, sizeof **tp)))
        return ENOMEM;
    al_tier *at = *tp;
    if (strcmp(url, at->url) != 0 || (url[0] && !at->t)) {
        remote_conn_free(at->c);
        tier_close(at->t);
        at->c = NULL;
        at->t = NULL;
        snprintf(at->url, sizeof at->url, "%s", url);
        if (url[0]) {
            char m[512];
            rc = tier_open(&at->t, st, NULL, m, sizeof m);
            if (!rc && (rc = remote_conn_new(&at->c, tier_remote(at->t))) != 0) {
                tier_close(at->t);
                at->t = NULL;
            }
            if (rc) {
                snprintf(at->msg, sizeof at->msg, "remote %s: %s", url, m[0] ? m : tier_strerror(rc));
                return AL_EREMOTE;
            }
        }
    }
    *has = url[0] != '\0';
    return 0;
}

remote_conn *al_tier_conn(al_tier *at)
{
    return at->c;
}

tier *al_tier_tier(al_tier *at)
{
    return at->t;
}

void al_tier_fail(al_tier *at, int rc)
{
    const char *m = at->c ? remote_conn_message(at->c) : "";
    snprintf(at->msg, sizeof at->msg, "%s", m[0] ? m : tier_strerror(rc));
}

int al_tier_after_put(store *st, al_tier **tp, const char *ns, const char *key, uint64_t version)
{
    int has, rc = al_tier_use(st, tp, &has);
    if (rc == AL_EREMOTE)
        return AL_EUPLOAD; /* stored here, marked pending; the remote unusable */
    if (rc || !has)
        return rc;
    rc = tier_upload((*tp)->t, (*tp)->c, ns, key, version, NULL);
    if (rc == STORE_EGONE)
        return 0; /* replaced or removed meanwhile: its own writer's to send */
    if (rc) {
        al_tier_fail(*tp, rc);
        return AL_EUPLOAD;
    }
    (*tp)->msg[0] = '\0';
    /* The remote works: send what earlier writes left pending (those that
     * fail stay pending; not this write's error). */
    if (tier_has_pending((*tp)->t))
        tier_sync((*tp)->t, (*tp)->c, NULL, NULL, NULL, NULL);
    return 0;
}

int al_tier_after_remove(store *st, al_tier **tp, const char *ns, const char *key)
{
    int has, rc = al_tier_use(st, tp, &has);
    if (rc || !has)
        return rc;
    if ((rc = tier_remove((*tp)->t, (*tp)->c, ns, key))) {
        al_tier_fail(*tp, rc);
        return AL_EREMOTE;
    }
    (*tp)->msg[0] = '\0';
    return 0;
}
