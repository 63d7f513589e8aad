/* listing.h -- the remote's names for readdir (listing.c). Used by main.c
 * and ops.c; it uses conn.c and the counters, never the lookups. */
#ifndef OFFLOADFS_FS_LISTING_H
#define OFFLOADFS_FS_LISTING_H

#include "fs/fs.h"

/* Bounds of one listing of the remote (doc/remote.md, "Listings"): names
 * (-o remote_list_max), bytes of names, seconds (-o remote_list_seconds).
 * 1,000,000 names of up to 64 MiB take at most about 72 MiB. */
#define OFS_REMOTE_LIST_MAX 1000000u
#define OFS_REMOTE_LIST_BYTES (64u << 20)
#define OFS_REMOTE_LIST_SECONDS 30u
/* The longest a readdir waits for a listing (then it answers without the
 * new one: the next readdir gets it); lookups in the mount root, which the
 * kernel serialises with readdir, wait at most as long. */
#define OFS_REMOTE_LIST_WAIT 2

/* One listing of the remote's names: a sorted snapshot shared by
 * reference (listing.c). */
struct ofs_rlist;

/* Makes / frees fs->rlists (main.c, with a remote: after ofs_conn_open();
 * freed first, before the windows, the slots and the tier, since its
 * lister thread uses the tier). ENOMEM or 0. */
int ofs_listing_init(struct ofs *fs);
void ofs_listing_free(struct ofs *fs);

/* One name of a listing, as the remote listed it: the object's length
 * (the result's st_size: an object holds exactly the result's bytes) and
 * Last-Modified (Unix seconds), and when the listing was fetched
 * (common_clock_ms()). A listing carries no ETag and no metadata (tool,
 * write time, original size): lookup.c pins the version at the first read. */
struct ofs_listed {
    const char *key;   /* valid during the call only; NULL from ofs_listing_find() */
    uint64_t size;
    int64_t mtime;
    uint64_t at_ms;
};

/* Called by ofs_listing_names() per name; nonzero stops the listing (and is
 * returned). */
typedef int (*ofs_remote_name_fn)(const struct ofs_listed *name, void *ctx);

/* Calls FN for each result name of the namespace the remote holds that
 * sorts after AFTER (NULL: all) and is not live in the local store, in
 * byte order, from the snapshot *HELD: a directory handle's, taken by its
 * first call (*HELD NULL) and kept until ofs_listing_drop(). A
 * snapshot is reused between handles for remote_ttl seconds; a new one is
 * fetched by the mount's lister thread, waited for at most
 * OFS_REMOTE_LIST_WAIT seconds (else the last one, or none, is used).
 * When the remote fails or a bound is passed (logged), the last snapshot
 * or none is used and the remote is not listed again for 10 s. REQ is the
 * readdir request: when the kernel interrupts it (its caller got a
 * signal) the wait ends. Returns 0, FN's value, or EINTR (REQ
 * interrupted). */
int ofs_listing_names(struct ofs *fs, fuse_req_t req, struct ofs_rlist **held, const char *after,
                    ofs_remote_name_fn fn, void *ctx);

/* What the last listing says of KEY, into *OUT, when that listing is
 * younger than remote_ttl seconds (valid): 0; ENOENT when there is no
 * valid listing or it does not hold KEY (which says nothing: the name may
 * be newer than the listing). Never fetches, never waits for the lister;
 * does not look at the local store. */
int ofs_listing_find(struct ofs *fs, const char *key, struct ofs_listed *out);

/* Drops a snapshot a directory handle held (NULL is fine). */
void ofs_listing_drop(struct ofs *fs, struct ofs_rlist *l);

#endif
