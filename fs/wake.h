/* wake.h -- the wake-up socket writers wake this daemon through (wake.c).
 * Used by main.c and watch.c. */
#ifndef OFFLOADFS_FS_WAKE_H
#define OFFLOADFS_FS_WAKE_H

#include "fs/fs.h"

/* Makes the socket writers wake this daemon through (store/wake.h): the
 * private directory STORE_DIR/wake if missing (0700, owned by the store
 * directory's owner), a SOCK_SEQPACKET socket listening in it under a name
 * of our own (0600, the owner's too). Run as root, it makes both as the
 * owner (ofs_as_user), through descriptors (see wake.c). STORE_DIR must be
 * the store fs->st holds (fs->lock marked). Returns 0, or an errno value
 * (EPERM: the directory exists but is not private, or not the owner's;
 * ELOOP: it is a symlink; EACCES, EROFS: it cannot be made; ESTALE:
 * STORE_DIR is no longer the store we hold, or our socket's temporary name
 * was replaced before we could publish it): the daemon then runs without
 * one, its writers do not wait for it, and its 20 ms poll alone shows
 * their writes. Call ofs_wake_close() in both cases. */
int ofs_wake_open(struct ofs *fs, const char *store_dir);

/* The listening descriptor for poll(), or -1 when there is none. */
int ofs_wake_fd(const struct ofs *fs);

/* Accepts the pending connections (OFS_WAKE_BATCH held at most), closing
 * those of peers that may not wake us (SO_PEERCRED: not our uid, not the
 * store's owner, not root). Returns how many are held, waiting for
 * ofs_wake_answer(). Never blocks. */
unsigned ofs_wake_accept(struct ofs *fs);

/* Sends GENERATION (the store generation the watcher has processed, after
 * its invalidations) to every held connection and closes them. Never
 * blocks. */
void ofs_wake_answer(struct ofs *fs, uint64_t generation);

/* Closes held connections unanswered, removes our socket (as the owner,
 * and only while its name is still the file we bound), closes it and the
 * directory. Safe to call twice, or when ofs_wake_open() never ran
 * (a zero-filled struct ofs). */
void ofs_wake_close(struct ofs *fs);

#endif
