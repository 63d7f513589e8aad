/* inflight.c -- the keys whose upload is under way in this process, per
 * store (the data file's device and inode: every handle on one store, in
 * any thread, sees the same set).
 *
 * Why: uploads run without the handle's lock (tier_use.c), so a write's
 * catch-up of pending results (the results marked pending that it finds
 * after its own upload) would otherwise send again what another writer is
 * sending at that moment: every pending mark of a result being uploaded
 * is, by construction, visible to the catch-up. A writer holds its key
 * from before its commit to after its upload; a catch-up takes a key only
 * when nobody holds it, and skips it otherwise. Across processes nothing
 * is shared: two processes may both send one version (a duplicate PUT of
 * the same bytes; doc/remote.md).
 *
 * fork(): the lock is taken around fork() (pthread_atfork), and the child
 * starts with an empty set: the parent's uploads are not the child's. */
#include "agentlink/internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct flight {
    struct flight *next;
    dev_t dev;
    ino_t ino;
    unsigned holds; /* writers and catch-ups sending it now */
    char *ns, *key;
} flight;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static flight *flights;

static void prefork(void) { pthread_mutex_lock(&lock); }
static void parent(void) { pthread_mutex_unlock(&lock); }

static void child(void)
{
    /* Only this thread exists: nothing of the parent's is in flight here. */
    while (flights) {
        flight *f = flights;
        flights = f->next;
        free(f->ns);
        free(f->key);
        free(f);
    }
    pthread_mutex_unlock(&lock);
}

static void init(void) { (void)pthread_atfork(prefork, parent, child); }

/* The entry of (DEV, INO, NS, KEY), or NULL. LOCK held. */
static flight **find(dev_t dev, ino_t ino, const char *ns, const char *key)
{
    for (flight **pp = &flights; *pp; pp = &(*pp)->next) {
        flight *f = *pp;
        if (f->dev == dev && f->ino == ino && strcmp(f->key, key) == 0 && strcmp(f->ns, ns) == 0)
            return pp;
    }
    return NULL;
}

/* Adds one hold on the key; ONLY_FREE: only when none is held (then
 * returns 1 when taken, 0 when in flight). */
static int add(dev_t dev, ino_t ino, const char *ns, const char *key, int only_free)
{
    int rc = 1;
    pthread_once(&once, init);
    pthread_mutex_lock(&lock);
    flight **pp = find(dev, ino, ns, key);
    if (pp && only_free) {
        rc = 0;
    } else if (pp) {
        (*pp)->holds++;
    } else {
        flight *f = calloc(1, sizeof *f);
        if (f && (f->ns = strdup(ns)) && (f->key = strdup(key))) {
            f->dev = dev;
            f->ino = ino;
            f->holds = 1;
            f->next = flights;
            flights = f;
        } else {
            if (f)
                free(f->ns);
            free(f);
            rc = -ENOMEM;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

int al_inflight_hold(dev_t dev, ino_t ino, const char *ns, const char *key)
{
    return add(dev, ino, ns, key, 0) < 0 ? ENOMEM : 0;
}

int al_inflight_take(dev_t dev, ino_t ino, const char *ns, const char *key)
{
    return add(dev, ino, ns, key, 1) == 1;
}

void al_inflight_drop(dev_t dev, ino_t ino, const char *ns, const char *key)
{
    pthread_once(&once, init);
    pthread_mutex_lock(&lock);
    flight **pp = find(dev, ino, ns, key);
    if (pp && --(*pp)->holds == 0) {
        flight *f = *pp;
        *pp = f->next;
        free(f->ns);
        free(f->key);
        free(f);
    }
    pthread_mutex_unlock(&lock);
}
