/* fs.h -- offloadfs internals: the daemon state and the pieces that share it.
 *
 * The daemon mounts one namespace of one store read-only. main.c parses the
 * command line and owns startup and shutdown; config.c picks the namespace
 * as agentlink does (policy file included); startup.c refuses, before
 * mounting, a store inside the mountpoint and an unasked-for stacked mount;
 * ops.c holds the FUSE low-level handlers; watch.c runs the change watcher
 * that tells the kernel what to forget when another process writes the
 * store; wake.c holds the socket through which writers wake the watcher
 * and wait for it (read-your-writes); asuser.c runs a piece of work on a
 * thread acting as another user (a root daemon's changes in a user's
 * STORE/wake are made as that user); pin.c opens the store directory and
 * its LMDB files so that a root daemon reaches nothing the store's owner
 * could not (links, swapped directories); metrics.c serves GET /metrics
 * (-o metrics=HOST:PORT) from the counters the handlers keep.
 * and wait for it (read-your-writes); decode.c serves reads of
 * compressed results from decoded frames, decoding ahead of sequential
 * readers.
 *
 * Caveats
 * =======
 * - Inode numbers: the root is 1; every other inode number is the immutable
 *   store version id of one write (store_entry.version, always >= 2). A
 *   replaced key is therefore a new inode, and an inode's bytes never change:
 *   the kernel may cache them (keep_cache, no-open) for as long as it likes,
 *   and a handle opened on one version can only read that version, or get
 *   ENODATA once it is gone. No per-inode state is kept in the daemon, so
 *   forget() has nothing to do.
 * - Caching: entries and attributes are given long timeouts
 *   (OFS_CACHE_TIMEOUT); correctness comes from explicit invalidation by the
 *   watcher thread, which never runs inside a request handler (a notify from
 *   a handler can deadlock on the directory lock the kernel holds).
 * - A lookup racing a write cannot leave a stale dentry behind: the kernel
 *   holds the directory lock for the whole of a lookup or readdirplus, and
 *   fuse_lowlevel_notify_inval_entry() takes it exclusively, so an
 *   invalidation sent after the write commits lands after any reply built
 *   from older data.
 * - fork(): the store is opened only after fuse_daemonize() (LMDB handles
 *   must not cross fork()); startup probes it once before mounting and
 *   closes that handle again, only to report a missing store clearly.
 * - Errors: store codes become errno values in ofs_errno() and nowhere else.
 * - Threads of our own that wait on the kernel: the watcher (its
 *   invalidations take the kernel's directory lock, and it looks new names
 *   up through the mount for the prefetcher) and the prefetcher (it pushes
 *   pages the kernel may be reading). Both can wait for an answer from this
 *   daemon, so shutdown first tells them to stop, then keeps answering
 *   requests until they have (drain() in main.c), and only then joins them.
 * - The metrics server (-o metrics) is one more thread, running
 *   libmicrohttpd's event loop (metrics.c): it never waits on the mount,
 *   reads the store in short read transactions, and is stopped as soon as
 *   the session loop ends, before the store closes.
 * - The decoder's worker (decode.c) waits on nothing but the store, and is
 *   joined after the session has ended.
 *
 * Invariants of the handlers and threads
 * ======================================
 * What the mount promises is in doc/contract.md; how it behaves and why
 * (prefetch, read-your-writes, the log gap, lock.mdb damage, with the
 * measurements) is in doc/design.md. What the code here keeps true:
 * - The root lists "." and ".." and then the live keys in byte order, with
 *   d_type DT_REG. Directory offsets are ordinal positions; a handle resumes
 *   after the last key it sent, and a seek elsewhere rescans from the start.
 * - Extended attributes: an entry with no recorded tool has no
 *   user.offload.tool (not listed, ENODATA); unknown user.* names ENODATA;
 *   names outside user.* EOPNOTSUPP. created is RFC 3339 UTC with
 *   microseconds. The root has only user.offloadfs.store (the store
 *   directory's real path, whatever -o fsname= says) and
 *   user.offloadfs.namespace: readers that act for a writer check them
 *   before trusting a mount. The root's ctime is the daemon's start (its
 *   mtime the last change) and never changes: a reader that cannot read
 *   attributes (Node) tells a new mount at the same path from the one it
 *   checked by it, as mount ids and device numbers are reused at once.
 * - statfs: blocks are the store's byte bound, free blocks what is left of
 *   it, files the live entries of the whole store.
 * - Read-your-writes (wake.c, store/wake.h): a woken writer is answered only
 *   after the watcher has processed every change up to a generation that
 *   covers the write and sent its invalidations; a replaced key's name is
 *   invalidated before its old inode, in the same pass, so no lookup reaches
 *   the old inode through the name once the writer is answered. The 20 ms
 *   poll stays for writers that cannot reach the socket or were not
 *   answered within STORE_WAKE_TIMEOUT_MS.
 * - Prefetch (-o prefetch=SIZE, default OFS_PREFETCH_DEFAULT, 0 for none):
 *   the name is stat'ed through the mount before its pages are pushed, and
 *   the watcher makes that stat before it answers the woken writers, so an
 *   unmount right after a write does not meet EBUSY. More than
 *   OFS_PREFETCH_BURST new versions within OFS_PREFETCH_WINDOW_MS are not
 *   pushed. Under valgrind, mount with -o prefetch=0 (the watcher's stat
 *   through its own mount can wait for ever for a worker valgrind does not
 *   run).
 * - Open: with FUSE_CAP_NO_OPEN_SUPPORT open is answered ENOSYS once and the
 *   kernel never asks again; otherwise it answers keep_cache.
 * - A change log that no longer reaches the last generation seen (a log
 *   gap): the watcher drops the listing, every live name and every name
 *   with a tombstone.
 * - lock.mdb: the watcher compares it with the mark taken at start
 *   (store_lock_check()) before every poll's transaction; on a change it
 *   logs one line, stops the session (the daemon unmounts and exits 1), and
 *   closes the store only when that is safe (LMDB's close touches the
 *   reader table: not after a truncation).
 */
#ifndef OFFLOADFS_FS_H
#define OFFLOADFS_FS_H

#define FUSE_USE_VERSION 314

#include <errno.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "store/store.h"

/* Seconds the kernel may cache names, attributes and negative lookups. */
#define OFS_CACHE_TIMEOUT 3600.0
/* How often the watcher asks the store what changed (one short read
 * transaction) when no writer wakes it. It bounds how long a write made
 * without the wake-up (a writer that cannot reach the socket) takes to
 * show. */
#define OFS_WATCH_INTERVAL_MS 20u
/* st_blksize reported for entries: the I/O size tools like cat pick. */
#define OFS_BLKSIZE (128u * 1024u)
/* Largest value pushed into the page cache after a write (-o prefetch=).
 * On by default again since the wake-up: the stat through the mount that
 * made an unmount right after a write fail with EBUSY (5 in 300 measured)
 * now ends before the writer's call returns (0 in 300; see Prefetch). */
#define OFS_PREFETCH_DEFAULT (64ull << 20)
/* New versions queued for the prefetcher at most; more are dropped. */
#define OFS_PREFETCH_QUEUE 64u
/* More new versions than this within OFS_PREFETCH_WINDOW_MS is a bulk
 * load: the rest of the window prefetches none of them. */
#define OFS_PREFETCH_BURST 16u
#define OFS_PREFETCH_WINDOW_MS 100u

/* The change watcher (watch.c). Lives inside struct ofs; fields are private
 * to watch.c except where noted. */
struct ofs_watch {
    pthread_t thread;
    int stop_fd;               /* eventfd: wakes the thread's poll() to stop */
    atomic_int stop;           /* set once, by ofs_watch_stop_begin() */
    atomic_int done;           /* set by the thread as it returns */
    atomic_int lock_changed;   /* lock.mdb changed: the thread stopped the
                                  session and itself (ofs_watch_lock_changed) */
    int running;               /* thread was started */
    uint64_t generation;       /* last store generation processed */
    uint64_t burst_start_ms;   /* the prefetch window (OFS_PREFETCH_WINDOW_MS) */
    unsigned burst_count;      /* new versions seen in it */
    unsigned interval_ms;
};

/* Writers answered in one round at most; more wait in the backlog for the
 * next round (a few microseconds later). */
#define OFS_WAKE_BATCH 64u

/* The wake-up socket (wake.c). Lives inside struct ofs; private to wake.c,
 * used from the watcher thread only (and from main.c before it starts and
 * after it ended). */
struct ofs_wake {
    int active;                /* ofs_wake_open() ran and ofs_wake_close() not yet */
    int listen_fd;             /* -1: none */
    int dir_fd;                /* STORE/wake, opened without following links */
    char name[64];             /* our socket's name in it ("": none there) */
    uid_t owner;               /* the store directory's owner */
    uid_t as_uid;              /* whom we act as in STORE/wake: owner if we */
    gid_t as_gid;              /* are root, else ourselves (ofs_as_user) */
    dev_t sock_dev;            /* the file our socket is bound to: only */
    ino_t sock_ino;            /* that is ever removed under our name */
    int held[OFS_WAKE_BATCH];  /* accepted, not answered yet */
    unsigned nheld;
    unsigned long refused;     /* peers of another user closed unanswered */
};

/* The store as the daemon holds it (pin.c). Lives inside struct ofs;
 * private to pin.c except where noted. */
struct ofs_pin {
    int held;                  /* ofs_pin_open() succeeded, ofs_pin_close() not yet */
    int dir_fd;                /* the store directory (O_PATH), for the daemon's life */
    int lock_fd, data_fd;      /* lock.mdb, data.mdb (O_PATH), until released */
    int tmp_fd;                /* the private directory of links LMDB opens */
    char tmp_path[64];         /* its path ("": none) */
    char dir[32];              /* "/proc/self/fd/N" of dir_fd: the store directory
                                  itself, whatever its path leads to now (public) */
    char files[64];            /* the directory to give store_open() (public) */
    uid_t owner;               /* the store directory's owner and group */
    gid_t group;
};

/* One new version for the prefetcher. */
struct ofs_prefetch_item {
    uint64_t version;
    char key[STORE_NAME_MAX + 1];
};

/* The prefetcher (prefetch.c). Lives inside struct ofs; private to
 * prefetch.c. */
struct ofs_prefetch {
    pthread_t thread;
    pthread_mutex_t lock;      /* the queue, stop */
    pthread_cond_t wake;
    struct ofs_prefetch_item queue[OFS_PREFETCH_QUEUE];
    unsigned head, count;      /* ring buffer */
    atomic_int stop;
    atomic_int done;           /* set by the thread as it returns */
    int running;
    char *buf;                 /* one piece of a value being pushed */
};

struct ofs_remote;
struct ofs_rwin;
struct ofs_rlists;
struct remote_conn;
/* Buckets of offloadfs_remote_fetch_seconds (metrics.c: 1 ms to 10 s). */
#define OFS_FETCH_BOUNDS 13u
/* What the handlers count for the metrics (metrics.c, metrics/prom.h):
 * relaxed atomics, added to with ofs_count() and only loaded by a scrape,
 * so counting costs a request one uncontended add and a scrape never
 * makes it wait. Counted whether or not metrics are served. */
struct ofs_counters {
    _Atomic uint64_t reads;           /* read requests answered with data */
    _Atomic uint64_t read_bytes;      /* bytes they returned */
    _Atomic uint64_t evicted_reads;   /* lookups, opens, reads answered ENODATA */
    _Atomic uint64_t missing_lookups; /* lookups answered ENOENT */
    /* The remote tier's fetches (through ofs_metrics_fetch_done()): one
     * per ranged GET of a remote result's bytes, its retries included:
     * remote_read.c's fetch() (a window, a read-ahead window, a direct
     * read) and a lookup's GET of the first OFS_RWIN_FIRST bytes
     * (remote.c; with the tombstone or empty-object HEAD that may follow
     * it in that lookup, one fetch). Listings, and a lookup that could
     * only HEAD (no memory for the bytes), are not fetches. Every fetch
     * is timed into the histogram, failed ones too. */
    _Atomic uint64_t fetches;
    _Atomic uint64_t fetch_errors;    /* fetches that failed: a read or lookup answered EIO */
    _Atomic uint64_t fetch_ns;        /* their total time, nanoseconds */
    _Atomic uint64_t fetch_buckets[OFS_FETCH_BOUNDS + 1]; /* not cumulative */
    /* Listings the remote failed, and HEAD-only lookups it failed; a
     * failed lookup GET is a fetch error only (never both). */
    _Atomic uint64_t lookup_errors;
};

/* Adds N to counter C. */
static inline void ofs_count(_Atomic uint64_t *c, uint64_t n)
{
    atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

struct ofs_metrics_server; /* metrics.c */

/* The metrics endpoint (metrics.c). Lives inside struct ofs; private to
 * metrics.c. Zero-filled: off. */
struct ofs_metrics {
    int bound;                 /* listen_fd is open, and ours */
    int listen_fd;             /* bound before mounting */
    int loopback;              /* bound to a loopback address */
    struct ofs_metrics_server *srv; /* the server, once started */
    char url[320];             /* http://ADDRESS:PORT/metrics, as bound, for the log */
};

/* The daemon state: one per mount, reached from a request through
 * ofs_from_req(). Set up by main.c before the session loop starts; only the
 * atomics change afterwards. */
struct ofs_decode; /* decode.c */

struct ofs {
    store *st;                  /* opened after daemonizing */
    const char *ns;             /* namespace shown by this mount */
    const char *store_path;     /* the store directory's real path */
    struct fuse_session *se;    /* for the watcher's notifications */
    const char *mountpoint;     /* absolute path, for messages */
    int debug;                  /* -d: fuse_log(FUSE_LOG_DEBUG) tracing */
    uid_t uid;                  /* owner reported for every inode */
    gid_t gid;
    double timeout;             /* entry/attr timeout, seconds */
    _Atomic uint64_t root_mtime_ns; /* root's mtime: last change seen */
    uint64_t start_ns;          /* root's ctime: when this daemon started */
    _Atomic int no_open;        /* kernel offered FUSE_CAP_NO_OPEN_SUPPORT */
    struct fuse_conn_info_opts *conn_opts; /* -o max_readahead=... etc. */
    uint64_t prefetch_max;      /* -o prefetch=SIZE; 0: no prefetch */
    store_lockmark lock;        /* lock.mdb as found right after opening st */
    pthread_t loop_thread;      /* runs the session loop: the watcher wakes it */
    struct ofs_watch watch;
    struct ofs_wake wake;
    struct ofs_pin pin;         /* the store directory and files as opened */
    struct ofs_prefetch prefetch;
    struct ofs_remote *remote;  /* the store's remote tier, NULL when none (remote.c) */
    struct ofs_rwin *rwin;      /* read-ahead windows of remote results (remote_read.c) */
    struct ofs_rlists *rlists;  /* the remote's listings (remote_list.c) */
    unsigned remote_list_max;   /* -o remote_list_max=NAMES, 0: OFS_REMOTE_LIST_MAX */
    unsigned remote_list_s;     /* -o remote_list_seconds=S, 0: OFS_REMOTE_LIST_SECONDS */
    unsigned remote_ttl;        /* -o remote_ttl=SECONDS */
    unsigned remote_stall;      /* -o remote_stall=SECONDS, 0: remote.h's default */
    unsigned remote_retries;    /* -o remote_retries=N, 0: the default,
                                   OFS_REMOTE_NO_RETRY: none */
    struct ofs_counters count;
    struct ofs_metrics metrics;
    uint64_t decode_ahead;      /* -o decode_ahead=SIZE; 0: no decoding ahead */
    struct ofs_decode *decode;  /* decode.c's state; NULL when off */
};

/* The daemon state of a request. Never NULL inside a handler. */
static inline struct ofs *ofs_from_req(fuse_req_t req)
{
    return (struct ofs *)fuse_req_userdata(req);
}

/* Answers read request REQ with the SIZE bytes at BUF and counts it as
 * ops.c counts a local read (reads, read_bytes): for reads answered
 * elsewhere (remote_read.c). */
static inline void ofs_reply_read(struct ofs *fs, fuse_req_t req, const char *buf, size_t size)
{
    ofs_count(&fs->count.reads, 1);
    ofs_count(&fs->count.read_bytes, size);
    fuse_reply_buf(req, buf, size);
}

/* Answers read request REQ with ERR, counting ENODATA as an evicted read. */
static inline void ofs_reply_read_err(struct ofs *fs, fuse_req_t req, int err)
{
    if (err == ENODATA)
        ofs_count(&fs->count.evicted_reads, 1);
    fuse_reply_err(req, err);
}

/* ---- mount.c ---------------------------------------------------------- */

/* fuse_session_mount(SE, MOUNTPOINT), and with -o auto_unmount, the socket
 * fusermount3 watches moved below /dev/fuse, so a killed daemon closes it
 * only after the connection is aborted: fusermount3 then finds the mount
 * dead and removes it (mount.c says why the order matters). Returns
 * fuse_session_mount()'s result. */
int ofs_mount(struct fuse_session *se, const char *mountpoint);

/* ---- config.c --------------------------------------------------------- */

/* Chooses the namespace as agentlink does: *NS (-o namespace=, malloc'd,
 * may be NULL) > $OFFLOADFS_NAMESPACE > the "namespace" of the policy file
 * $OFFLOADFS_CONFIG (read with agentlink's al_policy_load(), whenever the
 * variable names one) > "default". Returns 0 with *NS set (malloc'd,
 * yours; unchecked against the namespace rules when it came from -o or the
 * environment), or 1 after printing why on stderr: the policy file was
 * refused (agentlink's message, "; nothing was mounted"), or no memory. */
int ofs_namespace_resolve(char **ns);

/* ---- pin.c ------------------------------------------------------------ */

/* Opens the store directory named GIVEN (as given on the command line) and
 * pins its files, as fs/pin.c says (the privilege model). Run by root: the
 * path is walked without letting the kernel follow a link, and every
 * directory and link on it must belong to root or to the store directory's
 * owner; lock.mdb and data.mdb must be regular files of that owner with one
 * link (a missing lock.mdb is created as the owner); P->files is then a
 * private directory of links to exactly those files. Run by anyone else:
 * the directory is opened as given and P->files is P->dir. Fills ABS
 * (PATH_MAX bytes) with the directory's real path, for messages. A missing
 * data.mdb is not an error here (store_open() says STORE_ENOSTORE).
 * Returns 0, or 1 with the reason (the subject first) in WHY (LEN bytes)
 * and nothing held. On success call ofs_pin_release() once the store is
 * open, and ofs_pin_close() at the end. */
int ofs_pin_open(struct ofs_pin *p, const char *given, char *abs, char *why, size_t len);

/* Removes the private directory of links and closes the files' pins: LMDB
 * holds its own descriptors once the store is open. P->files becomes
 * P->dir. Keeps the directory. Safe to call again. */
void ofs_pin_release(struct ofs_pin *p);

/* ofs_pin_release(), and closes the directory. Safe on a zero-filled pin
 * and to call again. */
void ofs_pin_close(struct ofs_pin *p);

/* ---- startup.c -------------------------------------------------------- */

/* Refuses a store at or inside the mountpoint (the daemon would wait for
 * ever on its own mount): STORE_ABS and MNT_ABS are the real paths of the
 * store directory and the mountpoint, STORE_NAME and MNT their names as given,
 * for the message. Compares device and inode of the mountpoint with the
 * store directory and each of its parents. Returns 0 (fine) or 1 (the
 * reason printed on stderr). */
int ofs_check_store_outside(const char *store_name, const char *store_abs, const char *mnt,
                            const char *mnt_abs);

/* Refuses a mountpoint that already shows an offloadfs mount (type
 * fuse.offloadfs in /proc/self/mountinfo, matched by the device of
 * MNT_ABS), for a daemon started without -o stack. MNT is the name as
 * given. Returns 0 (fine, or the table cannot be read) or 1 (the reason
 * printed on stderr). */
int ofs_check_not_stacked(const char *mnt, const char *mnt_abs);

/* ---- ops.c ------------------------------------------------------------ */

/* The low-level operation table handed to fuse_session_new(). Static
 * storage; never NULL. */
const struct fuse_lowlevel_ops *ofs_ops(void);

/* Converts a store result (0, a positive errno, or a STORE_E* code) into the
 * errno a FUSE reply carries: 0 stays 0, errno values pass through,
 * STORE_ENOTFOUND -> ENOENT, STORE_EEVICTED and STORE_EGONE -> ENODATA,
 * STORE_ENAME_LONG -> ENAMETOOLONG, other name rules -> ENOENT (such a name
 * can never have been written), STORE_ERDONLY -> EROFS, STORE_EREADERS ->
 * EAGAIN, STORE_EFULL -> ENOSPC, STORE_ETOOBIG -> EFBIG, STORE_ELIMITS ->
 * EINVAL, and anything else (corruption, LMDB failures) -> EIO.
 * The only place store codes become errno values. */
int ofs_errno(int store_rc);

/* ---- watch.c ---------------------------------------------------------- */

/* Starts the watcher thread for FS (fs->st, fs->se, fs->lock and
 * fs->loop_thread must be set; ofs_wake_open() called, whatever it
 * returned). Every OFS_WATCH_INTERVAL_MS, and at once when a writer
 * connects to the wake-up socket, it checks lock.mdb against fs->lock, then
 * reads the store's change log, invalidates in the kernel exactly the
 * names and inodes that changed in fs->ns, and answers the writers it
 * accepted before (ofs_wake_answer). The thread closes the wake-up socket
 * as it ends. When lock.mdb has changed it makes no LMDB call: it logs what
 * happened, ends the session loop (fuse_session_exit(), and SIGTERM to
 * fs->loop_thread to wake it) and returns. Returns 0 or an errno value
 * (the thread could not be made). */
int ofs_watch_start(struct ofs *fs);

/* 1 when the watcher stopped the session because lock.mdb changed under
 * the daemon: the store must not be used any more, and closed only when
 * store_lock_closable() says so. */
int ofs_watch_lock_changed(struct ofs *fs);

/* Tells the watcher to stop, without waiting. */
void ofs_watch_stop_begin(struct ofs *fs);

/* 1 once the watcher has stopped (or never started): joining it cannot
 * block any more. */
int ofs_watch_done(struct ofs *fs);

/* Joins the watcher after ofs_watch_stop_begin(); safe to call when it never
 * started. */
void ofs_watch_stop(struct ofs *fs);

/* ---- wake.c ----------------------------------------------------------- */

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

/* ---- remote.c --------------------------------------------------------- */

/* Inodes of remote-only results start here (local ones are store versions,
 * far below); see remote.c. */
#define OFS_REMOTE_INO_BASE (UINT64_C(1) << 62)
#define OFS_REMOTE_NO_RETRY 0xffffffffu /* = REMOTE_NO_RETRY (remote.h) */
/* Seconds a remote answer (a name found or not) is reused, by default. */
#define OFS_REMOTE_TTL_DEFAULT 2u

static inline int ofs_remote_ino(fuse_ino_t ino)
{
    return (uint64_t)ino >= OFS_REMOTE_INO_BASE;
}

/* Before mounting: when the store STORE_ABS (opened through FILES: see
 * ofs_pin_open()) names a remote, checks its
 * configuration and access once and says on stderr what is wrong. Returns
 * 1 (nothing may be mounted) when the configuration is unusable (no
 * credentials, a bad URL or profile); 0 otherwise, also after a warning
 * for a refused access, a missing bucket or a remote that does not answer
 * (the mount serves local results and retries the remote per request). */
int ofs_remote_probe(const char *files, const char *store_abs);

/* After fs->st is open: sets fs->remote when the store names a remote (NULL
 * when it names none). Returns 0, or an errno value after logging why
 * (the mount then runs without its remote). */
int ofs_remote_open(struct ofs *fs);

/* Releases fs->remote (NULL is fine); after the session loop ended. */
void ofs_remote_close(struct ofs *fs);

/* Looks KEY up on the remote (fs->remote set): 0 and *E (its inode in
 * e->version, at or above OFS_REMOTE_INO_BASE) for a result there;
 * ENOENT when the remote has none; ENODATA for a tombstone (removed on
 * some host); EIO (logged) when the remote fails within its bound; ENOMEM.
 * An answer younger than fs->remote_ttl seconds is reused. */
int ofs_remote_lookup(struct ofs *fs, const char *key, store_entry *e);

/* The entry of remote inode INO into *E (may be NULL): 0, or ENODATA when
 * this mount does not know INO. */
int ofs_remote_entry(struct ofs *fs, fuse_ino_t ino, store_entry *e);

/* What remote inode INO is: its key (STORE_NAME_MAX + 1 bytes), its
 * object's ETag (ETAG_CAP bytes) and length. 0, or ENODATA when this mount
 * does not know INO. */
int ofs_remote_slot(struct ofs *fs, fuse_ino_t ino, char *key, char *etag, size_t etag_cap,
                    uint64_t *length);

/* This thread's remote connection (made on first use), or NULL without a
 * remote or memory. */
struct remote_conn *ofs_remote_conn(struct ofs *fs);

/* The mount's tier (tier.h), NULL without a remote. */
struct tier *ofs_remote_tier(struct ofs *fs);

/* What to log for failure RC of the last operation on C (may be NULL):
 * C's message (escaped: remote.h), or RC's description when it has none.
 * Valid until the next operation on C. Never NULL. */
const char *ofs_remote_why(const struct remote_conn *c, int rc);

/* ---- remote_read.c ---------------------------------------------------- */

/* Read-ahead windows of remote results: OFS_RWIN_COUNT buffers of at most
 * OFS_RWIN_MAX bytes each, shared by the mount. A read not covered by a
 * window fetches one (a ranged GET for that object version), starting at
 * OFS_RWIN_MIN bytes and doubling while reads go on where the last window
 * ended, so a sequential read of a large result costs few requests. Reads
 * that a window being fetched will cover wait for it instead of asking
 * again. */
#define OFS_RWIN_COUNT 4u
#define OFS_RWIN_MIN (256u * 1024u)
#define OFS_RWIN_MAX (8u * 1024u * 1024u)

/* What a lookup of a remote name fetches with it (tier_lookup_first()),
 * kept as the inode's first window: a lookup then a read of a result this
 * small is one GET, not a HEAD and a GET. The price: each lookup (ls -l
 * looks every remote name up) moves up to this many bytes. */
#define OFS_RWIN_FIRST (128u * 1024u)

/* Makes / frees fs->rwin (main.c, around the session). ENOMEM or 0. */
int ofs_rwin_init(struct ofs *fs);
void ofs_rwin_free(struct ofs *fs);

/* Keeps BUF, bytes [0, LEN) of remote inode INO fetched by its lookup, as
 * a window of INO when one is free (a copy; BUF stays the caller's); else,
 * or when a window of INO already holds them, does nothing. */
void ofs_rwin_offer(struct ofs *fs, fuse_ino_t ino, const void *buf, uint64_t len);

/* Answers a read of remote inode INO (exactly one reply): the bytes of
 * that object version, from a window or a ranged GET; ENODATA when the
 * version is gone from the remote, EIO (logged) when the remote fails. */
void ofs_remote_read(struct ofs *fs, fuse_req_t req, fuse_ino_t ino, size_t size, off_t off);

/* ---- remote_list.c ---------------------------------------------------- */

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
 * reference (remote_list.c). */
struct ofs_rlist;

/* Makes / frees fs->rlists (ofs_remote_open() and ofs_remote_close() call
 * them). ENOMEM or 0. */
int ofs_rlists_init(struct ofs *fs);
void ofs_rlists_free(struct ofs *fs);

/* Called by ofs_remote_list() per name; nonzero stops the listing (and is
 * returned). */
typedef int (*ofs_remote_name_fn)(const char *key, void *ctx);

/* Calls FN for each result name of the namespace the remote holds that
 * sorts after AFTER (NULL: all) and is not live in the local store, in
 * byte order, from the snapshot *HELD: a directory handle's, taken by its
 * first call (*HELD NULL) and kept until ofs_remote_list_drop(). A
 * snapshot is reused between handles for remote_ttl seconds; a new one is
 * fetched by the mount's lister thread, waited for at most
 * OFS_REMOTE_LIST_WAIT seconds (else the last one, or none, is used).
 * When the remote fails or a bound is passed (logged), the last snapshot
 * or none is used and the remote is not listed again for 10 s. REQ is the
 * readdir request: when the kernel interrupts it (its caller got a
 * signal) the wait ends. Returns 0, FN's value, or EINTR (REQ
 * interrupted). */
int ofs_remote_list(struct ofs *fs, fuse_req_t req, struct ofs_rlist **held, const char *after,
                    ofs_remote_name_fn fn, void *ctx);

/* Drops a snapshot a directory handle held (NULL is fine). */
void ofs_remote_list_drop(struct ofs *fs, struct ofs_rlist *l);
/* ---- metrics.c -------------------------------------------------------- */

/* -o metrics=ARG: parses ARG as HOST:PORT (HOST required: a dotted quad,
 * an IPv6 address in brackets, or localhost for 127.0.0.1; PORT 0 picks a
 * free port) and binds a listening TCP socket there, into M, recording
 * the address bound (M->url). Run before mounting. Returns 0; or EINVAL
 * (ARG malformed, HOST in another form: a usage error) or the errno value
 * of socket(), bind() or listen() (EADDRINUSE, EADDRNOTAVAIL, EACCES),
 * after printing why on stderr. Release with ofs_metrics_stop(). */
int ofs_metrics_listen(struct ofs_metrics *m, const char *arg);

/* Starts serving GET /metrics on the socket ofs_metrics_listen() bound
 * (nothing to do when it did not run): one thread of metrics.c's, all
 * signals blocked in it, runs libmicrohttpd. fs->st must be open. Logs the
 * URL (FUSE_LOG_INFO), and a warning when the address is not a loopback
 * one. Returns 0; or EIO (the server could not start), ENOMEM, or
 * pthread_create()'s or eventfd()'s errno value. The socket is the
 * server's from the call on, even when it fails. */
int ofs_metrics_start(struct ofs *fs);

/* Stops the server (waiting for a scrape under way) and closes the
 * socket. Safe to call twice, and when nothing was bound or started. */
void ofs_metrics_stop(struct ofs *fs);

/* The monotonic clock in nanoseconds: the START of ofs_metrics_fetch_done(). */
uint64_t ofs_metrics_clock(void);

/* Counts one fetch of a remote result's bytes (a read's GET, or a
 * lookup's GET of the first bytes) that began at START
 * (ofs_metrics_clock()) and has just ended: fetches, its time into
 * offloadfs_remote_fetch_seconds, and fetch_errors when FAILED (the remote
 * failed it: the read or lookup is answered EIO). A version or name found
 * gone (ENODATA, ENOENT) is a fetch, not an error. Relaxed atomic adds
 * only: never blocks. */
void ofs_metrics_fetch_done(struct ofs *fs, uint64_t start, int failed);

/* ---- asuser.c --------------------------------------------------------- */

/* Runs FN(ARG) on a new thread of its own and waits for it. That thread
 * has umask MASK, its own (unshare(CLONE_FS); where a seccomp filter
 * refuses that, the process's umask applies unchanged) and, when we are
 * root and UID is not 0, acts on files as UID:GID (setfsuid, setfsgid)
 * with no supplementary groups and none of root's file capabilities:
 * whatever FN creates is UID's, and FN can do nothing UID could not. The
 * calling thread's identity and umask never change; FN must not call
 * umask(). Not root, or UID 0: FN runs with our own identity.
 * Returns FN's result, or the errno value of a thread that could not be
 * started (EAGAIN) or could not take the identity (EPERM). */
int ofs_as_user(uid_t uid, gid_t gid, mode_t mask, int (*fn)(void *), void *arg);

/* ---- prefetch.c ------------------------------------------------------- */

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

/* ---- decode.c -------------------------------------------------------- */

/* Bytes decoded ahead of a sequential reader of a compressed result
 * (-o decode_ahead=SIZE), by default. */
#define OFS_DECODE_AHEAD_DEFAULT (1ull << 20)

/* Starts the decoder (a worker thread and its table of streams, memory on
 * first use) for FS when fs->decode_ahead is not 0; fs->st must be open.
 * Returns 0 (fs->decode set, or NULL when off) or an errno value. */
int ofs_decode_start(struct ofs *fs);

/* Serves a read of LEN bytes at OFF of VERSION (an inode of FS) from
 * decoded frames when VERSION is compressed: hands FN the bytes as pieces
 * of the decoder's buffers (valid during the call only, all of VERSION)
 * and sets *SERVED. Leaves *SERVED 0 and returns 0 when the read is for the
 * plain way (store_read_iov()): the decoder is off, the value is stored
 * raw or is gone (the plain way tells which error), OFF is at or past the
 * end, the read spans more frames than a stream holds, or its frames are
 * held by other reads. A sequential read (from 0, or where the last read
 * of VERSION ended) also sets the worker decoding up to
 * fs->decode_ahead bytes past its end; any other read stops that.
 * Returns (with *SERVED 1) 0, what FN returned, or a store code: STORE_EGONE
 * (VERSION replaced, evicted or removed), STORE_ECORRUPT, LMDB failures,
 * ENOMEM. Safe from any number of threads. */
int ofs_decode_read(struct ofs *fs, uint64_t version, uint64_t off, size_t len,
                    store_iov_fn fn, void *ctx, int *served);

/* Stops and joins the worker and frees the decoder; safe when it never
 * started. Call after the session loop has ended (no read in flight). */
void ofs_decode_stop(struct ofs *fs);

#endif
