/* window.h -- reads of remote results through read-ahead windows
 * (window.c). Used by main.c, ops.c (the reads), lookup.c (the first
 * bytes a lookup brings), fill.c (its fetches) and watch.c (the sweep of
 * idle windows). It takes the object it reads -- key, version, length --
 * and a connection from its caller, and never calls the lookups.
 *
 * OFS_RWIN_COUNT buffers of at most OFS_RWIN_MAX bytes each, shared by the
 * mount. A read not covered by a window fetches one (a ranged GET of that
 * object version: tier_read_version()), starting at OFS_RWIN_MIN bytes and
 * doubling while reads go on where the last window ended, so a sequential
 * read of a large result costs few requests. Reads that a window being
 * fetched will cover wait for it instead of asking again. A window no read
 * has used for OFS_RWIN_IDLE_MS is freed by the next sweep, its memory
 * given back to the system; fs->count.window_bytes says how much the
 * windows hold. */
#ifndef OFFLOADFS_FS_WINDOW_H
#define OFFLOADFS_FS_WINDOW_H

#include "fs/fs.h"
#include "tier/reader.h"

#define OFS_RWIN_COUNT 4u
#define OFS_RWIN_MIN (256u * 1024u)
#define OFS_RWIN_MAX (8u * 1024u * 1024u)

/* How long a window may stay unused before ofs_window_sweep() frees it.
 * A sequential reader uses its windows every few milliseconds, so only a
 * reader that pauses this long (or is gone) loses them, and what it loses
 * is one GET of the rest of a window (tens of milliseconds) after a pause
 * of 2 s: at most a few per cent of its time. The kernel's page cache, not
 * the windows, serves a result read again. Shorter would free windows
 * between the reads of a slow consumer (a pipe into a parser); longer
 * keeps up to 32 MiB of an idle daemon resident for nothing. */
#define OFS_RWIN_IDLE_MS 2000u

/* What a lookup of a remote name fetches with it (tier_read_lookup()),
 * kept as the inode's first window: a lookup then a read of a result this
 * small is one GET, not a HEAD and a GET. The price: each lookup (ls -l
 * looks every remote name up) moves up to this many bytes. */
#define OFS_RWIN_FIRST (128u * 1024u)

/* One version of a remote result, as a read needs it. */
struct ofs_object {
    fuse_ino_t ino;                 /* its inode: windows are kept by inode */
    char key[STORE_NAME_MAX + 1];   /* the result's key in fs->ns */
    char etag[TIER_ETAG_MAX + 1];   /* the version (never ""; see lookup.c) */
    uint64_t length;                /* its bytes */
};

/* Makes / frees fs->rwin (main.c, around the session, with a remote).
 * ENOMEM or 0. Free is safe when init never ran. */
int ofs_window_init(struct ofs *fs);
void ofs_window_free(struct ofs *fs);

/* Keeps BUF, bytes [0, LEN) of remote inode INO fetched by its lookup, as
 * a window of INO when one is free (a copy; BUF stays the caller's); else,
 * or when a window of INO already holds them, does nothing. */
void ofs_window_offer(struct ofs *fs, fuse_ino_t ino, const void *buf, uint64_t len);

/* Answers read request REQ of SIZE bytes at OFF of object O (exactly one
 * reply) with the bytes of that version, from a window or ranged GETs on
 * connection C (NULL: ENOMEM, none could be made): ENODATA when the
 * version is gone from the remote (or shorter than O says), EIO (logged)
 * when the remote fails, ENOMEM. Counts reads, read_bytes, evicted_reads
 * and the fetches (counters.h) as a local read counts. */
void ofs_window_read(struct ofs *fs, tier_conn *c, fuse_req_t req, const struct ofs_object *o,
                     size_t size, off_t off);

/* GETs [OFF, OFF + LEN) of O's version into BUF on C (NULL: ENOMEM),
 * counted as a fetch (counters.h) of the bytes that came. 0 when all
 * came, else the errno a reply carries: ENODATA when the version is gone
 * (or shorter), EIO (logged) when the remote failed, ENOMEM. Used by the
 * windows and by the fills (fill.c). */
int ofs_window_fetch(struct ofs *fs, tier_conn *c, const struct ofs_object *o, uint64_t off, size_t len,
                     char *buf);

/* The same, the bytes given to SINK(ARG) as they come (a SINK that fails
 * ends the fetch with EIO). Used by the fills, which write to a file. */
int ofs_window_fetch_to(struct ofs *fs, tier_conn *c, const struct ofs_object *o, uint64_t off, size_t len,
                        tier_sink_fn sink, void *arg);

/* Answers read request REQ with the SIZE bytes at BUF, counted as ops.c
 * counts a local read (reads, read_bytes); or with ERR, counting ENODATA
 * as an evicted read. */
void ofs_reply_read(struct ofs *fs, fuse_req_t req, const char *buf, size_t size);
void ofs_reply_read_err(struct ofs *fs, fuse_req_t req, int err);

/* Copies bytes [0, LEN) of remote inode INO into BUF when a ready window
 * holds them all (a result of at most OFS_RWIN_FIRST bytes read through its
 * lookup's window: ops.c keeps it as a cached copy); 0, else ENOENT. */
int ofs_window_copy(struct ofs *fs, fuse_ino_t ino, uint64_t len, void *buf);

/* Frees the windows of FS no read has used since NOW_MS -
 * OFS_RWIN_IDLE_MS (NOW_MS: common_clock_ms(); the watcher passes the
 * present, a test the future): their mappings are unmapped and
 * fs->count.window_bytes lowered by what they held; then, when any was
 * freed, malloc_trim(0) returns the heap's free memory to the system.
 * Windows being fetched are left alone, and readers are safe: a window is
 * taken under the windows' lock. Does nothing without fs->rwin. Cannot
 * fail. Called by the watcher thread every poll (watch.c). */
void ofs_window_sweep(struct ofs *fs, uint64_t now_ms);

#endif
