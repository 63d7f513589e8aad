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
/* Seconds a remote answer (a name found) is reused, by default. */
#define OFS_REMOTE_TTL_DEFAULT 2u
/* Milliseconds a name the remote does not hold is answered ENOENT without
 * asking it again, at most (and at most remote_ttl): the daemon's miss
 * and the kernel's negative entry together. A result put on another host
 * is seen that soon; a burst of lookups of missing names costs one
 * request per name per this time. */
#define OFS_REMOTE_MISS_MS 200u

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
 * there; ENOENT when the remote has none, with *MISS_LEFT the ms the
 * answer stays true for (the kernel may keep its negative entry that
 * long; *MISS_LEFT is 0 on every other answer); ENODATA for a tombstone
 * (removed on some host); EIO (logged) when the remote fails within its
 * bound; ENOMEM. A found answer younger than fs->remote_ttl seconds, or a
 * miss younger than OFS_REMOTE_MISS_MS, is reused; lookups of one name at
 * once wait for one request. The first OFS_RWIN_FIRST bytes come with the
 * lookup and are offered to the windows (ofs_window_offer()). */
int ofs_lookup_name(struct ofs *fs, const char *key, store_entry *e, uint64_t *miss_left);

/* KEY as a listing (listing.c, fetched at AT_MS, common_clock_ms()) said
 * it: an object of SIZE bytes, Last-Modified MTIME (Unix seconds). Gives
 * KEY an inode with no request: 0 and *E (st_size SIZE, mtime MTIME) -- the
 * slot of the version this mount knew already when it has that length and
 * Last-Modified, or knew of it after AT_MS; else a new slot, pinned to a
 * version (an ETag) only at its first read (ofs_lookup_object()).
 * ENOENT when SIZE is 0 (an empty result and a listing without a Size look
 * alike: the caller looks KEY up instead); ENODATA when KEY was removed
 * here and its tombstone is not yet on the remote; ENOMEM. */
int ofs_lookup_listed(struct ofs *fs, const char *key, uint64_t size, int64_t mtime, uint64_t at_ms,
                      store_entry *e);

/* The entry of remote inode INO into *E (may be NULL), as known now (a
 * listed inode's has no metadata): 0, or ENODATA when this mount does not
 * know INO. Never asks the remote. */
int ofs_lookup_entry(struct ofs *fs, fuse_ino_t ino, store_entry *e);

/* What remote inode INO is, for a read (ofs_window_read()): its key,
 * version and length into *O. A listed inode not pinned yet is looked up
 * first (one request, as a lookup): its version must have the listed
 * length. 0; ENODATA when this mount does not know INO
 * or its version is gone (replaced or removed); EIO (logged), ENOMEM. */
int ofs_lookup_object(struct ofs *fs, fuse_ino_t ino, struct ofs_object *o);

/* The entry of remote inode INO with its metadata (tool, original size,
 * the recorded write time as created_ns), for the extended attributes:
 * pins a listed inode first, as ofs_lookup_object() does. Same errors. */
int ofs_lookup_meta(struct ofs *fs, fuse_ino_t ino, store_entry *e);

/* The version (ETag) remote inode INO is pinned to, into ETAG (CAP
 * bytes): 0, or ENOENT when this mount does not know INO or has not pinned
 * it yet (a listed inode before its first read). Never asks the remote. */
int ofs_lookup_version(struct ofs *fs, fuse_ino_t ino, char *etag, size_t cap);

#endif
