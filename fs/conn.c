/* conn.c -- the mount's way to its remote (conn.h).
 *
 * Why it is shaped so:
 * - Threads: each FUSE worker (and the lister) keeps its own connection,
 *   a thread-specific key of this mount freed as the thread ends, so a
 *   slow remote holds only the requests that need it, and a connection's
 *   kept-alive sockets serve that thread's next request.
 * - The tier is opened once, after the store: a remote that cannot be
 *   opened leaves the mount serving local results (logged).
 * - Nothing here looks at a result: lookups are lookup.c's, bytes
 *   window.c's, names listing.c's. They ask this file for a connection;
 *   it asks none of them anything.
 */
#include "fs/conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

struct ofs_conn {
    pthread_key_t key; /* this thread's tier_conn */
};

static void conn_free(void *c)
{
    tier_conn_free(c);
}

int ofs_conn_probe(const char *files, const char *store_abs)
{
    store *st = NULL;
    tier *t = NULL;
    tier_conn *c = NULL;
    char msg[512];
    int rc = store_open(&st, files, STORE_RDONLY), ret = 0;
    if (!rc)
        rc = tier_open_reader(&t, st, 0, 0, msg, sizeof msg);
    if (rc == TIER_ENONE || (rc && rc != TIER_ECONFIG)) { /* no remote; store errors: reported elsewhere */
        store_close(st);
        return 0;
    }
    if (rc == TIER_ECONFIG) {
        fprintf(stderr, "offloadfs: store '%s': its remote: %s; nothing was mounted\n", store_abs, msg);
        ret = 1;
    } else if (tier_conn_new(&c, t) == 0 && (rc = tier_check(c)) != 0) {
        fprintf(stderr, "offloadfs: warning: remote %s: %s (%s); mounting: local results are "
                "served, remote ones answer EIO until it works\n",
                tier_conn_message(c), tier_strerror(rc),
                rc == TIER_EDENIED ? "check AWS_ACCESS_KEY_ID / AWS_PROFILE" :
                rc == TIER_ENOBUCKET ? "create the bucket or fix the URL (agentlink init --remote)" :
                "is the endpoint up?");
    }
    tier_conn_free(c);
    tier_close(t);
    store_close(st);
    return ret;
}

int ofs_conn_open(struct ofs *fs)
{
    char msg[512], where[1024];
    tier *t = NULL;
    fs->tier = NULL;
    fs->conn = NULL;
    int rc = tier_open_reader(&t, fs->st, fs->remote_stall, fs->remote_retries, msg, sizeof msg);
    if (rc == TIER_ENONE)
        return 0;
    if (rc) {
        fuse_log(FUSE_LOG_ERR, "offloadfs: remote tier off: %s\n", msg[0] ? msg : tier_strerror(rc));
        return rc > 0 ? rc : EINVAL;
    }
    struct ofs_conn *oc = calloc(1, sizeof *oc);
    if (!oc || pthread_key_create(&oc->key, conn_free)) {
        free(oc);
        tier_close(t);
        return ENOMEM;
    }
    fs->tier = t;
    fs->conn = oc;
    tier_describe(t, where, sizeof where);
    fuse_log(FUSE_LOG_INFO, "offloadfs: remote %s, ttl %u s, failures bounded at %llu ms\n", where,
             fs->remote_ttl, (unsigned long long)tier_bound_ms(t));
    return 0;
}

void ofs_conn_close(struct ofs *fs)
{
    struct ofs_conn *oc = fs->conn;
    if (oc) {
        tier_conn_free(pthread_getspecific(oc->key)); /* this thread's */
        pthread_key_delete(oc->key);
        free(oc);
    }
    tier_close(fs->tier);
    fs->conn = NULL;
    fs->tier = NULL;
}

tier_conn *ofs_conn_get(struct ofs *fs)
{
    struct ofs_conn *oc = fs->conn;
    if (!oc)
        return NULL;
    tier_conn *c = pthread_getspecific(oc->key);
    if (!c && tier_conn_new(&c, fs->tier) == 0 && pthread_setspecific(oc->key, c)) {
        tier_conn_free(c);
        c = NULL;
    }
    return c;
}

const char *ofs_conn_why(const tier_conn *c, int rc)
{
    const char *m = tier_conn_message(c);
    return m[0] ? m : tier_strerror(rc);
}
