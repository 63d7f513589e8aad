/* prefetch.c -- pushes results written while the mount is up into the
 * kernel's page cache.
 *
 * Why: an agent writes a result, then reads it. A first read through FUSE
 * costs the reader a page-cache allocation per page plus a round trip per
 * request; measured on a 2-core VM, cat of a fresh 64 MiB result took 75 ms
 * against 14 ms on tmpfs, and cat's own CPU time alone was 32 ms. Pushed
 * ahead of time, the same read is a page-cache hit (18-22 ms).
 *
 * How: the watcher hands over (key, version) of each new version in our
 * namespace. fuse_lowlevel_notify_store() only fills the cache of an inode
 * the kernel knows, and only a lookup makes one, so the name is first
 * stat'ed through the mount (never holding a file descriptor on it, which
 * would keep an unmount busy) and checked to lead to that version. That
 * stat runs in the watcher (ofs_prefetch_add), before it answers the
 * writers waiting on the wake-up socket, so it has ended when their write
 * returns: a write then an unmount no longer races it into EBUSY. This
 * thread then pushes the bytes in pieces read from one version: the inode
 * number is the version, so pushed pages can never mix versions.
 *
 * The pushed pages are dropped like any others: by the watcher when the
 * version is replaced or evicted, or by the kernel under memory pressure.
 */
#include "fs/fs.h"
#include "fs/errmap.h"
#include "fs/prefetch.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PIECE (1u << 20) /* bytes read and pushed at a time */

#define PF_DEBUG(fs, ...) \
    do { if ((fs)->debug) fuse_log(FUSE_LOG_DEBUG, __VA_ARGS__); } while (0)

/* Makes the kernel know KEY's inode; returns 0 when the name leads to
 * VERSION, an errno value otherwise (changed since, evicted, ...). */
static int lookup_through_mount(struct ofs *fs, const char *key, uint64_t version)
{
    char path[PATH_MAX];
    struct stat sb;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", fs->mountpoint, key) >= sizeof path)
        return ENAMETOOLONG;
    if (lstat(path, &sb))
        return errno;
    return S_ISREG(sb.st_mode) && (uint64_t)sb.st_ino == version ? 0 : ESTALE;
}

/* Pushes the bytes of VERSION (SIZE of them) into its inode's cache. */
static int push(struct ofs *fs, uint64_t version, uint64_t size)
{
    struct ofs_prefetch *p = &fs->prefetch;
    size_t n;
    int rc;
    for (uint64_t off = 0; off < size; off += n) {
        struct fuse_bufvec bv = FUSE_BUFVEC_INIT(0);
        if (atomic_load(&p->stop))
            return ECANCELED;
        if ((rc = store_read(fs->st, version, off, p->buf, PIECE, &n)))
            return ofs_errno(rc);
        if (n == 0)
            break;
        bv.buf[0].mem = p->buf;
        bv.buf[0].size = n;
        /* -ENOENT: the kernel has already forgotten the inode. */
        if ((rc = fuse_lowlevel_notify_store(fs->se, version, (off_t)off, &bv, 0)))
            return -rc;
    }
    return 0;
}

static void prefetch_one(struct ofs *fs, const struct ofs_prefetch_item *it)
{
    store_entry e;
    int rc = ofs_errno(store_version_stat(fs->st, fs->ns, it->version, &e, NULL));
    if (rc == 0)
        rc = push(fs, it->version, e.size);
    if (rc)
        PF_DEBUG(fs, "offloadfs: prefetch '%s' (version %" PRIu64 "): %s\n", it->key,
                 it->version, strerror(rc));
    else
        PF_DEBUG(fs, "offloadfs: prefetched '%s' (version %" PRIu64 ", %" PRIu64 " bytes)\n",
                 it->key, it->version, e.size);
}

static void *prefetch_main(void *arg)
{
    struct ofs *fs = arg;
    struct ofs_prefetch *p = &fs->prefetch;
    struct ofs_prefetch_item it;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!atomic_load(&p->stop) && p->count == 0)
            pthread_cond_wait(&p->wake, &p->lock);
        if (atomic_load(&p->stop))
            break;
        it = p->queue[p->head];
        p->head = (p->head + 1) % OFS_PREFETCH_QUEUE;
        p->count--;
        pthread_mutex_unlock(&p->lock);
        prefetch_one(fs, &it);
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    atomic_store(&p->done, 1);
    return NULL;
}

int ofs_prefetch_start(struct ofs *fs)
{
    struct ofs_prefetch *p = &fs->prefetch;
    int rc;
    atomic_store(&p->stop, 0);
    atomic_store(&p->done, 1);
    if (fs->prefetch_max == 0)
        return 0;
    if (!(p->buf = malloc(PIECE)))
        return ENOMEM;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    atomic_store(&p->done, 0);
    if ((rc = pthread_create(&p->thread, NULL, prefetch_main, fs))) {
        pthread_cond_destroy(&p->wake);
        pthread_mutex_destroy(&p->lock);
        free(p->buf);
        p->buf = NULL;
        atomic_store(&p->done, 1);
        return rc;
    }
    p->running = 1;
    return 0;
}

void ofs_prefetch_add(struct ofs *fs, const char *key, uint64_t version)
{
    struct ofs_prefetch *p = &fs->prefetch;
    struct ofs_prefetch_item *it;
    size_t len = strlen(key);
    store_entry e;
    int rc;
    if (!p->running || len > STORE_NAME_MAX)
        return;
    /* The stat through the mount happens here, in the watcher, before it
     * answers the writers: so it is over when their write returns, and an
     * unmount right after a write does not meet it (EBUSY). */
    rc = ofs_errno(store_version_stat(fs->st, fs->ns, version, &e, NULL));
    if (rc == 0 && (e.size == 0 || e.size > fs->prefetch_max))
        return;
    if (rc == 0)
        rc = lookup_through_mount(fs, key, version);
    if (rc) {
        PF_DEBUG(fs, "offloadfs: prefetch '%s' (version %" PRIu64 "): %s\n", key, version,
                 strerror(rc));
        return;
    }
    pthread_mutex_lock(&p->lock);
    if (p->count < OFS_PREFETCH_QUEUE && !atomic_load(&p->stop)) {
        it = &p->queue[(p->head + p->count) % OFS_PREFETCH_QUEUE];
        it->version = version;
        memcpy(it->key, key, len + 1);
        p->count++;
        pthread_cond_signal(&p->wake);
    }
    pthread_mutex_unlock(&p->lock);
}

void ofs_prefetch_stop_begin(struct ofs *fs)
{
    struct ofs_prefetch *p = &fs->prefetch;
    if (!p->running)
        return;
    pthread_mutex_lock(&p->lock);
    atomic_store(&p->stop, 1);
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->lock);
}

int ofs_prefetch_done(struct ofs *fs)
{
    return atomic_load(&fs->prefetch.done);
}

void ofs_prefetch_stop(struct ofs *fs)
{
    struct ofs_prefetch *p = &fs->prefetch;
    if (!p->running)
        return;
    ofs_prefetch_stop_begin(fs);
    pthread_join(p->thread, NULL);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    free(p->buf);
    p->buf = NULL;
    p->running = 0;
}
