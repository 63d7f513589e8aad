/* prefetch.h -- pushing new results into the page cache (prefetch.c).
 * Used by main.c and watch.c. */
#ifndef OFFLOADFS_FS_PREFETCH_H
#define OFFLOADFS_FS_PREFETCH_H

#include "fs/fs.h"

/* Starts the prefetcher for FS (fs->st, fs->se, fs->mountpoint set) when
 * fs->prefetch_max is not 0. Returns 0 or an errno value. */
int ofs_prefetch_start(struct ofs *fs);

/* Called by the watcher for KEY at VERSION (a new version it saw), before
 * it answers the woken writers: when the prefetcher runs and the value is
 * not empty and at most fs->prefetch_max bytes, stats KEY through the
 * mount (one lookup round trip served by this daemon: the kernel then
 * knows the inode) and queues the push into the page cache for the
 * prefetcher thread. Drops the item when the name no longer leads to
 * VERSION or the queue is full. */
void ofs_prefetch_add(struct ofs *fs, const char *key, uint64_t version);

/* As for the watcher: tell it to stop; ask whether it has; join it. */
void ofs_prefetch_stop_begin(struct ofs *fs);
int ofs_prefetch_done(struct ofs *fs);
void ofs_prefetch_stop(struct ofs *fs);

#endif
