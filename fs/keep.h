/* keep.h -- the daemon's cached copies (keep.c): a remote result this
 * mount read is kept in the local store as a cached copy of that
 * version (store_put_cached()), as agentlink keeps what it fetches, and a
 * read of a remote inode whose version the store holds so is served from
 * the store. A leaf: it calls no other file of fs/. Used by fill.c and
 * ops.c (keeping small results, finding, dropping).
 *
 * The daemon writes to the store only here, and only when it could open
 * the store for writing (fs->keep; main.c): a copy is a cache, so it is
 * written without an fsync (STORE_NOSYNC: a crash may lose the last copies,
 * never damage the store) and without waking the watchers (STORE_NOWAKE:
 * no writer waits on a copy). A large copy is written by a short-lived
 * child process, so that the write's memory leaves with it. Keeping is
 * best effort, as for agentlink: a
 * copy the store refuses (too big for the bound, a result written here
 * meanwhile, the store full) is simply not kept. */
#ifndef OFFLOADFS_FS_KEEP_H
#define OFFLOADFS_FS_KEEP_H

#include "fs/fs.h"

/* Copies of at least this many bytes are written by a child process (keep.c
 * says why); smaller ones by the calling thread. */
#define OFS_KEEP_CHILD_MIN (1024u * 1024u)

/* Keeps LEN bytes at DATA, all of version ETAG of KEY (META: the tool,
 * write time and original size the remote recorded; may be NULL), as a
 * cached copy, when fs->keep. Counts a cache miss either way. 1 when the
 * store now holds that version's copy (kept now, or before), else 0. */
int ofs_keep_copy(struct ofs *fs, const char *key, const char *etag, const store_entry *meta,
                   const void *data, uint64_t len);

/* Drops cached copy VERSION of KEY (the remote holds a tombstone or
 * nothing for KEY), when fs->keep; best effort, as keeping is. */
void ofs_keep_drop(struct ofs *fs, const char *key, uint64_t version);

/* The largest result the store would keep as a copy now: the least of
 * max_result_bytes and half of max_total_bytes (store_put_cached()); 0
 * when the daemon keeps no copies (!fs->keep) or cannot read the limits. */
uint64_t ofs_keep_max(struct ofs *fs);

/* 1 and *VERSION (the copy's local version, an inode ops.c reads as it
 * reads a local result) when the store holds a cached copy of version ETAG
 * of KEY; 0 otherwise, also when it cannot tell. */
int ofs_keep_find(struct ofs *fs, const char *key, const char *etag, uint64_t *version);

#endif
