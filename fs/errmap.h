/* errmap.h -- store and tier codes to the errno a FUSE reply carries
 * (errmap.c): the one mapping of the daemon. A leaf: it calls no other
 * file of fs/, and every file that answers with an errno calls it. Remote
 * codes never reach fs/: tier/reader.h turns them into tier codes. */
#ifndef OFFLOADFS_FS_ERRMAP_H
#define OFFLOADFS_FS_ERRMAP_H

/* Converts RC (0, a positive errno, a STORE_E* or a TIER_E* code) into the
 * errno a FUSE reply carries: 0 stays 0, errno values pass through.
 * Store codes: STORE_ENOTFOUND -> ENOENT, STORE_EEVICTED and STORE_EGONE ->
 * ENODATA, STORE_ENAME_LONG -> ENAMETOOLONG, other name rules -> ENOENT
 * (such a name can never have been written), STORE_ERDONLY -> EROFS,
 * STORE_EREADERS -> EAGAIN, STORE_EFULL -> ENOSPC, STORE_ETOOBIG -> EFBIG,
 * STORE_ELIMITS -> EINVAL, anything else (corruption, LMDB failures) ->
 * EIO. Tier codes: TIER_ENOTFOUND -> ENOENT, TIER_ETOMB (removed) and
 * TIER_ECHANGED (that version is gone) -> ENODATA, every other (the remote
 * failed within its bound, refused us, has no bucket) -> EIO. Any other
 * negative value -> EIO. */
int ofs_errno(int rc);

#endif
