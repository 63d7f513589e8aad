/* watch.c -- tells the kernel what to forget when the store changes.
 *
 * Writers are other processes. Each wakes the watcher through the wake-up
 * socket (wake.c) after its commit and waits for the answer; without one,
 * the watcher polls every OFS_WATCH_INTERVAL_MS. Either way
 * store_changes() reports each (key, old version, new version) since the
 * last generation seen, and for each change in our namespace the watcher
 * drops the key's dentry (positive or negative) and then the old version's
 * cached attributes and pages, then the root's cached listing; only then
 * are the woken writers answered. The name goes first: once its dentry is
 * gone no open can reach the old inode by name, so a replace never shows
 * ENODATA to an open made after the writer was answered. A poll that finds
 * nothing new is one short read transaction (under 1 us measured), so 50
 * polls a second cost nothing measurable.
 *
 * Why not poll store_commit_token() and skip the transaction while it stands
 * still: the token is LMDB's newest meta page, which a committing writer
 * writes (with a device flush when durable) before new read transactions can
 * see the commit. A token read in that window runs ahead of the snapshot
 * store_changes() then takes; the poll finds nothing, remembers the token,
 * and the change stays invisible until some later commit moves the token
 * again (one write in 20 in tests/fs/test_visibility.sh).
 *
 * Notifications are sent from this thread only, never from a request
 * handler: the kernel takes the directory lock to invalidate an entry, and a
 * handler answering a lookup runs while the kernel holds that lock.
 *
 * Every poll first compares lock.mdb with the mark main.c took at start
 * (store_lock_check(): two stats and an 8-byte read, no LMDB call), because
 * the poll's own read transaction is the first thing a damaged lock file
 * breaks: SIGBUS after a truncation, a wait for ever on a garbage mutex. On
 * a change the watcher stops the daemon instead of polling.
 *
 * Every poll also sweeps the remote read windows (window.c) that reads
 * left idle: a lock and four comparisons when there is nothing to free.
 * The watcher already wakes every interval for the whole life of the
 * mount, so the windows need no timer or thread of their own.
 */
#include "common/clock.h"
#include "fs/fs.h"
#include "fs/errmap.h"
#include "fs/fill.h"
#include "fs/prefetch.h"
#include "fs/wake.h"
#include "fs/watch.h"
#include "fs/window.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

struct batch {
    struct ofs *fs;
    unsigned changes;   /* changes seen in our namespace */
    unsigned fresh;     /* new versions among them */
    struct ofs_prefetch_item prefetch[OFS_PREFETCH_BURST]; /* the first ones */
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Drops the dentry of KEY under the root (a missing one is not an error). */
static void inval_name(struct ofs *fs, const char *key)
{
    int rc = fuse_lowlevel_notify_inval_entry(fs->se, FUSE_ROOT_ID, key, strlen(key));
    if (rc && rc != -ENOENT && fs->debug)
        fuse_log(FUSE_LOG_DEBUG, "offloadfs: inval entry '%s': %s\n", key, strerror(-rc));
}

/* Drops cached attributes and pages of INO (whole range). */
static void inval_inode(struct ofs *fs, fuse_ino_t ino)
{
    int rc = fuse_lowlevel_notify_inval_inode(fs->se, ino, 0, 0);
    if (rc && rc != -ENOENT && fs->debug)
        fuse_log(FUSE_LOG_DEBUG, "offloadfs: inval inode %lu: %s\n",
                 (unsigned long)ino, strerror(-rc));
}

static void on_change(const char *ns, const char *key, uint64_t old_version,
                      uint64_t new_version, void *ctx)
{
    struct batch *b = ctx;
    (void)new_version;
    if (strcmp(ns, b->fs->ns) != 0)
        return;
    b->changes++;
    inval_name(b->fs, key);
    /* Open handles on the old version then read through the daemon, which
     * answers ENODATA; its pages are freed at once. */
    if (old_version)
        inval_inode(b->fs, old_version);
    if (new_version && b->fresh++ < OFS_PREFETCH_BURST) {
        b->prefetch[b->fresh - 1].version = new_version;
        snprintf(b->prefetch[b->fresh - 1].key, sizeof b->prefetch[0].key, "%s", key);
    }
}

static int inval_live(const char *key, size_t keylen, const store_entry *e, void *ctx)
{
    struct ofs *fs = ctx;
    (void)keylen;
    (void)e;
    inval_name(fs, key);
    return atomic_load(&fs->watch.stop) ? ECANCELED : 0; /* shutting down */
}

/* The change log no longer reaches our generation: more than the log holds
 * happened in one interval. Drop the listing, every live name (which covers
 * negative dentries of names written since) and every name with a
 * tombstone: a name removed or evicted in that window would otherwise keep
 * its cached dentry and attributes (stat succeeding) for the whole cache
 * timeout. Only a name whose tombstone has expired too (more than
 * max_tombstones removals in the window) is missed; opening it answers
 * ENODATA from the store. */
static void inval_everything(struct ofs *fs)
{
    int rc;
    inval_inode(fs, FUSE_ROOT_ID); /* the listing first: it is one call */
    rc = store_list(fs->st, fs->ns, NULL, inval_live, fs);
    if (!rc)
        rc = store_list_tombs(fs->st, fs->ns, inval_live, fs);
    if (rc && rc != ECANCELED)
        fuse_log(FUSE_LOG_ERR, "offloadfs: listing store after a log gap: %s\n",
                 store_strerror(rc));
}

/* Ends the session loop from this thread. fuse_session_exit() only sets a
 * flag, which libfuse 3.14's loop reads when something wakes it: it sleeps
 * in sem_wait() (or in read() with -s) until a worker ends or a signal
 * comes. So the loop's thread gets the signal libfuse's own handler takes
 * to stop, SIGTERM; that handler is installed for the whole life of this
 * thread (run_mounted() joins it before removing the handlers). */
static void session_stop(struct ofs *fs)
{
    fuse_session_exit(fs->se);
    pthread_kill(fs->loop_thread, SIGTERM);
}

/* Compares lock.mdb with the mark taken at start. Returns 0 while it is as
 * it was; otherwise logs what happened, stops the session and returns -1:
 * no LMDB call may follow. */
static int lock_check(struct ofs *fs)
{
    const char *why;
    int rc = store_lock_check(&fs->lock, &why);
    if (!rc)
        return 0;
    if (rc == STORE_ECORRUPT)
        fuse_log(FUSE_LOG_ERR, "offloadfs: store '%s': lock.mdb %s under the running "
                 "daemon; stopping (restart offloadfs to serve the store again)\n",
                 store_path(fs->st), why);
    else
        fuse_log(FUSE_LOG_ERR, "offloadfs: store '%s': lock.mdb %s: %s; stopping "
                 "(restart offloadfs to serve the store again)\n",
                 store_path(fs->st), why, store_strerror(rc));
    atomic_store(&fs->lock_changed, 1);
    session_stop(fs);
    return -1;
}

/* Counts FRESH new versions into the current window of
 * OFS_PREFETCH_WINDOW_MS; 0 once the window holds more than
 * OFS_PREFETCH_BURST (a bulk load: push none of them). Woken writers make
 * a poll per write, so the burst is measured over time, not per poll. */
static int burst_ok(struct ofs_watch *w, unsigned fresh)
{
    uint64_t now = common_clock_ms();
    if (now - w->burst_start_ms >= OFS_PREFETCH_WINDOW_MS) {
        w->burst_start_ms = now;
        w->burst_count = 0;
    }
    w->burst_count += fresh;
    return w->burst_count <= OFS_PREFETCH_BURST;
}

/* One poll: check lock.mdb, then process what changed since the last
 * generation seen. Returns 0, or -1 when lock.mdb changed (the session is
 * being stopped; the watcher must end). */
static int watch_poll(struct ofs *fs)
{
    struct ofs_watch *w = &fs->watch;
    struct batch b;
    uint64_t gen = w->generation;
    int rc;
    if (lock_check(fs))
        return -1;
    b.fs = fs;
    b.changes = b.fresh = 0;
    rc = store_changes(fs->st, w->generation, on_change, &b, &gen);
    if (rc == STORE_ELOGGONE) {
        inval_everything(fs);
        b.changes++;
    } else if (rc) {
        /* Changes reported before the failure are done; the rest come
         * again next time. */
        fuse_log(FUSE_LOG_ERR, "offloadfs: reading store changes: %s\n",
                 store_strerror(rc));
    }
    w->generation = gen;
    if (b.changes) {
        atomic_store(&fs->root_mtime_ns, now_ns());
        inval_inode(fs, FUSE_ROOT_ID);
    }
    /* After the invalidations: the prefetcher's lookups then find the new
     * versions. A burst is a bulk load, not an agent about to read. */
    if (burst_ok(w, b.fresh))
        for (unsigned i = 0; i < b.fresh; i++)
            /* A cached copy (this mount's or agentlink's) is not new to a
             * reader: the name reads through its remote inode (ops.c). */
            if (store_cached(fs->st, b.prefetch[i].version, NULL, 0) != 1)
                ofs_prefetch_add(fs, b.prefetch[i].key, b.prefetch[i].version);
    return 0;
}

/* Gives back the pages of data.mdb that reads, and copies written or
 * evicted, mapped since the last round (store_map_trim()): the daemon's
 * memory follows use. Only after such work: a trim makes the next lookups
 * fault their pages in again (about 180 us a round), which an idle daemon
 * should not pay 50 times a second. */
static void watch_trim(struct ofs *fs)
{
    uint64_t work = atomic_load_explicit(&fs->count.reads, memory_order_relaxed) +
                    atomic_load_explicit(&fs->count.cache_misses, memory_order_relaxed);
    if (work == fs->watch.trim_work)
        return;
    fs->watch.trim_work = work;
    store_map_trim(fs->st);
}

/* The thread: a poll every interval, and at once when a writer connects to
 * the wake-up socket, until told to stop or until lock.mdb changes.
 * Writers accepted before a poll are answered after it: the generation it
 * reached covers their commits (see wake.c). */
static void *watch_main(void *arg)
{
    struct ofs *fs = arg;
    struct ofs_watch *w = &fs->watch;
    struct pollfd pfd[2] = {{w->stop_fd, POLLIN, 0}, {ofs_wake_fd(fs), POLLIN, 0}};
    uint64_t next = common_clock_ms() + w->interval_ms, now;
    int rc = 0;
    nfds_t npfd = 2;
    while (!atomic_load(&w->stop) && !rc) {
        unsigned woken = 0;
        now = common_clock_ms();
        pfd[1].revents = 0;
        if (now < next && poll(pfd, npfd, (int)(next - now)) < 0 && errno != EINTR)
            break;
        if (atomic_load(&w->stop))
            break;
        if (pfd[1].revents & POLLIN) {
            woken = ofs_wake_accept(fs);
            /* Nothing accepted (EMFILE, ENFILE): the connection stays
             * queued and the socket readable; wait out this round's
             * interval instead of spinning on it. (After refused peers
             * only, a writer connecting in this round waits for the
             * poll too: at most one interval.) */
            if (!woken)
                npfd = 1;
        } else if (pfd[1].revents) { /* never for a listening socket; no busy loop */
            fuse_log(FUSE_LOG_ERR, "offloadfs: wake-up socket failed; polling only\n");
            pfd[1].fd = -1;
        }
        if (!woken && common_clock_ms() < next)
            continue;
        rc = watch_poll(fs);
        if (!rc)
            ofs_wake_answer(fs, w->generation);
        ofs_window_sweep(fs, common_clock_ms());
        ofs_fill_sweep(fs, common_clock_ms());
        if (fs->tier && !rc)
            watch_trim(fs);
        next = common_clock_ms() + w->interval_ms;
        npfd = 2;
    }
    /* Writers still waiting, or about to connect, stop waiting now. */
    ofs_wake_close(fs);
    atomic_store(&w->done, 1);
    return NULL;
}

int ofs_watch_start(struct ofs *fs)
{
    struct ofs_watch *w = &fs->watch;
    store_stats s;
    int rc;
    w->interval_ms = OFS_WATCH_INTERVAL_MS;
    atomic_store(&w->stop, 0);
    atomic_store(&w->done, 1);
    atomic_store(&fs->lock_changed, 0);
    /* Take the starting point: nothing before it can be cached yet. */
    if ((rc = store_stats_get(fs->st, &s)))
        return ofs_errno(rc);
    w->generation = s.generation;
    if ((w->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
        return errno;
    atomic_store(&w->done, 0);
    if ((rc = pthread_create(&w->thread, NULL, watch_main, fs))) {
        atomic_store(&w->done, 1);
        close(w->stop_fd);
        return rc;
    }
    w->running = 1;
    return 0;
}

void ofs_watch_stop_begin(struct ofs *fs)
{
    struct ofs_watch *w = &fs->watch;
    uint64_t one = 1;
    if (!w->running)
        return;
    atomic_store(&w->stop, 1);
    if (write(w->stop_fd, &one, sizeof one) < 0 && errno != EAGAIN)
        fuse_log(FUSE_LOG_ERR, "offloadfs: waking the watcher to stop: %s\n", strerror(errno));
}

int ofs_watch_done(struct ofs *fs)
{
    return atomic_load(&fs->watch.done);
}

void ofs_watch_stop(struct ofs *fs)
{
    struct ofs_watch *w = &fs->watch;
    if (!w->running)
        return;
    ofs_watch_stop_begin(fs);
    pthread_join(w->thread, NULL);
    close(w->stop_fd);
    w->running = 0;
}
