/* fill.h -- remote results fetched whole (fill.c): a result read from the
 * remote is fetched once, with parallel ranged GETs, into one file that
 * answers every read of it, and then kept in the local store as a cached
 * copy (keep.h), which answers the reads after it. Used by ops.c (the
 * reads) and watch.c (the sweep); it calls conn.c, keep.c, the counters
 * and window.c's fetch and replies (ofs_window_fetch_to(),
 * ofs_reply_read()), never the lookups or the windows themselves.
 *
 * Why whole: a reader that jumps about a result (pread at random places,
 * a parser seeking back) would otherwise fetch a window per jump and move
 * the result many times over (doc/benchmark.md). Fetched whole, in
 * OFS_FILL_CHUNK pieces by up to OFS_FILL_FETCHERS requests at once, a
 * result moves once whatever the order of its reads, and a reader waits
 * only for the bytes it reads (the piece under a read is fetched first,
 * by the reading thread itself, which answers the read as soon as those
 * bytes are in and then fetches the rest of the piece; the others follow
 * in order, on threads of their own, and readers of a piece being fetched
 * are answered as its bytes land). Results larger than OFS_FILL_MAX, or
 * than the store would keep (ofs_keep_max(): a fill is worth its memory
 * only when a copy ends it), and every result of a mount that keeps no
 * copies, are read through the windows (window.h), as are those of at
 * most OFS_RWIN_FIRST bytes, which come whole with their lookup (ops.c
 * keeps those from the lookup's window).
 *
 * Memory: each fill is one unnamed file of the result's length (in the
 * store's directory, else a memfd), written as chunks come and read with
 * pread(): its bytes are the page cache's, never the daemon's resident
 * memory, as s3fs keeps its reads in a temporary file. Its bytes are
 * counted into fs->count.window_bytes with the windows. It is closed as
 * soon as the store holds the copy, or OFS_RWIN_IDLE_MS after its last
 * read when the store cannot keep it (the sweep), or at unmount. At most
 * OFS_FILL_COUNT results are filled at once and at most OFS_FILL_BYTES
 * held; past that, reads use the windows. */
#ifndef OFFLOADFS_FS_FILL_H
#define OFFLOADFS_FS_FILL_H

#include "fs/fs.h"
#include "fs/window.h"

#define OFS_FILL_CHUNK (2u * 1024u * 1024u)
#define OFS_FILL_FETCHERS 4u
#define OFS_FILL_COUNT 4u
#define OFS_FILL_MAX (256ull * 1024u * 1024u)
#define OFS_FILL_BYTES (512ull * 1024u * 1024u)

/* Makes / frees fs->fills (main.c, with a remote). Free waits for the
 * fetching threads to end, so call it before ofs_conn_close(). ENOMEM or
 * 0. Free is safe when init never ran. */
int ofs_fill_init(struct ofs *fs);
void ofs_fill_free(struct ofs *fs);

/* What ofs_fill_read() did. */
enum {
    OFS_FILL_NONE,    /* replied nothing: O is not filled (too large, no room): use the windows */
    OFS_FILL_REPLIED, /* replied: the bytes, ENODATA (the version is gone) or EIO (the remote failed) */
    OFS_FILL_KEPT     /* replied nothing: the store holds O's copy (kept since the caller
                         looked for one): read it there */
};

/* Answers read request REQ of SIZE bytes at OFF of object O (META: its
 * tool and times, for the copy kept; may be NULL) from a fill of O,
 * started by this read when none is there and the store holds no copy.
 * Returns an OFS_FILL_* value. C is this thread's connection. */
int ofs_fill_read(struct ofs *fs, tier_conn *c, fuse_req_t req, const struct ofs_object *o,
                  const store_entry *meta, size_t size, off_t off);

/* Drops the fills of FS no read has used since NOW_MS - OFS_RWIN_IDLE_MS
 * and no fetch is writing, and those whose copy the store holds (their
 * reads go to it). Called by the watcher every poll; cannot fail. */
void ofs_fill_sweep(struct ofs *fs, uint64_t now_ms);

#endif
