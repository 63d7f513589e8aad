/* lookup.h -- names the local store does not hold, looked up on the
 * remote, and the inodes of the results found there (lookup.c). Used by
 * main.c and ops.c; it uses window.c (a lookup's first bytes become the
 * inode's first window), conn.c, errmap.c and the counters. */
#ifndef OFFLOADFS_FS_LOOKUP_H
#define OFFLOADFS_FS_LOOKUP_H

#include "fs/fs.h"
#include "fs/window.h"

/* Inodes of remote-only results start here (local ones are store versions,
 * far below); see lookup.c. */
#define OFS_REMOTE_INO_BASE (UINT64_C(1) << 62)
/* Seconds a remote answer (a name found or not) is reused, by default. */
#define OFS_REMOTE_TTL_DEFAULT 2u

/* 1 when INO is a remote result's inode. */
static inline int ofs_remote_ino(fuse_ino_t ino)
{
    return (uint64_t)ino >= OFS_REMOTE_INO_BASE;
}

/* Makes / frees fs->slots (main.c, with a remote; freed after the
 * session, after the listing). ENOMEM or 0. Free is safe when init never
 * ran. */
int ofs_lookup_init(struct ofs *fs);
void ofs_lookup_free(struct ofs *fs);

/* Looks KEY up on the remote (fs->tier and fs->slots set): 0 and *E (its
 * inode in e->version, at or above OFS_REMOTE_INO_BASE) for a result
 * there; ENOENT when the remote has none; ENODATA for a tombstone
 * (removed on some host); EIO (logged) when the remote fails within its
 * bound; ENOMEM. An answer younger than fs->remote_ttl seconds is reused.
 * The first OFS_RWIN_FIRST bytes come with the lookup and are offered to
 * the windows (ofs_window_offer()). */
int ofs_lookup_name(struct ofs *fs, const char *key, store_entry *e);

/* The entry of remote inode INO into *E (may be NULL): 0, or ENODATA when
 * this mount does not know INO. */
int ofs_lookup_entry(struct ofs *fs, fuse_ino_t ino, store_entry *e);

/* What remote inode INO is, for a read (ofs_window_read()): its key,
 * version and length into *O. 0, or ENODATA when this mount does not know
 * INO. */
int ofs_lookup_object(struct ofs *fs, fuse_ino_t ino, struct ofs_object *o);

#endif
