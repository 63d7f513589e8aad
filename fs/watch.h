/* watch.h -- the change watcher (watch.c). Used by main.c. */
#ifndef OFFLOADFS_FS_WATCH_H
#define OFFLOADFS_FS_WATCH_H

#include "fs/fs.h"

/* Starts the watcher thread for FS (fs->st, fs->se, fs->lock and
 * fs->loop_thread must be set; ofs_wake_open() called, whatever it
 * returned). Every OFS_WATCH_INTERVAL_MS, and at once when a writer
 * connects to the wake-up socket, it checks lock.mdb against fs->lock, then
 * reads the store's change log, invalidates in the kernel exactly the
 * names and inodes that changed in fs->ns, and answers the writers it
 * accepted before (ofs_wake_answer), and frees the remote read windows
 * left idle (ofs_window_sweep()). The thread closes the wake-up socket
 * as it ends. When lock.mdb has changed it makes no LMDB call: it sets
 * fs->lock_changed, logs what happened, ends the session loop (fuse_session_exit(), and SIGTERM to
 * fs->loop_thread to wake it) and returns. Returns 0 or an errno value
 * (the thread could not be made). */
int ofs_watch_start(struct ofs *fs);

/* Tells the watcher to stop, without waiting. */
void ofs_watch_stop_begin(struct ofs *fs);

/* 1 once the watcher has stopped (or never started): joining it cannot
 * block any more. */
int ofs_watch_done(struct ofs *fs);

/* Joins the watcher after ofs_watch_stop_begin(); safe to call when it never
 * started. */
void ofs_watch_stop(struct ofs *fs);

#endif
