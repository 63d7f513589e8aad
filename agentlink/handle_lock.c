/* handle_lock.c -- the al_store handle's lock and its store, below every
 * file that locks a handle: handle.c (the API), lookup.c and sync.c call
 * down to here, and nothing here calls them back.
 *
 * The handle opens LMDB lazily and checks, before each call, that the
 * data file it opened is still the one in the directory (device and inode):
 * a store removed or replaced under a long-lived handle (a Python process,
 * an agent runtime) is then re-opened instead of being written into an
 * unlinked file nobody will ever read. It checks the process too: in a
 * child of fork() the parent's store is let go (store_close() leaves the
 * parent's environment alone there) and the store opened again, so a handle
 * made before a fork (a Python module-level store, a worker pool) works in
 * the child.
 *
 * Uploads run without the handle's lock (tier_use.c); BUSY counts them
 * (handle.c). The store (which the tier reads the bytes from) is closed
 * only when none runs: a replaced data file waits for them (IDLE). */
#include "agentlink/handle_lock.h"

#include <errno.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

int al_store_attach(al_store *h, int create)
{
    struct stat sb;
    int have = stat(h->datafile, &sb) == 0;
    int why = have ? 0 : errno;
    int rc;

again:
    if (h->st && h->pid != getpid()) {
        /* A fork: the tier's connections are the parent's too (a TLS
         * session it may be using); the child leaves them, and makes its
         * own when it next needs one. */
        store_close(h->st);
        h->st = NULL;
        al_tier_forget(h->tier);
        h->tier = NULL;
        h->busy = 0; /* the threads uploading were the parent's */
    }
    if (h->st && (!have || sb.st_dev != h->dev || sb.st_ino != h->ino)) {
        if (h->busy) { /* uploads read from it: close it after them */
            pthread_cond_wait(&h->idle, &h->mu);
            have = stat(h->datafile, &sb) == 0;
            why = have ? 0 : errno;
            goto again;
        }
        /* The tier reads through this store: it goes with it. */
        al_tier_free(h->tier);
        h->tier = NULL;
        store_close(h->st);
        h->st = NULL;
    }
    if (h->st)
        return 0;
    if (!have && !create && (why == ENOENT || why == ENOTDIR)) {
        /* A file where the directory should be is still worth naming. */
        struct stat db;
        if (stat(h->path, &db) == 0 && !S_ISDIR(db.st_mode))
            return ENOTDIR;
        return AL_ENOSTORE;
    }
    rc = store_open(&h->st, h->path, (create ? STORE_CREATE : 0) | h->verify);
    if (rc) {
        h->st = NULL;
        /* The store reads a data file it may not see as no data file; stat()
         * said why (EACCES): an unreadable store is not an empty one. */
        if (rc == STORE_ENOSTORE && !have && why != ENOENT && why != ENOTDIR)
            return why;
        return rc == ENOENT || rc == STORE_ENOSTORE ? AL_ENOSTORE : al_err_from_store(rc);
    }
    h->pid = getpid();
    if (stat(h->datafile, &sb) == 0) {
        h->dev = sb.st_dev;
        h->ino = sb.st_ino;
    }
    return 0;
}

int al_store_lock(al_store *h, int create, store **st, al_tier ***tp)
{
    pthread_mutex_lock(&h->mu);
    int rc = al_store_attach(h, create);
    if (rc) {
        pthread_mutex_unlock(&h->mu);
        return rc;
    }
    *st = h->st;
    *tp = &h->tier;
    return 0;
}

void al_store_unlock(al_store *h)
{
    pthread_mutex_unlock(&h->mu);
}

const char *al_store_dir(const al_store *h)
{
    return h->dir;
}

const char *al_store_namespace(const al_store *h)
{
    return h->ns;
}

const char *al_store_mount(const al_store *h)
{
    return h->mount;
}
